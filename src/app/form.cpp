#include <kiln/form.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>

#include "app/upload_sink.hpp"

namespace kiln {

UploadedFile::UploadedFile(UploadedFile&& o) noexcept
    : field(std::move(o.field)), filename(std::move(o.filename)), content_type(std::move(o.content_type)),
      size(o.size), memory_(std::move(o.memory_)), fd_(std::exchange(o.fd_, -1)) {}

UploadedFile& UploadedFile::operator=(UploadedFile&& o) noexcept {
    if (this == &o) return *this;
    if (fd_ >= 0) {
        ::close(fd_);
        app::release_spool(size);
    }
    field = std::move(o.field);
    filename = std::move(o.filename);
    content_type = std::move(o.content_type);
    size = o.size;
    memory_ = std::move(o.memory_);
    fd_ = std::exchange(o.fd_, -1);
    return *this;
}

UploadedFile::~UploadedFile() {
    if (fd_ < 0) return;
    ::close(fd_);
    app::release_spool(size);  // its bytes no longer count against limits.upload_spool_bytes
}

size_t UploadedFile::read(uint64_t offset, void* out, size_t n) const {
    if (fd_ < 0) {
        if (offset >= memory_.size()) return 0;
        size_t k = std::min<size_t>(n, memory_.size() - offset);
        std::memcpy(out, memory_.data() + offset, k);
        return k;
    }
    for (;;) {
        ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
        if (got >= 0) return static_cast<size_t>(got);
        if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "reading an uploaded file");
    }
}

std::string UploadedFile::contents() const {
    if (fd_ < 0) return memory_;
    std::string out(size, '\0');
    size_t got = 0;
    while (got < size) {
        ssize_t n = ::pread(fd_, out.data() + got, size - got, static_cast<off_t>(got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::system_error(errno ? errno : EIO, std::generic_category(), "reading an uploaded file");
        got += static_cast<size_t>(n);
    }
    return out;
}

void UploadedFile::save_as(const std::string& path) const {
    if (fd_ >= 0) {
        // An O_TMPFILE file gets its name without a copy.
        std::string proc = "/proc/self/fd/" + std::to_string(fd_);
        if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) == 0) return;
        throw std::system_error(errno, std::generic_category(), "saving upload as " + path);
    }
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "saving upload as " + path);
    size_t done = 0;
    while (done < memory_.size()) {
        ssize_t n = ::write(fd, memory_.data() + done, memory_.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            ::close(fd);
            ::unlink(path.c_str());
            throw std::system_error(e, std::generic_category(), "saving upload as " + path);
        }
        done += static_cast<size_t>(n);
    }
    ::close(fd);
}

std::optional<std::string_view> Form::get(std::string_view name) const {
    for (const Field& f : fields_)
        if (f.name == name) return std::string_view(f.value);
    return std::nullopt;
}

std::vector<std::string_view> Form::all(std::string_view name) const {
    std::vector<std::string_view> out;
    for (const Field& f : fields_)
        if (f.name == name) out.emplace_back(f.value);
    return out;
}

const UploadedFile* Form::file(std::string_view name) const {
    for (const UploadedFile& f : files_)
        if (f.field == name) return &f;
    return nullptr;
}

}  // namespace kiln
