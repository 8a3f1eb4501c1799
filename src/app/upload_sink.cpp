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
std::atomic<uint64_t> g_spooled{0};    // bytes in upload temp files of this process
std::atomic<uint64_t> g_in_memory{0};  // bytes the sinks of this process hold in memory
constexpr const char* kBusy = "too many uploads in progress; try again later";
}  // namespace

uint64_t spooled_bytes() { return g_spooled.load(std::memory_order_relaxed); }
void release_spool(uint64_t bytes) { g_spooled.fetch_sub(bytes, std::memory_order_relaxed); }
uint64_t upload_memory_bytes() { return g_in_memory.load(std::memory_order_relaxed); }

UploadSink::UploadSink(std::string_view boundary, UploadRules rules) : parser_(boundary), rules_(std::move(rules)) {}

UploadSink::~UploadSink() { uncharge(charged_); }

bool UploadSink::charge(size_t n) {
    if (g_in_memory.fetch_add(n, std::memory_order_relaxed) + n > rules_.memory_limit) {
        g_in_memory.fetch_sub(n, std::memory_order_relaxed);
        return false;
    }
    charged_ += n;
    return true;
}

void UploadSink::uncharge(size_t n) {
    g_in_memory.fetch_sub(n, std::memory_order_relaxed);
    charged_ -= n;
}

bool UploadSink::fail(int status, std::string reason) {
    status_ = status;
    reason_ = std::move(reason);
    // Refused: nothing of the body is kept (an HTTP/1.1 connection may linger a while
    // before its sink goes): its fields, memory and files are let go and count no more.
    form_ = Form();
    uncharge(charged_);
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
    const size_t head_bytes = head.name.size() + (head.filename ? head.filename->size() + head.content_type.size() : 0);
    field_bytes_ += head_bytes;
    if (field_bytes_ > kMaxFormFieldBytes) return fail(413, "form fields larger than 1 MiB in all");
    if (!charge(head_bytes)) return refuse_for_memory();
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
        if (!charge(data.size())) return refuse_for_memory();
        form_.fields_.back().value.append(data);
        return true;
    }
    UploadedFile& f = form_.files_.back();
    if (f.fd_ < 0) {
        if (f.memory_.size() + data.size() <= kUploadMemoryThreshold && charge(data.size())) {
            f.memory_.append(data);
            f.size += data.size();
            return true;
        }
        // Past the threshold, or the process's uploads hold all the memory they may:
        // to disk, with what it held.
        uncharge(f.memory_.size());
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
        busy_ = true;
        return fail(507, kBusy);
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

bool UploadSink::refuse_for_memory() {
    util::log(util::LogLevel::Warn, "upload refused: uploads in progress hold %llu bytes of form data in memory in this "
              "worker, the most they may", static_cast<unsigned long long>(rules_.memory_limit));
    busy_ = true;
    return fail(503, kBusy);
}

void UploadSink::deliver(http::RequestContext& ctx) {
    uncharge(charged_);  // the request's now, for as long as it runs
    Dispatcher::deliver_form(ctx, std::move(form_));
}

}  // namespace kiln::app
