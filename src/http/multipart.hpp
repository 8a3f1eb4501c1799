// Push parser for multipart/form-data (RFC 7578, RFC 2046 §5.1): fed chunks of any size
// (a delimiter may be split anywhere), it hands part heads and data to a MultipartSink.
// Data is never buffered; only a possible delimiter prefix is held back (as a count into
// the delimiter itself), so memory is O(boundary + max_part_header_bytes). Pure: no I/O,
// no exceptions; one parser per body, one thread. Strict: line ends must be CRLF (a bare
// LF is malformed), and a line that starts with the delimiter but goes on is malformed
// (RFC 2046 forbids it). Preamble and epilogue are ignored; a body that is only the
// close delimiter is an empty form.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/http_types.hpp>

namespace kiln::http {

inline constexpr size_t kMaxMultipartParts = 1000;            // more parts -> 413
inline constexpr size_t kMaxPartHeaderBytes = 8 * 1024;       // one part's head -> 413
inline constexpr size_t kMaxHeadersPerPart = 16;              // fields in one head -> 413
inline constexpr size_t kMaxBoundaryLength = 70;              // RFC 2046 §5.1.1

struct MultipartLimits {
    size_t max_parts = kMaxMultipartParts;
    size_t max_part_header_bytes = kMaxPartHeaderBytes;  // field lines and the empty line
    size_t max_headers_per_part = kMaxHeadersPerPart;
};

// Boundary parameter of a "multipart/form-data" Content-Type (type and parameter names
// case-insensitive, parameters in any order, value quoted or not). nullopt when the type
// is not multipart/form-data, the parameter is missing, repeated, or not a valid boundary.
// The view points into content_type.
std::optional<std::string_view> multipart_boundary(std::string_view content_type);

// 1..70 bytes of printable ASCII (SP allowed, not last): what MultipartParser accepts.
bool valid_boundary(std::string_view boundary);

enum class MultipartStatus : uint8_t { NeedMore, Done, Error };

enum class MultipartError : uint8_t {
    None,
    BadBoundary,       // 400: the boundary given to the parser is invalid
    NoBoundary,        // 400: the body ended and no delimiter was ever found
    BadDelimiter,      // 400: a delimiter line continues with other than padding + CRLF or "--"
    BareLF,            // 400: LF without CR on a delimiter line or in a part head
    BareCR,            // 400: CR not followed by LF in a part head
    BadHeader,         // 400: malformed field line in a part head (or obs-fold)
    BadDisposition,    // 400: Content-Disposition missing or repeated, not form-data, no
                       // name, a repeated or malformed parameter, filename* not UTF-8
                       // text (a control character or an invalid sequence decoded)
    HeadersTooLarge,   // 413: part head longer than max_part_header_bytes
    TooManyHeaders,    // 413: more than max_headers_per_part fields
    TooManyParts,      // 413: more than max_parts parts
    Truncated,         // 400: the body ended before the close delimiter ("--boundary--")
    Aborted,           // 400: the sink returned false (it may know a better status)
};

int status_for(MultipartError e);
std::string_view describe(MultipartError e);

// What the sink learns of a part before its data. Every view is valid only during
// on_part(); copy what must outlive it.
struct PartHead {
    size_t index = 0;                         // 0 for the first part
    std::string_view name;                    // Content-Disposition name, unquoted
    std::optional<std::string_view> filename; // filename*=UTF-8''... (decoded) if given, else
                                              // filename (unquoted); nullopt: not a file
    std::string_view content_type;            // as sent; "text/plain" when absent (RFC 7578 §4.4)
    std::string_view raw_headers;             // the field lines as sent, CRLF-separated
    const Header* headers = nullptr;          // the field lines split, in order
    size_t header_count = 0;

    // Case-insensitive lookup of the first field with this name.
    const Header* find(std::string_view field) const;
};

// Receives a body as it is parsed. Returning false from any call stops the parser with
// MultipartError::Aborted (e.g. a file larger than the application allows).
class MultipartSink {
public:
    virtual ~MultipartSink() = default;
    virtual bool on_part(const PartHead& head) = 0;
    // A piece of the current part's data; a part's data arrives in one or more pieces,
    // never empty ones. The view is valid only during the call.
    virtual bool on_data(std::string_view data) = 0;
    virtual bool on_part_end() = 0;
};

class MultipartParser {
public:
    // `boundary` is copied. An invalid boundary makes every call return Error (BadBoundary).
    explicit MultipartParser(std::string_view boundary, MultipartLimits limits = {});

    // Consumes all of `data`. NeedMore: feed the next chunk (or finish() at the end of the
    // body). Done: the close delimiter was seen; the rest is epilogue and is ignored,
    // as are later feeds. Error: see error(); later calls keep returning Error.
    MultipartStatus feed(std::string_view data, MultipartSink& sink);

    // The body has ended: Done if the close delimiter was seen, otherwise Error.
    MultipartStatus finish();

    MultipartError error() const { return error_; }
    size_t parts() const { return parts_; }  // part heads seen so far
    // Heap bytes the parser holds now (for tests of the memory bound).
    size_t buffered_bytes() const;

private:
    enum class State : uint8_t {
        Preamble,    // before the first delimiter: bytes discarded
        AfterDelim,  // right after "--boundary": "--", padding or CR
        Dash2,       // after "--boundary-": the second '-' of the close delimiter
        Padding,     // transport padding (SP/HTAB) before CRLF
        DelimLF,     // the LF that ends a delimiter line
        Head,        // a part's field lines, up to the empty line
        Data,        // a part's data, up to the next delimiter
        Done,
        Error,
    };

    size_t scan(std::string_view data, MultipartSink* sink, bool* found);
    size_t take_head(std::string_view data, MultipartSink& sink);
    bool parse_head();
    bool parse_disposition(std::string_view value);
    MultipartStatus fail(MultipartError e);

    std::string delim_;       // "\r\n--" boundary: the delimiter searched for
    MultipartLimits limits_;
    State state_ = State::Preamble;
    MultipartError error_ = MultipartError::None;
    bool seen_delimiter_ = false;
    bool has_filename_ = false;
    size_t matched_ = 0;      // bytes of delim_ matched at the end of the last feed
    size_t held_from_ = 0;    // delim_[0 .. held_from_) were not in the body (implied CRLF)
    size_t parts_ = 0;
    size_t line_start_ = 0;   // in Head: offset in head_ of the current line
    std::string head_;        // the current part's field lines, as received
    std::vector<Header> headers_;
    std::string name_, filename_;
};

}  // namespace kiln::http
