// Every size limit of the HTTP/1.1 engine, in one place. These are the defaults;
// http::Limits (below) carries the values in force, so config can override them.
// The parser never reads config: the connection hands it a Limits.
#pragma once
#include <cstddef>
#include <cstdint>

namespace kiln::http {

inline constexpr size_t kMaxRequestLine = 8 * 1024;          // longer -> 414
inline constexpr size_t kMaxHeaderBytes = 64 * 1024;         // request line excluded -> 431
inline constexpr size_t kMaxHeaderCount = 100;               // more fields -> 431
inline constexpr size_t kMaxBodyBytes = 8 * 1024 * 1024;     // per route (RouteOptions) -> 413
inline constexpr size_t kMaxChunkLine = 4 * 1024;            // size + extensions -> 400
inline constexpr size_t kMaxTrailerBytes = 16 * 1024;        // chunked trailers -> 431

struct Limits {
    size_t max_request_line = kMaxRequestLine;
    size_t max_header_bytes = kMaxHeaderBytes;
    size_t max_header_count = kMaxHeaderCount;  // must be <= kMaxHeaderCount
};

}  // namespace kiln::http
