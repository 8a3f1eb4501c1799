// A listening TCP socket bound with SO_REUSEPORT, so each event-loop thread owns
// its own and the kernel spreads connections between them. The listener accepts
// in a loop until EAGAIN and hands each new non-blocking fd to on_accept. On
// EMFILE/ENFILE it pauses accepting for a moment instead of spinning.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "net/loop.hpp"
#include "net/peer.hpp"

namespace kiln::net {

struct ListenResult {
    int fd = -1;
    std::string error;  // set when fd < 0
};

// Creates a bound, listening, non-blocking socket (IPv4 or IPv6 literal host).
ListenResult listen_tcp(const std::string& host, uint16_t port, int backlog, bool reuse_port);
// Why host:port cannot be bound without SO_REUSEPORT (another socket listens there),
// or empty. The probe binds and never listens, so no connection can land on it (a
// probe that listened took connections in its moment and reset them as it closed).
std::string tcp_port_taken(const std::string& host, uint16_t port);
// The same on a unix-domain stream socket; a stale socket file at `path` (one no
// process listens on) is replaced, any other file is an error.
ListenResult listen_unix(const std::string& path, int backlog);

class Listener final : public IoHandler {
public:
    using AcceptFn = std::function<void(int fd, const PeerAddress& peer)>;
    // Takes ownership of listen_fd.
    Listener(Loop& loop, int listen_fd, AcceptFn on_accept);
    ~Listener();

    // Stops accepting and closes the socket (graceful stop).
    void close();
    // Stops/starts watching the socket (connections wait in the kernel's backlog).
    void pause();
    void resume();
    bool open() const { return fd_ >= 0; }

    void on_io(uint32_t events) override;

private:
    void accept_all();
    Loop& loop_;
    int fd_;
    AcceptFn on_accept_;
    Timer pause_;
    bool paused_ = false;
};

}  // namespace kiln::net
