// HTTP/1.1 request-head parser (RFC 9112), a pure function: bytes in, a result out.
// No I/O, no allocation, no config: the caller passes Limits and owns the buffer.
// On Complete, every string_view in RequestHead points into the caller's buffer, so
// the buffer must outlive the head and must not move while the head is used.
// The parser is strict where leniency lets two parsers disagree (request smuggling):
// bare CR or LF, obs-fold, whitespace before ':', CL+TE, conflicting lengths are all
// errors. The caller (http::Connection) maps ParseError to a status and closes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <kiln/http_types.hpp>

#include "http/limits.hpp"

namespace kiln::http {

enum class ParseStatus : uint8_t { Complete, Incomplete, Error };

enum class ParseError : uint8_t {
    None,
    BadMethod,                  // 400: empty or non-token method
    BadTarget,                  // 400: empty, control/space/non-ASCII byte, bad form
    BadVersion,                 // 400: not "HTTP/" DIGIT "." DIGIT
    UnsupportedVersion,         // 505: well-formed but not 1.0 or 1.1
    RequestLineTooLong,         // 414
    BadHeaderName,              // 400: empty, non-token, or whitespace before ':'
    BadHeaderValue,             // 400: control character in value
    ObsFold,                    // 400: continuation line
    BareCR,                     // 400: CR not followed by LF
    BareLF,                     // 400: LF not preceded by CR
    HeadersTooLarge,            // 431
    TooManyHeaders,             // 431
    BadContentLength,           // 400: empty, sign, non-digit, overflow
    ConflictingContentLength,   // 400: two different values
    ContentLengthWithChunked,   // 400: CL and TE together
    BadTransferEncoding,        // 400: empty/malformed list, TE on HTTP/1.0
    UnsupportedTransferCoding,  // 501: a coding other than a single final "chunked"
    MissingHost,                // 400: HTTP/1.1 without Host
    DuplicateHost,              // 400
    BadHost,                    // 400: Host value not uri-host [":" port]
};

// Status code the connection should answer for an error (400, 414, 431, 501, 505).
int status_for(ParseError e);
// Short human reason, used in logs and in the error body.
std::string_view describe(ParseError e);

using kiln::Header;
using kiln::Method;
Method method_from(std::string_view token);
std::string_view method_name(Method m);  // "GET", ...; "" for Other

struct RequestHead {
    // Request line.
    Method method = Method::Other;
    std::string_view method_token;   // as sent, e.g. "GET" or "PROPFIND"
    std::string_view target;         // as sent (origin-, absolute-, authority- or asterisk-form)
    std::string_view path;           // raw path of the target ("/" for absolute-form without one;
                                     // "*" for asterisk-form), not yet percent-decoded
    std::string_view query;          // raw, without '?'; empty if none
    uint8_t version_major = 1;       // 1, or 2 for an HTTP/2 stream
    uint8_t version_minor = 1;       // 0 or 1 (0 for HTTP/2)

    // Header fields, in order.
    Header headers[kMaxHeaderCount];
    size_t header_count = 0;

    // Framing and connection facts derived from the headers.
    std::string_view host;           // Host header, or the authority of an absolute-form target
    int64_t content_length = -1;     // -1: no Content-Length
    bool chunked = false;            // Transfer-Encoding: chunked
    bool keep_alive = true;          // after HTTP version and Connection tokens
    bool expect_continue = false;    // Expect: 100-continue
    bool upgrade = false;            // Connection: upgrade present
    // HTTP/2's extended CONNECT (RFC 8441): its :protocol, e.g. "websocket". Such a
    // request is routed as the GET HTTP/1.1 would send (method Get, method_token
    // "CONNECT"); its stream then carries the protocol. Empty otherwise.
    std::string_view protocol;

    // Case-insensitive lookup of the first field with this name.
    const Header* find(std::string_view name) const;
};

struct ParseResult {
    ParseStatus status = ParseStatus::Incomplete;
    ParseError error = ParseError::None;
    size_t consumed = 0;  // on Complete: bytes of the head, through the empty line
};

// Parses one request head from the start of `buf`. Incomplete means "read more and
// call again with the longer buffer" (the head is re-parsed from the start; callers
// avoid quadratic work by calling only when a new "\r\n\r\n" may have arrived, see
// head_may_be_complete). Leading empty lines before the request line are skipped
// (RFC 9112 §2.2) and counted in `consumed`.
ParseResult parse_request_head(std::string_view buf, RequestHead& out, const Limits& limits = {});

// Cheap pre-check before re-parsing a growing head: false when the bytes after
// from_hint (the previous size) hold no line end and cross no size limit, so parsing
// now would add nothing decisive. An error inside an unfinished line (e.g. a bad
// version byte) is then reported when that line ends or a limit is crossed: a
// bounded delay that keeps trickled heads linear instead of quadratic.
bool head_may_be_complete(std::string_view buf, size_t from_hint, const Limits& limits);

// Host = uri-host [ ":" port ] (RFC 9110 §7.2); empty is allowed.
bool valid_host(std::string_view host);

// ASCII case-insensitive equality (header names, tokens).
bool iequals(std::string_view a, std::string_view b);
// A comma-separated header list (Connection, Cache-Control, Vary, ...) holds `token`,
// case-insensitively; an item's parameters (";..." or "=...") are ignored.
bool list_has_token(std::string_view list, std::string_view token);

}  // namespace kiln::http
