#include "app/upload_sink.hpp"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <kiln/request.hpp>
#include <kiln/view.hpp>  // kMethodField

#include "app/dispatcher.hpp"
#include "net/file_io.hpp"
#include "util/log.hpp"

namespace kiln::app {

namespace {
std::atomic<uint64_t> g_spooled{0};  // bytes in upload temp files of this process
}  // namespace

uint64_t spooled_bytes() { return g_spooled.load(std::memory_order_relaxed); }
void release_spool(uint64_t bytes) { g_spooled.fetch_sub(bytes, std::memory_order_relaxed); }

UploadSink::UploadSink(std::string_view boundary, UploadRules rules) : parser_(boundary), rules_(std::move(rules)) {}

bool UploadSink::fail(int status, std::string reason) {
    status_ = status;
    reason_ = std::move(reason);
    return false;
}

bool UploadSink::write(std::string_view data) {
    if (parser_.feed(data, *this) != http::MultipartStatus::Error) return true;
    if (parser_.error() == http::MultipartError::Aborted) return false;  // ours: status_ is set
    return fail(http::status_for(parser_.error()), std::string(http::describe(parser_.error())));
}

bool UploadSink::finish() {
    if (parser_.finish() == http::MultipartStatus::Done) return true;
    if (parser_.error() == http::MultipartError::Aborted) return false;
    return fail(http::status_for(parser_.error()), std::string(http::describe(parser_.error())));
}

bool UploadSink::on_part(const http::PartHead& head) {
    in_file_ = false;
    unnamed_file_ = false;
    // What a part's head leaves in the form counts with the values: 1,000 parts of
    // 8 KiB names and no value would hold 8 MB otherwise.
    field_bytes_ += head.name.size() + (head.filename ? head.filename->size() + head.content_type.size() : 0);
    if (field_bytes_ > kMaxFormFieldBytes) return fail(413, "form fields larger than 1 MiB in all");
    if (head.filename && head.filename->empty()) {  // a file input left empty, most likely
        unnamed_file_ = true;
        unnamed_field_.assign(head.name);
        unnamed_type_.assign(head.content_type);
        return true;
    }
    if (head.filename) return start_file(head.name, *head.filename, head.content_type);
    form_.fields_.push_back({std::string(head.name), {}});
    return true;
}

bool UploadSink::start_file(std::string_view field, std::string_view filename, std::string_view content_type) {
    if (rules_.overridden_max_files) {  // settled at the first file: the route the form's _method names
        if (auto wanted = form_.get(kMethodField)) rules_.max_files = rules_.overridden_max_files(*wanted);
        rules_.overridden_max_files = nullptr;
    }
    // Checked before a byte of the file is kept: the route must take files, this
    // many, and the request must pass its gate on what came before (the token).
    if (rules_.max_files == 0) return fail(413, "this route accepts no file uploads");
    if (form_.files_.size() >= rules_.max_files)
        return fail(413, "more than " + std::to_string(rules_.max_files) + " files in one request");
    if (form_.files_.empty() && rules_.gate && !rules_.gate(form_))
        return fail(403, "Forbidden: missing or invalid CSRF token (send it in the X-CSRF-Token header "
                         "or in a _csrf field before the files)");
    UploadedFile& f = form_.files_.emplace_back();
    f.field.assign(field);
    f.filename.assign(filename);
    f.content_type.assign(content_type);
    in_file_ = true;
    return true;
}

bool UploadSink::spill(UploadedFile& f) {
    const char* dir = net::temp_dir();
    int fd = net::create_temp_file(dir);
    if (fd < 0) {
        util::log(util::LogLevel::Error, "upload: cannot create a temporary file in %s: %s", dir, std::strerror(-fd));
        return fail(500, "cannot store the upload");
    }
    f.fd_ = fd;
    std::string held = std::move(f.memory_);
    f.memory_.clear();
    f.size = 0;
    return on_data(held);
}

bool UploadSink::on_data(std::string_view data) {
    if (unnamed_file_) {
        if (data.empty()) return true;
        unnamed_file_ = false;  // bytes: a file after all, with no name
        if (!start_file(unnamed_field_, "", unnamed_type_)) return false;
    }
    if (!in_file_) {
        field_bytes_ += data.size();
        if (field_bytes_ > kMaxFormFieldBytes) return fail(413, "form fields larger than 1 MiB in all");
        form_.fields_.back().value.append(data);
        return true;
    }
    UploadedFile& f = form_.files_.back();
    if (f.fd_ < 0) {
        if (f.memory_.size() + data.size() <= kUploadMemoryThreshold) {
            f.memory_.append(data);
            f.size += data.size();
            return true;
        }
        f.memory_.append(data);
        return spill(f);
    }
    return write_to_disk(f, data);
}

bool UploadSink::write_to_disk(UploadedFile& f, std::string_view data) {
    // Reserved before it is written: every sink of the process shares the limit,
    // and a file on disk always counts exactly its size (released with it).
    if (g_spooled.fetch_add(data.size(), std::memory_order_relaxed) + data.size() > rules_.spool_limit) {
        g_spooled.fetch_sub(data.size(), std::memory_order_relaxed);
        util::log(util::LogLevel::Warn, "upload refused: uploads in progress hold limits.upload_spool_bytes = %llu "
                  "bytes on disk in this worker", static_cast<unsigned long long>(rules_.spool_limit));
        return fail(507, "too many uploads in progress; try again later");
    }
    // Page-cache writes: the loop thread pays a memcpy, not a disk wait.
    size_t written = 0;
    int e = net::write_all(f.fd_, data, &written);
    f.size += written;
    if (e < 0) {
        g_spooled.fetch_sub(data.size() - written, std::memory_order_relaxed);  // what was not written
        util::log(util::LogLevel::Error, "upload: writing a temporary file: %s", std::strerror(-e));
        return fail(e == -ENOSPC || e == -EDQUOT ? 507 : 500, "cannot store the upload");
    }
    return true;
}

bool UploadSink::on_part_end() {
    in_file_ = unnamed_file_ = false;
    return true;
}

void UploadSink::deliver(http::RequestContext& ctx) { Dispatcher::deliver_form(ctx, std::move(form_)); }

}  // namespace kiln::app
