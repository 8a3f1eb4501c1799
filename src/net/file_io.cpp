#include "net/file_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

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
    if (fd >= 0) return fd;
    int e = errno;
    // A file system without O_TMPFILE says EOPNOTSUPP (some network and FUSE ones); a
    // kernel before 3.11 takes the flag for O_DIRECTORY and says EISDIR.
    if (e == EOPNOTSUPP || e == EISDIR || e == EINVAL) return create_unlinked_temp_file(dir);
    return -e;
}

int create_unlinked_temp_file(const char* dir) {
    std::string path = std::string(dir) + "/kiln-tmp-XXXXXX";
    int fd = ::mkostemp(path.data(), O_CLOEXEC);  // mode 0600
    if (fd < 0) return -errno;
    if (::unlink(path.c_str()) != 0) {
        int e = errno;
        ::close(fd);
        return -e;
    }
    return fd;
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

namespace {

constexpr mode_t kNewFileMode = 0644;  // less the umask, as open(2) applies it

// The process's umask, read without changing it (umask(2) would, for every thread).
// Read at each save, as open(2) applies the umask of the moment: saves are rare.
mode_t current_umask() {
    mode_t m = 022;
    if (FILE* f = std::fopen("/proc/self/status", "re")) {
        char line[128];
        unsigned v;
        while (std::fgets(line, sizeof line, f))
            if (std::sscanf(line, "Umask: %o", &v) == 1) m = static_cast<mode_t>(v);
        std::fclose(f);
    }
    return m;
}

int link_as(int fd, const std::string& path) {
    std::string proc = "/proc/self/fd/" + std::to_string(fd);
    return ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) == 0 ? 0 : -errno;
}

int copy_as(int from, uint64_t size, const std::string& path) {
    UniqueFd to(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kNewFileMode));
    if (to.get() < 0) return -errno;
    int e = 0;
    char buf[64 * 1024];
    for (uint64_t at = 0; at < size && e == 0;) {
        long got = read_at(from, at, buf, static_cast<size_t>(std::min<uint64_t>(sizeof buf, size - at)));
        if (got <= 0) {
            e = got < 0 ? static_cast<int>(got) : -EIO;  // shorter than it was
            break;
        }
        size_t written;
        e = write_all(to.get(), std::string_view(buf, static_cast<size_t>(got)), &written);
        at += static_cast<uint64_t>(got);
    }
    if (e < 0) {
        to.reset();
        ::unlink(path.c_str());
    }
    return e;
}

}  // namespace

int save_temp_as(int fd, uint64_t size, const std::string& path) {
    if (::fchmod(fd, kNewFileMode & ~current_umask()) != 0) return -errno;
    int e = link_as(fd, path);
    // Another file system (EXDEV), one without hard links (EPERM, EOPNOTSUPP), no /proc
    // (ENOENT: copy_as then says whether the directory is missing too): a copy.
    if (e == -EXDEV || e == -EPERM || e == -EOPNOTSUPP || e == -ENOENT) e = copy_as(fd, size, path);
    return e;
}

int write_new_file(const std::string& path, std::string_view data) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kNewFileMode));
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
