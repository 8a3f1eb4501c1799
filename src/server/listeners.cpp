#include "server/listeners.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "net/listener.hpp"
#include "server/config.hpp"
#include "server/tls_setup.hpp"
#include "util/log.hpp"

namespace kiln::server {
namespace {

uint16_t bound_port(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
    if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
    return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

// SO_REUSEPORT would let us silently share a port with another server already on
// it; a plain bind first proves the port is free.
bool port_is_free(const ServerOptions& o, std::string* err) {
    *err = net::tcp_port_taken(o.host, o.port);
    return err->empty();
}

// Whether the socket fd is the listener `a` names (for an IP literal, its address
// too; a name such as localhost is taken on its port alone).
bool same_listener(int fd, const Bound::Address& a) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return false;
    if (a.is_unix)
        return ss.ss_family == AF_UNIX && std::string_view(reinterpret_cast<const sockaddr_un*>(&ss)->sun_path) == a.host;
    if (a.port != 0 && bound_port(fd) != a.port) return false;
    in_addr v4{};
    in6_addr v6{};
    bool literal4 = inet_pton(AF_INET, a.host.c_str(), &v4) == 1;
    bool literal6 = inet_pton(AF_INET6, a.host.c_str(), &v6) == 1;
    if (ss.ss_family == AF_INET)
        return !literal6 && (!literal4 || v4.s_addr == reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr.s_addr);
    if (ss.ss_family == AF_INET6)
        return !literal4 && (!literal6 || std::memcmp(&v6, &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr,
                                                      sizeof v6) == 0);
    return false;
}

std::vector<Bound::Address> addresses_of(const ServerOptions& opts) {
    std::vector<Bound::Address> out{{false, opts.host, opts.port}};
    for (const std::string& text : opts.also_listen) {
        Bound::Address a{text.starts_with("unix:"), {}, 0};
        parse_listen(text, &a.host, &a.port);  // validated by the flag/config parser
        out.push_back(a);
    }
    return out;
}

// As the log names it: unix:PATH, HOST:PORT, [V6]:PORT.
std::string name_of(const Bound::Address& a) {
    if (a.is_unix) return "unix:" + a.host;
    bool v6 = a.host.find(':') != std::string::npos;
    return (v6 ? "[" + a.host + "]" : a.host) + ":" + std::to_string(a.port);
}

}  // namespace

std::string check_inherited(const ServerOptions& o, const FdGroups& fds) {
    std::vector<Bound::Address> want = addresses_of(o);
    std::string restart = ": the listening sockets are bound once, when the node starts; restart it to change them";
    for (const auto& group : fds) {
        if (group.size() != want.size())
            return "the configuration lists " + std::to_string(want.size()) + " listener(s) (listen), the node " +
                   "bound " + std::to_string(group.size()) + restart;
        for (size_t i = 0; i < want.size(); ++i)
            if (!same_listener(group[i], want[i]))
                return "listener " + std::to_string(i + 1) + " (" + name_of(want[i]) +
                       ") is not the socket the node bound in its place" + restart;
    }
    return {};
}

std::string bind_listeners(const ServerOptions& opts, size_t loops, bool reuseport, Bound* out) {
    out->fds.assign(loops, {});
    out->addresses = addresses_of(opts);
    std::string err;
    std::vector<ListenFlags> flags = listener_flags(opts);
    for (size_t ai = 0; ai < out->addresses.size(); ++ai) {
        Bound::Address& a = out->addresses[ai];
        std::string scheme = ai < flags.size() && flags[ai].tls ? "https://" : "http://";
        if (a.is_unix) {
            net::ListenResult l = net::listen_unix(a.host, opts.backlog);
            if (l.fd < 0) err = l.error;
            else for (auto& g : out->fds) g.push_back(l.fd);
            out->where += (out->where.empty() ? "" : ", ") + name_of(a) + (scheme == "https://" ? " (tls)" : "");
        } else {
            ServerOptions probe = opts;
            probe.host = a.host;
            probe.port = a.port;
            if (a.port != 0) port_is_free(probe, &err);
            for (size_t i = 0; i < loops && err.empty(); ++i) {
                net::ListenResult l = net::listen_tcp(a.host, a.port, opts.backlog, reuseport);
                if (l.fd < 0) {
                    err = l.error;
                    break;
                }
                if (a.port == 0) a.port = bound_port(l.fd);  // the others join the picked port
                out->fds[i].push_back(l.fd);
            }
            out->where += (out->where.empty() ? scheme : ", " + scheme) + name_of(a);
        }
        if (!err.empty()) {  // a socket file in the way is not ours to remove: the caller stops
            close_fd_groups(out->fds);
            return err;
        }
    }
    return {};
}

std::vector<ListenFlags> listener_flags(const ServerOptions& o) {
    std::vector<ListenFlags> out{{o.proxy_protocol, o.tls_listener}};
    for (const std::string& text : o.also_listen) {
        std::string host;
        uint16_t port;
        ListenFlags f;
        parse_listen(text, &host, &port, &f);  // validated by the flag/config parser
        out.push_back(f);
    }
    bool marked = std::any_of(out.begin(), out.end(), [](const ListenFlags& f) { return f.tls; });
    if (!marked && tls_configured(o)) out.front().tls = true;
    return out;
}

void warn_of_unlimited_listeners(const ServerOptions& o, const Bound& b) {
    if (o.rate <= 0 && o.max_connections_per_address == 0) return;
    std::vector<ListenFlags> flags = listener_flags(o);
    for (size_t i = 0; i < b.addresses.size() && i < flags.size(); ++i)
        if (b.addresses[i].is_unix && !flags[i].proxy_protocol)
            util::log(util::LogLevel::Warn,
                      "listener unix:%s names no client address: limits.rate and "
                      "limits.max_connections_per_address do not apply to its clients (behind a balancer, have it "
                      "send the PROXY protocol and add proxy_protocol to the listener)",
                      b.addresses[i].host.c_str());
}

std::string check_tls_listeners(const ServerOptions& o) {
    if (tls_configured(o)) return {};
    std::vector<ListenFlags> flags = listener_flags(o);
    std::vector<Bound::Address> addresses = addresses_of(o);
    for (size_t i = 0; i < flags.size() && i < addresses.size(); ++i) {
        if (!flags[i].tls) continue;
        return "listener '" + name_of(addresses[i]) + "' is marked tls, but no certificate is configured "
               "(tls.cert, tls.certificates or tls.self_signed)";
    }
    return {};
}

std::string https_port(const ServerOptions& o) {
    std::vector<ListenFlags> flags = listener_flags(o);
    uint16_t port = 0;
    if (flags[0].tls) {
        port = o.port;
    } else {
        for (size_t i = 0; i < o.also_listen.size() && port == 0; ++i) {
            std::string host;
            uint16_t p = 0;
            if (flags[i + 1].tls && !o.also_listen[i].starts_with("unix:")) parse_listen(o.also_listen[i], &host, &p);
            port = p;
        }
    }
    return port == 0 || port == 443 ? std::string() : ":" + std::to_string(port);
}

void Bound::remove_unix_files() const {
    for (const Address& a : addresses)
        if (a.is_unix) ::unlink(a.host.c_str());
}

// Listening sockets a supervisor passed to this worker process, if it is one.
FdGroups inherited_listeners(int* ready_fd) {
    const char* list = std::getenv(kEnvWorkerFds);
    if (!list) return {};
    FdGroups groups = parse_fd_groups(list);
    const char* ready = std::getenv(kEnvReadyFd);
    *ready_fd = ready ? std::atoi(ready) : -1;
    // Ours alone: a process a handler starts must not inherit a listening socket.
    for (const auto& g : groups)
        for (int fd : g) fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (*ready_fd >= 0) fcntl(*ready_fd, F_SETFD, FD_CLOEXEC);
    unsetenv(kEnvWorkerFds);  // not for the app's own child processes
    unsetenv(kEnvReadyFd);
    return groups;
}

}  // namespace kiln::server
