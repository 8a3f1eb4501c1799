// The bytes of the client's requests, built once per run and shared read-only by
// every loop thread. A request goes out as one gathered write of up to five pieces:
//   prefix (request line, Host, User-Agent) | Cookie line of the session |
//   "Connection: close" line or nothing | end of head (with the upload's
//   Content-Type and Content-Length) | upload body.
// Upload: multipart/form-data with one file field "file" holding 15 KiB (15360
// bytes) of text, as a browser's file form would send it (the study's -u "15 KiB
// payload"); the whole body is a little larger because of the multipart framing.
#pragma once
#include <sys/uio.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "bench/options.hpp"

namespace kiln::bench {

inline constexpr size_t kUploadFileBytes = 15 * 1024;
inline constexpr std::string_view kUploadTarget = "/upload";
inline constexpr std::string_view kConnectionClose = "Connection: close\r\n";

struct RequestTemplates {
    std::string page_prefix;     // "GET <path> HTTP/1.1\r\nHost: ..\r\nUser-Agent: ..\r\n"
    std::string upload_prefix;   // "POST /upload HTTP/1.1\r\n..."
    std::string upload_end;      // "Content-Type: multipart/..\r\nContent-Length: N\r\n\r\n"
    std::string upload_body;
    std::string common_lines;    // "Host: ..\r\nUser-Agent: ..\r\n", for asset prefixes

    explicit RequestTemplates(const Target& target);
    // "GET <target> HTTP/1.1\r\n" + common_lines, for an asset.
    std::string get_prefix(std::string_view target) const;
};

// One request's pieces for a gathered write. The strings must outlive the write.
struct RequestBytes {
    iovec iov[5];
    int count = 0;
    size_t total = 0;
    void add(std::string_view piece);
};

}  // namespace kiln::bench
