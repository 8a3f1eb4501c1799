// File descriptors for the layers above, which make no system call of their own:
// an owning fd, whole reads and writes that retry on EINTR, unnamed temporary files
// (O_TMPFILE) and giving one a name. Every function returns 0/-errno or a count,
// never throws; callers decide what a failure means to a client.
#pragma once
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace kiln::net {

// Closes the descriptor it holds when it goes.
class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& o) noexcept {
        if (this != &o) {
            reset();
            fd_ = std::exchange(o.fd_, -1);
        }
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }
    int get() const { return fd_; }
    int release() { return std::exchange(fd_, -1); }
    void reset();

private:
    int fd_ = -1;
};

// An unnamed read-write file in `dir` (O_TMPFILE, mode 0600, close-on-exec): the fd,
// or -errno. It disappears with its last descriptor unless save_temp_as() names it.
// Where the file system has no O_TMPFILE: create_unlinked_temp_file.
int create_temp_file(const char* dir);
// The same from a named file (mkostemp) unlinked at once: save_temp_as() then copies it
// (a file with no name left cannot be linked again).
int create_unlinked_temp_file(const char* dir);
// The directory for temporary files: $TMPDIR, else /tmp.
const char* temp_dir();
// Writes all of `data` at the file's offset; 0 or -errno. *written counts what went.
int write_all(int fd, std::string_view data, size_t* written);
// Up to `n` bytes from `offset`: the count (0 at the end), or -errno.
long read_at(int fd, uint64_t offset, void* out, size_t n);
// Fills `n` bytes from `offset` unless the file ends first: the count, or -errno.
long read_full(int fd, uint64_t offset, void* out, size_t n);
// Gives the (temporary) file behind `fd` the name `path`: a link where it can (same
// file system, /proc mounted), else a copy of its `size` bytes; 0 or -errno (nothing
// left behind). Either way the file gets the mode write_new_file gives (0644 less the
// umask), not the temporary file's 0600.
int save_temp_as(int fd, uint64_t size, const std::string& path);
// Creates `path` (it must not exist) holding `data`; 0 or -errno (nothing left behind).
int write_new_file(const std::string& path, std::string_view data);
// fstat(2): 0 or -errno.
int stat_fd(int fd, struct stat& st);

}  // namespace kiln::net
