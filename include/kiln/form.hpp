// kiln::Form: the fields and uploaded files of a form post, as Request::form()
// gives them. application/x-www-form-urlencoded bodies are decoded on first use;
// multipart/form-data bodies are parsed while they arrive: fields are kept in
// memory, a file part stays in memory up to 64 KiB and beyond that is written to an
// unnamed temporary file (O_TMPFILE), so a large upload costs disk, not memory. The
// temporary file disappears with the request unless save_as() gave it a name.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {
namespace app {
class UploadSink;
}
class Request;

class UploadedFile {
public:
    UploadedFile() = default;
    UploadedFile(UploadedFile&& o) noexcept;
    UploadedFile& operator=(UploadedFile&& o) noexcept;
    UploadedFile(const UploadedFile&) = delete;
    ~UploadedFile();

    std::string field;         // the form field's name
    std::string filename;      // as the client sent it: untrusted, never use it as a path
    std::string content_type;  // as the client sent it
    uint64_t size = 0;

    bool in_memory() const { return fd_ < 0; }
    // The whole contents (read from the temporary file if it is on disk).
    std::string contents() const;
    // Up to `n` bytes from `offset` into `out` (a large file, a slice at a time);
    // returns how many (0 at the end). Throws std::system_error if the read fails.
    size_t read(uint64_t offset, void* out, size_t n) const;
    // Gives the contents a name (a new file: an existing `path` is an error): a link
    // to the temporary file where it can, else a copy (`path` on another file system
    // than $TMPDIR), or a write of the in-memory bytes; mode 0644 less the umask either
    // way. A copy runs on the calling thread: for a large file that may go to another
    // file system, call it inside kiln::blocking. Throws std::system_error naming the
    // path on failure.
    void save_as(const std::string& path) const;

private:
    friend class app::UploadSink;  // fills it while the body arrives
    std::string memory_;           // the contents while they are small
    int fd_ = -1;                  // the unnamed temporary file, once they are not
};

class Form {
public:
    struct Field {
        std::string name;
        std::string value;
    };
    // The first value of field `name`; nullopt if absent.
    std::optional<std::string_view> get(std::string_view name) const;
    // Every value of field `name`, in order (checkboxes, multi-selects).
    std::vector<std::string_view> all(std::string_view name) const;
    // The first file of field `name`, or nullptr.
    const UploadedFile* file(std::string_view name) const;

    const std::vector<Field>& fields() const { return fields_; }
    const std::vector<UploadedFile>& files() const { return files_; }

private:
    friend class app::UploadSink;  // multipart bodies
    friend class Request;          // urlencoded bodies (Request::form)
    std::vector<Field> fields_;
    std::vector<UploadedFile> files_;
};

}  // namespace kiln
