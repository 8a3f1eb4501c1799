// Which responses kiln compresses on the fly, and with what (the codings are
// http/compress's). Text types of compression.min_size or more, by the client's
// Accept-Encoding (its qvalues; zstd, then br, then gzip when they tie), with
// `Vary: Accept-Encoding` on every response whose coding could have differed. Never a
// response that says `Cache-Control: no-transform`, has a Content-Encoding already,
// carries a validator (an ETag: static files, whose precompressed siblings are the
// way), is partial (206), or a route turned off (RouteOptions::compress). A streamed
// response of such a type is coded as it is written, whatever its size.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "http/compress.hpp"
#include "http/response.hpp"

namespace kiln::app {

struct CompressionPolicy {
    bool enabled = true;
    size_t min_size = 1024;
    std::vector<std::string> types;  // media types, lower case, without parameters (ServerOptions' defaults)
    http::CodingLevels levels;
};

// A response this policy may code, by its status and headers (not yet its size).
bool codable(const CompressionPolicy& p, const http::Response& res);

// The coding the client prefers among those kiln makes; Identity if none.
http::Coding preferred_coding(std::string_view accept_encoding);
// The same for a streamed body, which keeps its coder while it runs: gzip, the
// smallest, whenever the client takes it as readily as the others.
http::Coding preferred_stream_coding(std::string_view accept_encoding);

// After the handler: codes a whole body in place (and sets Content-Encoding, Vary).
void compress_body(const CompressionPolicy& p, std::string_view accept_encoding, http::Response& res);

// Before a stream's first write: sets Content-Encoding and Vary and an encoder, or
// leaves the response alone.
void compress_stream(const CompressionPolicy& p, std::string_view accept_encoding, http::Response& res);

}  // namespace kiln::app
