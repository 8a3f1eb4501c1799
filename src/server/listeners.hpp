// The listening sockets: bound once by the supervisor (or a lone server process)
// before any worker starts, and inherited by every worker (KILN_WORKER_FDS).
// A TCP address gets one SO_REUSEPORT socket per event loop (the kernel spreads
// connections over the loops); a unix socket is one socket every loop shares.
// Prefork: one socket per address that every worker accepts from, so any free
// worker takes the next connection.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <kiln/server.hpp>

#include "server/config.hpp"      // ListenFlags
#include "server/supervisor.hpp"  // FdGroups

namespace kiln::server {

struct Bound {
    struct Address {
        bool is_unix;
        std::string host;  // the socket's path for a unix socket
        uint16_t port;     // the one bound (a port 0 asked for one)
    };
    FdGroups fds;                    // per event loop, its sockets
    std::vector<Address> addresses;  // the first is --host/--port
    std::string where;               // "http://127.0.0.1:8080, unix:/run/app.sock", for the log
    void remove_unix_files() const;  // at stop
};

// Binds every address of `o` for `loops` event loops (reuseport: one TCP socket per
// loop, else one for all). "" or why not, every socket closed again then (socket
// files left alone: the one in the way may be another server's).
std::string bind_listeners(const ServerOptions& o, size_t loops, bool reuseport, Bound* out);

// A unix-socket listener without the PROXY protocol names no client address: the
// per-address limits (limits.rate, limits.max_connections_per_address) do not apply
// to its clients. Logged once, at the node's start, when either is on.
void warn_of_unlimited_listeners(const ServerOptions& o, const Bound& b);

// What each listening socket speaks: host:port first, then also_listen, the order
// bind_listeners gives every group. A certificate with no listener marked tls makes
// host:port speak TLS.
std::vector<ListenFlags> listener_flags(const ServerOptions& o);

// A listener marked tls with no certificate to present (tls.cert, tls.certificates
// and tls.self_signed all unset): the error naming it, else "". Checked at the start
// and by every worker, so such a reload fails instead of serving plain HTTP there.
std::string check_tls_listeners(const ServerOptions& o);

// ":PORT" of the first TLS listener, for https:// links; "" for 443 or none known.
std::string https_port(const ServerOptions& o);

// A worker: the sockets its supervisor passed (empty if this process is none), and
// the pipe to say it serves. Both close-on-exec from here on.
FdGroups inherited_listeners(int* ready_fd);

// A worker: "" if the sockets it was passed are the ones `o` lists, in its order
// (each listener's flags are read from `o`, by position). After a reload that
// added, removed or moved a listener, why not: the sockets are bound once, by the
// supervisor, so a changed list waits for a restart, and the reload fails.
std::string check_inherited(const ServerOptions& o, const FdGroups& fds);

}  // namespace kiln::server
