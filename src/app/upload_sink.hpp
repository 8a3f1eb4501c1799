// UploadSink: a multipart/form-data body parsed while it arrives (the connection
// feeds it through http::BodySink). Fields are collected in memory (bounded); a
// file part is kept in memory up to kUploadMemoryThreshold and past that moved to
// an unnamed temporary file in $TMPDIR (or /tmp), so memory stays bounded whatever
// the upload's size. deliver() hands the Form to the request. One per request.
#pragma once
#include <memory>
#include <string>

#include <kiln/form.hpp>

#include "http/multipart.hpp"
#include "http/service.hpp"

namespace kiln::app {

inline constexpr size_t kUploadMemoryThreshold = 64 * 1024;
inline constexpr size_t kMaxFormFieldBytes = 1024 * 1024;  // all non-file fields together -> 413

class UploadSink final : public http::BodySink, private http::MultipartSink {
public:
    explicit UploadSink(std::string_view boundary);
    // A sink for this Content-Type, or nullptr if it is not multipart/form-data.
    static std::unique_ptr<UploadSink> for_content_type(std::string_view content_type);

    bool write(std::string_view data) override;
    bool finish() override;
    int status() const override { return status_; }
    std::string_view reason() const override { return reason_; }
    void deliver(Request& req) override;

private:
    bool on_part(const http::PartHead& head) override;
    bool on_data(std::string_view data) override;
    bool on_part_end() override;
    bool fail(int status, std::string reason);
    bool spill(UploadedFile& f);

    http::MultipartParser parser_;
    Form form_;
    bool in_file_ = false;
    size_t field_bytes_ = 0;
    int status_ = 400;
    std::string reason_;
};

}  // namespace kiln::app
