// HTTP/1.1 response parser for the load client, incremental and in place: the
// caller feeds the unread bytes of its read buffer, the parser says how many it
// used and what happened (head complete, message complete, need more, error).
// Pure: no I/O, no allocation except appending body bytes to an optional sink.
// The head (status, framing, Set-Cookie views) must fit in one buffer; its
// string_views point into the caller's buffer and are valid only until the caller
// moves or overwrites those bytes, so it handles Step::Head before feeding again.
// Interim 1xx responses (other than 101) are skipped; 101 is an error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::bench {

inline constexpr size_t kMaxSetCookies = 32;       // more are counted, not kept
inline constexpr size_t kMaxChunkLine = 1024;      // chunk-size line incl. extensions
inline constexpr size_t kMaxTrailerBytes = 16384;

enum class ResponseError : uint8_t {
    None,
    BadStatusLine,       // not "HTTP/1.x NNN reason"
    BadHeader,           // no ':', whitespace before ':', empty name, control byte
    BareLF,              // line not ended by CRLF
    BadContentLength,    // non-digit, overflow, two different values
    LengthWithChunked,   // Content-Length and Transfer-Encoding: chunked together
    BadChunk,            // chunk-size line or chunk framing malformed
    TrailerTooLarge,
    Upgrade,             // 101 Switching Protocols: never asked for
};
std::string_view describe(ResponseError e);

enum class BodyFraming : uint8_t { None, Length, Chunked, UntilClose };

struct ResponseHead {
    int status = 0;
    uint8_t version_minor = 1;
    bool keep_alive = true;          // after version and Connection tokens
    BodyFraming framing = BodyFraming::None;
    uint64_t content_length = 0;     // when framing == Length
    std::string_view set_cookies[kMaxSetCookies];
    size_t set_cookie_count = 0;
    size_t set_cookie_dropped = 0;   // Set-Cookie fields beyond kMaxSetCookies
};

// Parses one complete head (`head` ends just after its blank line). Returns None
// and fills *out, or the error. `head_request`: the request was HEAD, no body follows.
ResponseError parse_response_head(std::string_view head, bool head_request, ResponseHead* out);

class ResponseParser {
public:
    enum class Step : uint8_t {
        NeedMore,   // all offered bytes used (or a partial head kept): read more
        Head,       // the final head is parsed: head() is valid, feed the rest again
        Done,       // the message is complete; *used stops just past it
        Error,      // error() says why; the connection must be closed
    };

    // Starts a new response. `head_request`: the request was HEAD (no body).
    void reset(bool head_request = false);

    // Offers data[0..len). Sets *used to the bytes consumed (0 while a head is
    // incomplete: the caller keeps them and offers them again with more appended).
    // Body bytes are appended to `sink` when it is not null.
    Step feed(const char* data, size_t len, size_t* used, std::string* sink = nullptr);

    // The peer closed the connection. True if that completes the response (a body
    // delimited by the close, or a message already Done); false: it was cut short.
    bool finish_at_eof();

    const ResponseHead& head() const { return head_; }
    ResponseError error() const { return error_; }
    bool in_body() const { return state_ != State::HeadWait; }
    uint64_t body_bytes() const { return body_bytes_; }
    // Bytes scanned in the current head without finding its end (caller limits it).
    size_t head_scanned() const { return scanned_; }

private:
    enum class State : uint8_t { HeadWait, Length, UntilClose, Size, Ext, SizeLF,
                                 Data, DataCR, DataLF, Trailer, TrailerLF, Done };
    Step chunked(const char* data, size_t len, size_t* used, std::string* sink);

    State state_ = State::HeadWait;
    bool head_request_ = false;
    ResponseHead head_;
    ResponseError error_ = ResponseError::None;
    size_t scanned_ = 0;          // bytes of the pending head already searched
    uint64_t left_ = 0;           // Length: body bytes left; Data: chunk bytes left
    uint64_t body_bytes_ = 0;
    uint8_t size_digits_ = 0;
    size_t line_len_ = 0;
    bool line_empty_ = true;
    size_t trailer_bytes_ = 0;
};

}  // namespace kiln::bench
