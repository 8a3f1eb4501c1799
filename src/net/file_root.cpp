#include "net/file_root.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <system_error>

namespace kiln::net {
namespace {

constexpr int kOpenFlags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;

long sys_openat2(int dirfd, const char* path, uint64_t flags, uint64_t resolve) {
    open_how how{};
    how.flags = flags;
    how.resolve = resolve;
    return syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

}  // namespace

FileRoot::FileRoot(const std::string& dir, Mode mode) {
    dirfd_ = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dirfd_ < 0)
        throw std::system_error(errno, std::generic_category(), "static files: cannot open directory '" + dir + "'");
    char buf[PATH_MAX];
    if (!::realpath(dir.c_str(), buf)) {
        int e = errno;
        ::close(dirfd_);
        throw std::system_error(e, std::generic_category(), "static files: realpath('" + dir + "')");
    }
    real_ = buf;
    if (mode == Mode::Auto) {
        // Probe once: ENOSYS (old kernel) or EPERM (a seccomp filter that does not
        // know the call) select the fallback for the life of the process.
        long fd = sys_openat2(dirfd_, ".", O_PATH | O_CLOEXEC, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
        if (fd >= 0) {
            ::close(static_cast<int>(fd));
            openat2_ = true;
        }
    }
}

FileRoot::~FileRoot() {
    if (dirfd_ >= 0) ::close(dirfd_);
}

int FileRoot::open(const std::string& rel) const {
    if (rel.empty() || rel[0] == '/') return -ENOENT;
    if (!openat2_) return open_fallback(rel);
    long fd;
    // EAGAIN: a rename raced the lookup (try again), or another process holds a lease
    // on the file (O_NONBLOCK: the kernel would make us wait up to lease-break-time).
    // A few tries tell the one from the other without spinning the loop.
    int tries = 0;
    do {
        fd = sys_openat2(dirfd_, rel.c_str(), kOpenFlags, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
    } while (fd < 0 && (errno == EINTR || (errno == EAGAIN && ++tries < 8)));
    return fd < 0 ? -errno : static_cast<int>(fd);
}

int FileRoot::open_fallback(const std::string& rel) const {
    int fd = ::openat(dirfd_, rel.c_str(), kOpenFlags);
    if (fd < 0) return -errno;
    // The check is on the opened file, so a symlink swapped in after it cannot fool it.
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    char real[PATH_MAX];
    ssize_t n = ::readlink(link, real, sizeof real - 1);
    std::string_view path(real, n > 0 ? static_cast<size_t>(n) : 0);
    bool below = path.size() > real_.size() && path.starts_with(real_) && path[real_.size()] == '/';
    bool inside = n > 0 && (real_ == "/" || path == real_ || below);
    if (!inside) {
        ::close(fd);
        return -EXDEV;
    }
    return fd;
}

int FileRoot::stat(const std::string& rel, struct stat& st) const {
    return ::fstatat(dirfd_, rel.c_str(), &st, 0) == 0 ? 0 : -errno;
}

bool make_blocking(int fd) {
    int fl = ::fcntl(fd, F_GETFL);
    return fl >= 0 && ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0;
}

}  // namespace kiln::net
