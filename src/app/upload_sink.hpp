// UploadSink: a multipart/form-data body parsed while it arrives (the connection
// feeds it through http::BodySink). Fields are collected in memory (bounded); a
// file part is kept in memory up to kUploadMemoryThreshold and past that moved to
// an unnamed temporary file in $TMPDIR (or /tmp), so memory stays bounded whatever
// the upload's size. deliver() hands the Form to the request. One per request.
//
// Nothing reaches the disk unless the route takes files (UploadRules::max_files)
// and the request passes its gate (the CSRF check) by its first file part; the
// bytes every sink of the process holds on disk are bounded together
// (limits.upload_spool_bytes: 507 past it), and so are those they hold in memory
// while their bodies arrive (kUploadMemoryLimit: fields past it are refused with 503,
// files go to disk at once; it counts the bytes, and strings may take up to twice
// that as they grow). Without that, bodies that never end (a connection's
// HTTP/2 streams, each up to 1 MiB of fields) could hold memory by the hundred MiB.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <kiln/form.hpp>

#include "http/multipart.hpp"
#include "http/service.hpp"

namespace kiln::app {

inline constexpr size_t kUploadMemoryThreshold = 64 * 1024;
inline constexpr size_t kMaxFormFieldBytes = 1024 * 1024;  // all non-file fields together -> 413
inline constexpr uint64_t kUploadMemoryLimit = 64ull << 20;  // every sink of the process, in memory

struct UploadRules {
    size_t max_files = 0;                 // file parts allowed; 0: none (413)
    uint64_t spool_limit = 1ull << 30;    // bytes on disk for every sink of this process
    // Called with the fields so far when the first file part starts; false: 403.
    std::function<bool(const Form&)> gate;
    // A POST form whose _method field (sent before its files) routes it as PUT, PATCH
    // or DELETE: that route's max_files, from the field's value. Empty: no override.
    std::function<size_t(std::string_view method)> overridden_max_files;
    uint64_t memory_limit = kUploadMemoryLimit;  // bytes in memory for every sink of this process
};

// Bytes of uploads on disk in this process right now (every live UploadedFile's).
uint64_t spooled_bytes();
// Called when a spooled file is gone (UploadedFile's destructor).
void release_spool(uint64_t bytes);
// Bytes the sinks of this process hold in memory right now (fields, part heads and
// files not on disk, of bodies still arriving).
uint64_t upload_memory_bytes();

class UploadSink final : public http::BodySink, private http::MultipartSink {
public:
    UploadSink(std::string_view boundary, UploadRules rules);
    ~UploadSink() override;
    UploadSink(const UploadSink&) = delete;
    UploadSink& operator=(const UploadSink&) = delete;

    bool write(std::string_view data) override;
    bool finish() override;
    int status() const override { return status_; }
    std::string_view reason() const override { return reason_; }
    uint32_t retry_after() const override { return busy_ ? 1 : 0; }  // room comes back as uploads end
    void deliver(http::RequestContext& ctx) override;

private:
    bool on_part(const http::PartHead& head) override;
    bool on_data(std::string_view data) override;
    bool on_part_end() override;
    bool start_file(std::string_view field, std::string_view filename, std::string_view content_type);
    bool fail(int status, std::string reason);
    bool spill(UploadedFile& f);
    bool write_to_disk(UploadedFile& f, std::string_view data);
    // Counts n more bytes in memory against rules_.memory_limit (false: no room);
    // what is counted is given back when the sink delivers or goes.
    bool charge(size_t n);
    void uncharge(size_t n);
    bool refuse_for_memory();  // 503, logged

    http::MultipartParser parser_;
    UploadRules rules_;
    Form form_;
    bool in_file_ = false;
    // A file part with an empty filename: what a browser sends for a file input left
    // empty. It is no file unless bytes come (then a file named ""); its head, kept.
    bool unnamed_file_ = false;
    std::string unnamed_field_, unnamed_type_;
    size_t field_bytes_ = 0;
    uint64_t charged_ = 0;
    bool busy_ = false;  // refused for want of room (memory or spool)
    int status_ = 400;
    std::string reason_;
};

}  // namespace kiln::app
