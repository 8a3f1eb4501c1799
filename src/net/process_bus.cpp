#include "net/process_bus.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstddef>
#include <cstring>
#include <vector>

namespace kiln::net {
namespace {

socklen_t address(uint64_t node, unsigned index, sockaddr_un* a) {
    std::memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    // Abstract: a leading NUL, then the name (not NUL-terminated; its length counts).
    int n = std::snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "kiln-bus/%llu/%u",
                          static_cast<unsigned long long>(node), index);
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + static_cast<size_t>(n));
}

}  // namespace

std::unique_ptr<ProcessBus> ProcessBus::open(uint64_t node, unsigned index, unsigned slots, std::string* err) {
    int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        *err = std::string("process bus: socket: ") + std::strerror(errno);
        return nullptr;
    }
    sockaddr_un a;
    socklen_t len = address(node, index, &a);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), len) != 0) {
        *err = std::string("process bus: bind slot ") + std::to_string(index) + ": " + std::strerror(errno);
        ::close(fd);
        return nullptr;
    }
    int on = 1;  // senders' credentials with each datagram: only our own user's count
    ::setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
    int want = 4 << 20;  // as much as the kernel allows an unprivileged process
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof want);
    int sndbuf = 0;
    socklen_t sl = sizeof sndbuf;
    ::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl);
    int stop = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (stop < 0) {
        *err = std::string("process bus: eventfd: ") + std::strerror(errno);
        ::close(fd);
        return nullptr;
    }
    // A datagram's bytes plus the kernel's per-skb overhead must fit the send buffer.
    size_t max = sndbuf > 8192 ? static_cast<size_t>(sndbuf) / 2 - 4096 : 1024;
    return std::unique_ptr<ProcessBus>(new ProcessBus(fd, stop, node, index, slots, max));
}

ProcessBus::ProcessBus(int fd, int stop_fd, uint64_t node, unsigned index, unsigned slots, size_t max_datagram)
    : fd_(fd), stop_fd_(stop_fd), node_(node), index_(index), slots_(slots), max_datagram_(max_datagram), uid_(::getuid()) {}

ProcessBus::~ProcessBus() {
    if (thread_.joinable()) {
        uint64_t one = 1;
        ssize_t ignored = ::write(stop_fd_, &one, sizeof one);
        (void)ignored;
        thread_.join();
    }
    ::close(fd_);
    ::close(stop_fd_);
}

bool ProcessBus::send_others(std::string_view datagram) {
    if (datagram.size() > max_datagram_) return false;
    for (unsigned i = 0; i < slots_; ++i) {
        if (i == index_) continue;
        sockaddr_un a;
        socklen_t len = address(node_, i, &a);
        for (;;) {
            ssize_t n = ::sendto(fd_, datagram.data(), datagram.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                                 reinterpret_cast<sockaddr*>(&a), len);
            if (n >= 0) break;
            if (errno == EINTR) continue;
            // Nobody bound there (ECONNREFUSED): a free slot. A full queue (EAGAIN): dropped.
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) dropped_.fetch_add(1, std::memory_order_relaxed);
            break;
        }
    }
    return true;
}

void ProcessBus::start(std::function<void(std::string_view)> fn) {
    thread_ = std::thread([this, fn = std::move(fn)] { receive_loop(fn); });
}

void ProcessBus::receive_loop(std::function<void(std::string_view)> fn) {
    std::vector<char> buf(max_datagram_ + 1);
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    for (;;) {
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (fds[1].revents) return;
        for (;;) {
            iovec iov{buf.data(), buf.size()};
            alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
            msghdr m{};
            m.msg_iov = &iov;
            m.msg_iovlen = 1;
            m.msg_control = control;
            m.msg_controllen = sizeof control;
            ssize_t n = ::recvmsg(fd_, &m, MSG_DONTWAIT);
            if (n < 0) break;  // EAGAIN: drained
            cmsghdr* c = CMSG_FIRSTHDR(&m);
            if (!c || c->cmsg_type != SCM_CREDENTIALS || (m.msg_flags & MSG_TRUNC)) continue;
            ucred cred;
            std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
            if (cred.uid != uid_) continue;  // another user's process: not one of ours
            fn(std::string_view(buf.data(), static_cast<size_t>(n)));
        }
    }
}

}  // namespace kiln::net
