// kiln::net::FileRoot: a directory served by App::files(), opened once (O_PATH), from
// which files are opened by relative path and never outside it. Where the kernel
// has openat2 (Linux >= 5.6) it resolves with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
// so ".." and symlinks that climb out fail inside the kernel (absolute symlinks are
// refused too, even when they point back inside: use relative ones). Without
// openat2 it opens with openat and then checks the opened file's real path
// (/proc/self/fd) against the root's; without /proc it refuses everything.
// Immutable after construction: shared by every thread without locks. Nothing
// here knows HTTP.
#pragma once
#include <sys/stat.h>

#include <string>

namespace kiln::net {

class FileRoot {
public:
    enum class Mode { Auto, Fallback };  // Fallback: force the pre-openat2 path (tests)

    // Opens `dir`. Throws std::system_error if it cannot be opened as a directory.
    explicit FileRoot(const std::string& dir, Mode mode = Mode::Auto);
    ~FileRoot();
    FileRoot(const FileRoot&) = delete;
    FileRoot& operator=(const FileRoot&) = delete;

    // Opens `rel` (relative, no leading '/') read-only and close-on-exec. O_NONBLOCK
    // so that a FIFO cannot block the loop; call make_blocking() before sendfile.
    // Returns the fd, or -errno: ENOENT/ENOTDIR (missing), EXDEV/ELOOP (leads outside
    // the root), EACCES (denied), others (I/O).
    int open(const std::string& rel) const;

    // stat(2) of `rel` beneath the root, following symlinks: 0 or -errno. Only for
    // noticing that a cached file changed; its answer never grants access.
    int stat(const std::string& rel, struct stat& st) const;

    bool uses_openat2() const { return openat2_; }

private:
    int open_fallback(const std::string& rel) const;
    int dirfd_ = -1;
    bool openat2_ = false;
    std::string real_;  // realpath of the root, for the fallback check
};

// Clears O_NONBLOCK on a regular file about to be handed to sendfile. Returns false
// (errno set) on failure.
bool make_blocking(int fd);

}  // namespace kiln::net
