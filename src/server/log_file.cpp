#include "server/log_file.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kiln::server {
namespace {

constexpr int kLogFlags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY;
// Its owner's only: a log holds whole targets and referers (a reset link's token).
constexpr mode_t kLogMode = 0600;

std::string parent_dir(const std::string& path) {
    size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

// As root: the directory a log file lives in, reached from / (or the working
// directory) one name at a time without following a link, so a link planted on
// the way (by the app user, in a directory it owns or a sticky one) cannot send the
// file, and the chown that gives it to the app user, elsewhere. The descriptor, or
// -1 and *error.
int open_directory(const std::string& path, const char* what, std::string* error) {
    std::string dir = parent_dir(path);
    int fd = ::open(dir[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    std::string walked = dir[0] == '/' ? "" : ".";
    for (size_t at = 0; fd >= 0 && at < dir.size();) {
        size_t end = dir.find('/', at);
        if (end == std::string::npos) end = dir.size();
        std::string name = dir.substr(at, end - at);
        at = end + 1;
        if (name.empty() || name == ".") continue;
        walked += "/" + name;
        int next = ::openat(fd, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int err = errno;
        ::close(fd);
        fd = next;
        if (fd < 0) {
            *error = std::string("cannot open ") + what + " '" + path + "': " + walked + ": " +
                     (err == ENOTDIR ? "a symbolic link or not a directory (as root, kiln follows no link to a "
                                       "log: give the real path)"
                                     : std::strerror(err));
            return -1;
        }
    }
    if (fd < 0) *error = std::string("cannot open ") + what + " '" + path + "': " + std::strerror(errno);
    return fd;
}

// As root: the directory a log file lives in must be writable by no one but root
// and the app user, or they could replace the file by a link between our opens.
std::string check_directory(int dir_fd, const std::string& path, const char* what, LogOwner owner) {
    std::string dir = parent_dir(path);
    struct stat st;
    if (fstat(dir_fd, &st) != 0) return std::string("cannot open ") + what + " '" + path + "': " + dir + ": " + std::strerror(errno);
    std::string writer;  // someone untrusted who can write (or chmod) the directory
    if (st.st_uid != 0 && st.st_uid != owner.uid) writer = "its owner (uid " + std::to_string(st.st_uid) + ")";
    else if ((st.st_mode & S_IWGRP) && st.st_gid != 0 && st.st_gid != owner.gid)
        writer = "its group (gid " + std::to_string(st.st_gid) + ")";
    else if (st.st_mode & S_IWOTH) writer = "everyone";
    if (writer.empty()) return {};
    return std::string("refusing ") + what + " '" + path + "': its directory " + dir + " is writable by " + writer +
           ", who could replace the file with a link to any file root can write; make the directory writable "
           "only by root and the user kiln runs as";
}

std::string base_name(const std::string& path) {
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The file, by its name in the directory reached without links (as root), or by its
// path (without privileges there is nothing to steal). -1 with errno, or *error.
int open_no_follow(const std::string& path, const char* what, LogOwner owner, std::string* error) {
    if (geteuid() != 0) return ::open(path.c_str(), kLogFlags, kLogMode);
    const std::string name = base_name(path);
    if (name.empty()) {
        errno = EISDIR;  // "dir/": no file named
        return -1;
    }
    int dir = open_directory(path, what, error);
    if (dir < 0) return -1;
    *error = check_directory(dir, path, what, owner);
    int fd = error->empty() ? ::openat(dir, name.c_str(), kLogFlags, kLogMode) : -1;
    int err = errno;
    ::close(dir);
    errno = err;
    return fd;
}

// What the opened descriptor must be: never a second name for someone else's file.
std::string check_opened(int fd, const std::string& path, const char* what) {
    struct stat st;
    if (fstat(fd, &st) != 0) return std::string("cannot stat ") + what + " '" + path + "': " + std::strerror(errno);
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode)) return {};
    if (!S_ISREG(st.st_mode)) return std::string(what) + " '" + path + "' is not a regular file";
    if (st.st_nlink != 1)
        return std::string("refusing ") + what + " '" + path + "': it has " + std::to_string(st.st_nlink) +
               " hard links (another name for the same file)";
    return {};
}

std::string open_error(const char* verb, const char* what, const std::string& path, int err) {
    std::string e = std::string(verb) + " " + what + " '" + path + "': " + std::strerror(err);
    if (err == ELOOP) e += " (it is a symbolic link; give the real path)";
    return e;
}

// Every check, then the open: the fd in *out, or why not (nothing left open).
std::string open_checked(const std::string& path, const char* what, LogOwner owner, const char* verb, int* out) {
    std::string refused;
    int fd = open_no_follow(path, what, owner, &refused);
    if (!refused.empty()) return refused;
    if (fd < 0) return open_error(verb, what, path, errno);
    if (std::string e = check_opened(fd, path, what); !e.empty()) {
        ::close(fd);
        return e;
    }
    *out = fd;
    return {};
}

}  // namespace

LogFile::~LogFile() {
    if (owned_ && fd_ >= 0) ::close(fd_);
}

std::string LogFile::open(const std::string& dest, const char* what, LogOwner owner) {
    what_ = what;
    owner_ = owner;
    if (dest == "stdout" || dest == "stderr") {
        fd_ = dest == "stdout" ? STDOUT_FILENO : STDERR_FILENO;
    } else {
        int fd;
        if (std::string e = open_checked(dest, what, owner, "cannot open", &fd); !e.empty()) return e;
        if (owned_ && fd_ >= 0) ::close(fd_);
        fd_ = fd;
        path_ = dest;
        owned_ = true;
    }
    struct stat st;
    pipe_ = fstat(fd_, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
    return {};
}

std::string LogFile::hand_to(LogOwner owner) {
    if (!owned_ || fd_ < 0) return {};
    struct stat st;
    if (fstat(fd_, &st) == 0 && !S_ISREG(st.st_mode)) return {};  // /dev/null stays root's
    if (fchown(fd_, owner.uid, owner.gid) != 0)
        return std::string("cannot give ") + what_ + " '" + path_ + "' to uid " + std::to_string(owner.uid) + ": " +
               std::strerror(errno);
    return {};
}

std::string LogFile::reopen() {
    if (path_.empty()) return {};
    int fd;
    if (std::string e = open_checked(path_, what_, owner_, "cannot reopen", &fd); !e.empty()) return e;
    dup3(fd, fd_, O_CLOEXEC);  // atomic for every thread writing to fd_
    ::close(fd);
    return {};
}

void LogFile::write(const char* data, size_t len) const {
    while (len > 0) {
        size_t n = len;
        if (pipe_ && n > PIPE_BUF) {  // cut at the last line end that fits
            n = PIPE_BUF;
            while (n > 0 && data[n - 1] != '\n') --n;
            if (n == 0) n = PIPE_BUF;  // a single line longer than PIPE_BUF
        }
        ssize_t w = ::write(fd_, data, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return;  // a log that cannot be written must not stop serving
        }
        data += w;
        len -= static_cast<size_t>(w);
    }
}

}  // namespace kiln::server
