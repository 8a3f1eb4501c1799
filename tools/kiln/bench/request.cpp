// Request templates (see the header).
#include "bench/request.hpp"

namespace kiln::bench {
namespace {
constexpr std::string_view kBoundary = "----kilnbench7MA4YWxkTrZu0gW";
constexpr std::string_view kUserAgent = "kiln-bench/0.1";
}  // namespace

RequestTemplates::RequestTemplates(const Target& target) {
    common_lines = "Host: " + target.authority + "\r\nUser-Agent: " + std::string(kUserAgent) + "\r\n";
    page_prefix = get_prefix(target.path);
    upload_prefix = "POST " + std::string(kUploadTarget) + " HTTP/1.1\r\n" + common_lines;

    upload_body = "--" + std::string(kBoundary) + "\r\n";
    upload_body += "Content-Disposition: form-data; name=\"file\"; filename=\"upload.txt\"\r\n";
    upload_body += "Content-Type: text/plain\r\n\r\n";
    // 15 KiB of lines of printable text (63 characters and LF): cannot hold the boundary.
    std::string file;
    file.reserve(kUploadFileBytes);
    while (file.size() < kUploadFileBytes) {
        char c = static_cast<char>('a' + (file.size() / 64) % 26);
        file += (file.size() % 64 == 63) ? '\n' : c;
    }
    upload_body += file;
    upload_body += "\r\n--" + std::string(kBoundary) + "--\r\n";

    upload_end = "Content-Type: multipart/form-data; boundary=" + std::string(kBoundary) + "\r\n";
    upload_end += "Content-Length: " + std::to_string(upload_body.size()) + "\r\n\r\n";
}

std::string RequestTemplates::get_prefix(std::string_view t) const {
    return "GET " + std::string(t) + " HTTP/1.1\r\n" + common_lines;
}

void RequestBytes::add(std::string_view piece) {
    if (piece.empty()) return;
    iov[count].iov_base = const_cast<char*>(piece.data());
    iov[count].iov_len = piece.size();
    ++count;
    total += piece.size();
}

}  // namespace kiln::bench
