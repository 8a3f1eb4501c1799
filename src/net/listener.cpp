#include "net/listener.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/log.hpp"

namespace kiln::net {
namespace {

constexpr uint32_t kAcceptPauseMs = 100;

// errno's reason, then the socket closed.
ListenResult failed(int fd, const std::string& host, uint16_t port) {
    std::string err = "cannot listen on " + host + ":" + std::to_string(port) + ": " + std::strerror(errno);
    ::close(fd);
    return {-1, err};
}

// A TCP socket bound to host:port, not listening yet.
ListenResult bind_tcp(const std::string& host, uint16_t port, bool reuse_port) {
    sockaddr_storage ss{};
    socklen_t len;
    int family;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
        family = v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        len = sizeof *v4;
    } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
        family = v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        len = sizeof *v6;
    } else {
        return {-1, "not an IPv4 or IPv6 address: " + host};
    }
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return {-1, std::string("socket: ") + std::strerror(errno)};
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (reuse_port) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) return failed(fd, host, port);
    return {fd, {}};
}

}  // namespace

ListenResult listen_tcp(const std::string& host, uint16_t port, int backlog, bool reuse_port) {
    ListenResult r = bind_tcp(host, port, reuse_port);
    if (r.fd < 0) return r;
    int one = 1;  // accepted sockets inherit it: no setsockopt per connection
    setsockopt(r.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (listen(r.fd, backlog) != 0) return failed(r.fd, host, port);
    return r;
}

std::string tcp_port_taken(const std::string& host, uint16_t port) {
    ListenResult r = bind_tcp(host, port, false);
    if (r.fd < 0) return r.error;
    ::close(r.fd);
    return {};
}

ListenResult listen_unix(const std::string& path, int backlog) {
    sockaddr_un sa{};
    if (path.empty() || path.size() >= sizeof sa.sun_path) return {-1, "unix socket path empty or too long: " + path};
    sa.sun_family = AF_UNIX;
    std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
    struct stat st;
    if (lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) return {-1, "cannot listen on unix:" + path + ": a file that is not a socket is there"};
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool live = probe >= 0 && connect(probe, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
        if (probe >= 0) ::close(probe);
        if (live) return {-1, "cannot listen on unix:" + path + ": another server is listening there"};
        ::unlink(path.c_str());  // stale: left by a server that did not stop cleanly
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return {-1, std::string("socket: ") + std::strerror(errno)};
    if (bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || listen(fd, backlog) != 0) {
        std::string err = "cannot listen on unix:" + path + ": " + std::strerror(errno);
        ::close(fd);
        return {-1, err};
    }
    return {fd, {}};
}

Listener::Listener(Loop& loop, int listen_fd, AcceptFn on_accept)
    : loop_(loop), fd_(listen_fd), on_accept_(std::move(on_accept)) {
    pause_.owner = this;
    pause_.fire = [](Timer* t) {
        auto* self = static_cast<Listener*>(t->owner);
        if (self->fd_ < 0 || self->paused_) return;
        self->loop_.add(self->fd_, EPOLLIN, self);
        self->accept_all();
    };
    loop_.add(fd_, EPOLLIN, this);  // level-triggered: a backlog is never forgotten
}

Listener::~Listener() { close(); }

void Listener::close() {
    pause_.disarm();
    if (fd_ < 0) return;
    if (!paused_) loop_.remove(fd_);
    ::close(fd_);
    fd_ = -1;
}

void Listener::pause() {
    if (fd_ < 0 || paused_) return;
    paused_ = true;
    pause_.disarm();
    loop_.remove(fd_);
}

void Listener::resume() {
    if (fd_ < 0 || !paused_) return;
    paused_ = false;
    loop_.add(fd_, EPOLLIN, this);
    accept_all();
}

void Listener::on_io(uint32_t) { accept_all(); }

void Listener::accept_all() {
    // Bounded per wake-up so one busy listener cannot starve the loop's connections.
    for (int i = 0; i < 256 && fd_ >= 0 && !paused_; ++i) {
        sockaddr_storage ss;
        socklen_t len = sizeof ss;
        int cfd = accept4(fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd >= 0) {
            on_accept_(cfd, PeerAddress::from(reinterpret_cast<sockaddr*>(&ss)));
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            util::log(util::LogLevel::Error, "accept: %s; pausing accepts for %u ms", std::strerror(errno),
                      kAcceptPauseMs);
            loop_.remove(fd_);
            loop_.timers(kAcceptPauseMs).arm(pause_, loop_.now_ms());
            return;
        }
        util::log(util::LogLevel::Error, "accept: %s", std::strerror(errno));
        return;
    }
}

}  // namespace kiln::net
