// Client connection (see the header).
#include "bench/connection.hpp"

#include <fcntl.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kiln::bench {

Connection::Connection() : buf_(new char[kReadBufferBytes]) {}

Connection::~Connection() { close(); }

Connection::Io Connection::open(const sockaddr_in& addr, int epfd, void* tag) {
    close();
    epfd_ = epfd;
    tag_ = tag;
    begin_ = end_ = 0;
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
        error_ = errno;
        return Io::Error;
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int rc = ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    if (rc != 0 && errno != EINPROGRESS) {
        error_ = errno;
        close();
        return Io::Error;
    }
    connecting_ = rc != 0;
    want_write_ = connecting_;
    epoll_event ev{};
    ev.events = EPOLLIN | (connecting_ ? EPOLLOUT : 0u);
    ev.data.ptr = tag_;
    if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, fd_, &ev) != 0) {
        error_ = errno;
        close();
        return Io::Error;
    }
    return connecting_ ? Io::Blocked : Io::Done;
}

Connection::Io Connection::finish_connect() {
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err == EINPROGRESS || err == EALREADY) return Io::Blocked;
    if (err != 0) {
        error_ = err;
        return Io::Error;
    }
    connecting_ = false;
    set_events(false);
    return Io::Done;
}

void Connection::close() {
    if (fd_ >= 0) ::close(fd_);  // also leaves the epoll set
    fd_ = -1;
    connecting_ = false;
    want_write_ = false;
    iov_left_ = 0;
    iov_index_ = iov_count_ = 0;
}

void Connection::set_events(bool want_write) {
    if (want_write == want_write_ || fd_ < 0) return;
    epoll_event ev{};
    ev.events = EPOLLIN | (want_write ? EPOLLOUT : 0u);
    ev.data.ptr = tag_;
    ::epoll_ctl(epfd_, EPOLL_CTL_MOD, fd_, &ev);
    want_write_ = want_write;
}

Connection::Io Connection::write(const iovec* iov, int count) {
    iov_count_ = count;
    iov_index_ = 0;
    iov_left_ = 0;
    for (int i = 0; i < count; ++i) {
        iov_[i] = iov[i];
        iov_left_ += iov[i].iov_len;
    }
    return write_more();
}

Connection::Io Connection::write_more() {
    while (iov_left_ > 0) {
        msghdr msg{};
        msg.msg_iov = iov_ + iov_index_;
        msg.msg_iovlen = static_cast<size_t>(iov_count_ - iov_index_);
        ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                set_events(true);
                return Io::Blocked;
            }
            error_ = errno;
            return Io::Error;
        }
        size_t sent = static_cast<size_t>(n);
        iov_left_ -= sent;
        while (sent > 0 && iov_index_ < iov_count_) {
            iovec& v = iov_[iov_index_];
            if (sent >= v.iov_len) {
                sent -= v.iov_len;
                ++iov_index_;
            } else {
                v.iov_base = static_cast<char*>(v.iov_base) + sent;
                v.iov_len -= sent;
                sent = 0;
            }
        }
    }
    set_events(false);
    return Io::Done;
}

long Connection::read() {
    if (begin_ == end_) {
        begin_ = end_ = 0;
    } else if (begin_ > 0 && space() < kReadBufferBytes / 4) {
        std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
        end_ -= begin_;
        begin_ = 0;
    }
    if (space() == 0) return -1;
    for (;;) {
        ssize_t n = ::recv(fd_, buf_.get() + end_, space(), 0);
        if (n > 0) {
            end_ += static_cast<size_t>(n);
            return n;
        }
        if (n == 0) return 0;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return -1;
        error_ = errno;
        return -2;
    }
}

void Connection::consume(size_t n) {
    begin_ += n;
    if (begin_ >= end_) begin_ = end_ = 0;
}

}  // namespace kiln::bench
