#include "net/file_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace kiln::net {

void UniqueFd::reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

const char* temp_dir() {
    const char* dir = std::getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

int create_temp_file(const char* dir) {
    int fd = ::open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    return fd >= 0 ? fd : -errno;
}

int write_all(int fd, std::string_view data, size_t* written) {
    *written = 0;
    while (*written < data.size()) {
        ssize_t n = ::write(fd, data.data() + *written, data.size() - *written);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        *written += static_cast<size_t>(n);
    }
    return 0;
}

long read_at(int fd, uint64_t offset, void* out, size_t n) {
    for (;;) {
        ssize_t got = ::pread(fd, out, n, static_cast<off_t>(offset));
        if (got >= 0) return static_cast<long>(got);
        if (errno != EINTR) return -errno;
    }
}

long read_full(int fd, uint64_t offset, void* out, size_t n) {
    size_t got = 0;
    while (got < n) {
        long r = read_at(fd, offset + got, static_cast<char*>(out) + got, n - got);
        if (r < 0) return r;
        if (r == 0) break;
        got += static_cast<size_t>(r);
    }
    return static_cast<long>(got);
}

int link_as(int fd, const std::string& path) {
    std::string proc = "/proc/self/fd/" + std::to_string(fd);
    return ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) == 0 ? 0 : -errno;
}

int write_new_file(const std::string& path, std::string_view data) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (fd.get() < 0) return -errno;
    size_t written;
    if (int e = write_all(fd.get(), data, &written); e < 0) {
        fd.reset();
        ::unlink(path.c_str());
        return e;
    }
    return 0;
}

int stat_fd(int fd, struct stat& st) { return ::fstat(fd, &st) == 0 ? 0 : -errno; }

}  // namespace kiln::net
