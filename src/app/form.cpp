#include <kiln/form.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>

#include "app/upload_sink.hpp"
#include "net/file_io.hpp"

namespace kiln {

UploadedFile::UploadedFile(UploadedFile&& o) noexcept
    : field(std::move(o.field)), filename(std::move(o.filename)), content_type(std::move(o.content_type)),
      size(o.size), memory_(std::move(o.memory_)), fd_(std::exchange(o.fd_, -1)) {}

UploadedFile& UploadedFile::operator=(UploadedFile&& o) noexcept {
    if (this == &o) return *this;
    if (fd_ >= 0) {
        net::UniqueFd closing(fd_);
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
    net::UniqueFd closing(fd_);
    app::release_spool(size);  // its bytes no longer count against limits.upload_spool_bytes
}

size_t UploadedFile::read(uint64_t offset, void* out, size_t n) const {
    if (fd_ < 0) {
        if (offset >= memory_.size()) return 0;
        size_t k = std::min<size_t>(n, memory_.size() - offset);
        std::memcpy(out, memory_.data() + offset, k);
        return k;
    }
    long got = net::read_at(fd_, offset, out, n);
    if (got < 0) throw std::system_error(static_cast<int>(-got), std::generic_category(), "reading an uploaded file");
    return static_cast<size_t>(got);
}

std::string UploadedFile::contents() const {
    if (fd_ < 0) return memory_;
    std::string out(size, '\0');
    long got = net::read_full(fd_, 0, out.data(), size);
    if (got < 0 || static_cast<uint64_t>(got) != size)
        throw std::system_error(got < 0 ? static_cast<int>(-got) : EIO, std::generic_category(), "reading an uploaded file");
    return out;
}

void UploadedFile::save_as(const std::string& path) const {
    // A temporary file gets its name, without a copy where it can; a small upload is
    // written out.
    int e = fd_ >= 0 ? net::save_temp_as(fd_, size, path) : net::write_new_file(path, memory_);
    if (e < 0) throw std::system_error(-e, std::generic_category(), "saving upload as " + path);
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
