#include "net/process_bus.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string_view>
#include <vector>

#include "util/log.hpp"

namespace kiln::net {
namespace {

// Slot `index`'s socket, <dir>/<index>; 0 if the path does not fit.
socklen_t address(const std::string& dir, unsigned index, sockaddr_un* a) {
    std::memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = std::snprintf(a->sun_path, sizeof a->sun_path, "%s/%u", dir.c_str(), index);
    if (n < 0 || static_cast<size_t>(n) >= sizeof a->sun_path) return 0;
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + static_cast<size_t>(n) + 1);
}

}  // namespace

std::unique_ptr<ProcessBus> ProcessBus::open(const std::string& dir, unsigned index, unsigned slots,
                                             std::string* err) {
    struct stat st;
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077)) {
        *err = "process bus: " + dir + " is not a directory of this user's that only it may use";
        return nullptr;
    }
    sockaddr_un a;
    if (address(dir, slots, &a) == 0) {  // no slot has a longer name
        *err = "process bus: the directory's path is too long for a socket: " + dir;
        return nullptr;
    }
    socklen_t len = address(dir, index, &a);
    int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        *err = std::string("process bus: socket: ") + std::strerror(errno);
        return nullptr;
    }
    ::unlink(a.sun_path);  // a dead worker of this slot left its socket
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), len) != 0) {
        *err = std::string("process bus: bind slot ") + std::to_string(index) + ": " + std::strerror(errno);
        ::close(fd);
        return nullptr;
    }
    int on = 1;  // senders' credentials with each datagram: only our own user's count
    ::setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
    int want = 4 << 20;  // as much as the kernel allows an unprivileged process
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof want);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof want);  // (the peers' sockets get the same)
    int sndbuf = 0;
    socklen_t sl = sizeof sndbuf;
    ::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl);
    int stop = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (stop < 0 || wake < 0) {
        *err = std::string("process bus: eventfd: ") + std::strerror(errno);
        ::close(fd);
        if (stop >= 0) ::close(stop);
        if (wake >= 0) ::close(wake);
        return nullptr;
    }
    // A datagram's bytes plus the kernel's per-skb overhead must fit the send buffer.
    size_t max = sndbuf > 8192 ? static_cast<size_t>(sndbuf) / 2 - 4096 : 1024;
    return std::unique_ptr<ProcessBus>(new ProcessBus(fd, stop, wake, dir, index, slots, max));
}

ProcessBus::ProcessBus(int fd, int stop_fd, int wake_fd, std::string dir, unsigned index, unsigned slots,
                       size_t max_datagram)
    : fd_(fd),
      stop_fd_(stop_fd),
      wake_fd_(wake_fd),
      dir_(std::move(dir)),
      index_(index),
      slots_(slots),
      max_datagram_(max_datagram),
      uid_(::getuid()),
      peers_(slots) {}

ProcessBus::~ProcessBus() {
    if (thread_.joinable()) {
        uint64_t one = 1;
        ssize_t ignored = ::write(stop_fd_, &one, sizeof one);
        (void)ignored;
        thread_.join();
    }
    for (Peer& p : peers_)
        if (p.fd >= 0) ::close(p.fd);
    sockaddr_un a;
    if (address(dir_, index_, &a)) ::unlink(a.sun_path);
    ::close(fd_);
    ::close(stop_fd_);
    ::close(wake_fd_);
}

bool ProcessBus::send_others(std::string_view datagram) {
    if (datagram.size() > max_datagram_) return false;
    std::string said;
    {
        std::lock_guard<std::mutex> lock(mu_);
        for (unsigned i = 0; i < slots_; ++i)
            if (i != index_) send_to(i, datagram);
        said.swap(to_log_);
    }
    if (!said.empty()) util::log(util::LogLevel::Error, "%s", said.c_str());  // (not under the lock)
    return true;
}

bool ProcessBus::connect_peer(unsigned i) {
    Peer& p = peers_[i];
    if (p.fd >= 0) return true;
    int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return false;
    int want = 4 << 20;
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
    sockaddr_un a;
    socklen_t len = address(dir_, i, &a);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), len) != 0) {  // nobody bound there: a free slot
        ::close(fd);
        return false;
    }
    p.fd = fd;
    return true;
}

void ProcessBus::send_to(unsigned i, std::string_view datagram) {
    Peer& p = peers_[i];
    if (!p.waiting.empty()) {  // behind what waits: order is kept
        if (p.waiting_bytes + datagram.size() > kMaxPendingBytes) return drop(i, 1);
        p.waiting.emplace_back(datagram);
        p.waiting_bytes += datagram.size();
        return;
    }
    if (p.fd < 0) {
        // Not known yet: one sendto through our own socket says whether anyone is
        // there (half the slots are free at any time: no socket made for those).
        sockaddr_un a;
        socklen_t len = address(dir_, i, &a);
        ssize_t n;
        do n = ::sendto(fd_, datagram.data(), datagram.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                        reinterpret_cast<sockaddr*>(&a), len);
        while (n < 0 && errno == EINTR);
        if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) return;  // taken, or nobody there
        // Its queue is full: a socket of its own, to wait for room on (POLLOUT).
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (!connect_peer(i)) return;  // nobody there (a slot not filled, or between two workers)
        ssize_t n;
        do n = ::send(p.fd, datagram.data(), datagram.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n >= 0) return;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {  // its queue is full: the bus's thread waits for room
            bool first = p.waiting.empty();
            p.waiting.emplace_back(datagram);
            p.waiting_bytes += datagram.size();
            if (first) {
                uint64_t one = 1;
                ssize_t ignored = ::write(wake_fd_, &one, sizeof one);
                (void)ignored;
            }
            return;
        }
        // ECONNREFUSED and the like: the worker we knew went; its successor may be there.
        ::close(p.fd);
        p.fd = -1;
    }
}

void ProcessBus::flush_waiting(unsigned i) {
    Peer& p = peers_[i];
    while (!p.waiting.empty()) {
        const std::string& d = p.waiting.front();
        ssize_t n;
        do n = ::send(p.fd, d.data(), d.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // still full: wait again
        if (n < 0) {  // it went: what waited was for it, not for its successor
            ::close(p.fd);
            p.fd = -1;
            p.waiting.clear();
            p.waiting_bytes = 0;
            return;
        }
        p.waiting_bytes -= d.size();
        p.waiting.pop_front();
    }
}

void ProcessBus::drop(unsigned i, size_t count) {
    dropped_.fetch_add(count, std::memory_order_relaxed);
    int64_t now = static_cast<int64_t>(::time(nullptr));
    if (now - drop_logged_s_ < 60) return;
    drop_logged_s_ = now;
    char line[256];
    std::snprintf(line, sizeof line,
                  "process bus: the worker of slot %u takes no messages (%zu bytes wait for it): publish() drops "
                  "what does not fit; %llu dropped so far",
                  i, peers_[i].waiting_bytes, static_cast<unsigned long long>(dropped_.load(std::memory_order_relaxed)));
    to_log_ = line;  // said by send_others, after the lock
}

void ProcessBus::start(std::function<void(std::string_view)> fn) {
    thread_ = std::thread([this, fn = std::move(fn)] { receive_loop(fn); });
}

void ProcessBus::receive_loop(std::function<void(std::string_view)> fn) {
    std::vector<char> buf(max_datagram_ + 1);
    std::vector<pollfd> fds;
    std::vector<unsigned> waiting;  // the peers behind fds[3...]
    for (;;) {
        fds.assign({{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}});
        waiting.clear();
        {
            std::lock_guard<std::mutex> lock(mu_);
            for (unsigned i = 0; i < slots_; ++i) {
                if (peers_[i].waiting.empty() || peers_[i].fd < 0) continue;
                fds.push_back({peers_[i].fd, POLLOUT, 0});
                waiting.push_back(i);
            }
        }
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (fds[1].revents) return;
        if (fds[2].revents) {
            uint64_t n;
            ssize_t ignored = ::read(wake_fd_, &n, sizeof n);
            (void)ignored;
        }
        if (!waiting.empty()) {
            std::lock_guard<std::mutex> lock(mu_);
            for (size_t k = 0; k < waiting.size(); ++k)
                if (fds[3 + k].revents && peers_[waiting[k]].fd == fds[3 + k].fd) flush_waiting(waiting[k]);
        }
        if (!fds[0].revents) continue;
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

// ------------------------------------------------------------------ ProcessBusDir

namespace {

constexpr std::string_view kDirName = "/kiln-bus-XXXXXX";

// Why the bus directory cannot be made in `base` ("" if it can, with *path the base
// resolved: no link in it). Another user who may rename entries of the base or of a
// directory above it (one they can write to, without the sticky bit) could put a
// directory of theirs in the bus's place.
std::string unsafe_base(const std::string& base, std::string* path) {
    if (base.empty() || base[0] != '/') return "not an absolute path";
    char* resolved = ::realpath(base.c_str(), nullptr);
    if (!resolved) return std::strerror(errno);
    *path = resolved;
    std::free(resolved);
    if (path->size() + kDirName.size() + sizeof "/4294967295" > sizeof(sockaddr_un::sun_path))
        return "too long a path for a socket";
    for (std::string dir = *path;; dir.resize(std::max<size_t>(dir.rfind('/'), 1))) {  // it, and each one above
        struct stat st;
        if (::lstat(dir.c_str(), &st) != 0) return dir + ": " + std::strerror(errno);
        if (!S_ISDIR(st.st_mode)) return dir + " is not a directory";
        if (st.st_uid != 0 && st.st_uid != ::geteuid()) return dir + " belongs to another user";
        if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
            return dir + " may be written by others and has no sticky bit";
        if (dir == "/") break;
    }
    return "";
}

// Removes the sockets in the bus directory `name` of `base` (an open descriptor),
// then the directory; anything else in it keeps it there.
void remove_dir(int base, const char* name) {
    int fd = ::openat(base, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    if (DIR* d = ::fdopendir(fd)) {
        std::vector<std::string> sockets;  // read first, then removed
        while (const dirent* e = ::readdir(d)) {
            struct stat st;
            if (::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode))
                sockets.emplace_back(e->d_name);
        }
        for (const std::string& s : sockets) ::unlinkat(fd, s.c_str(), 0);
        ::closedir(d);  // (closes fd)
    } else {
        ::close(fd);
    }
    ::unlinkat(base, name, AT_REMOVEDIR);
}

// A supervisor killed with SIGKILL leaves its bus directory behind. One is ours to
// remove when it is this user's, private, nobody is bound to its keeper socket
// (connect is refused: its supervisor is gone) and it was not changed for a minute
// (one just made has no keeper yet). Its workers may still be draining: their
// publish() then reaches no one, as they are leaving.
void remove_stale_dirs(const std::string& base) {
    DIR* d = ::opendir(base.c_str());
    if (!d) return;
    const std::string_view prefix = kDirName.substr(1, kDirName.size() - 7);  // "kiln-bus-"
    const time_t now = ::time(nullptr);
    while (const dirent* e = ::readdir(d)) {
        std::string_view name(e->d_name);
        if (name.size() != prefix.size() + 6 || name.substr(0, prefix.size()) != prefix) continue;
        struct stat st;
        if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != ::geteuid() || (st.st_mode & 0777) != 0700 || now - st.st_mtime < 60)
            continue;
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        int n = std::snprintf(a.sun_path, sizeof a.sun_path, "%s/%s/supervisor", base.c_str(), e->d_name);
        if (n < 0 || static_cast<size_t>(n) >= sizeof a.sun_path) continue;
        int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) break;
        bool refused = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno == ECONNREFUSED;
        ::close(fd);
        if (refused) remove_dir(::dirfd(d), e->d_name);
    }
    ::closedir(d);
}

}  // namespace

std::unique_ptr<ProcessBusDir> ProcessBusDir::create(std::string* err) {
    // The service's own runtime directory (systemd's RuntimeDirectory=), $TMPDIR, /tmp.
    std::vector<std::string> bases;
    if (const char* v = std::getenv("RUNTIME_DIRECTORY"); v && *v) {
        std::string_view first(v);  // (several, with several RuntimeDirectory= names)
        bases.emplace_back(first.substr(0, first.find(':')));
    }
    if (const char* v = std::getenv("TMPDIR"); v && *v) bases.emplace_back(v);
    bases.emplace_back("/tmp");
    std::string why;
    for (const std::string& base : bases) {
        std::string resolved;
        std::string unsafe = unsafe_base(base, &resolved);
        if (unsafe.empty()) {
            remove_stale_dirs(resolved);
            std::string path = resolved + std::string(kDirName);
            if (::mkdtemp(path.data()) && ::chmod(path.c_str(), 0700) == 0) {  // a name no one had; 0700 whatever the umask
                auto dir = std::unique_ptr<ProcessBusDir>(new ProcessBusDir(path));
                if (dir->keep_in_use()) return dir;
                unsafe = std::string("its keeper socket: ") + std::strerror(errno);
            } else {
                unsafe = std::strerror(errno);
                ::rmdir(path.c_str());
            }
        }
        why += (why.empty() ? "" : "; ") + base + ": " + unsafe;
    }
    *err = "process bus: no directory for its sockets (" + why + ")";
    return nullptr;
}

bool ProcessBusDir::keep_in_use() {
    // A socket bound here for as long as the directory lives: cleaners of old files
    // (systemd-tmpfiles) leave a socket in use, and its directory, alone; and another
    // supervisor tells a live directory from one a killed supervisor left.
    keeper_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s/supervisor", path_.c_str());
    return keeper_ >= 0 && ::bind(keeper_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
}

ProcessBusDir::~ProcessBusDir() {
    if (keeper_ >= 0) ::close(keeper_);
    const size_t slash = path_.rfind('/');
    int base = ::open(slash == 0 ? "/" : path_.substr(0, slash).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (base < 0) return;
    remove_dir(base, path_.c_str() + slash + 1);
    ::close(base);
}

}  // namespace kiln::net
