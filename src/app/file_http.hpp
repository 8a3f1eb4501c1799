// The HTTP rules a static file answer follows, as pure functions over header values
// (no I/O, any thread): byte ranges (RFC 9110 §14), validators and conditional
// requests (§8.8, §13), and content-coding negotiation (§12.5.3). files.cpp applies
// them in the order of §13.2.2; they are apart so they can be tested one by one.
#pragma once
#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

namespace kiln::app {

// ------------------------------------------------------------------ Range

enum class RangeKind {
    Whole,          // serve the whole file with 200: no Range, a malformed one, an
                    // unknown unit, several ranges (kiln sends no multipart/byteranges),
                    // or an empty file (which has no byte to address)
    Single,         // one satisfiable range: 206 with Content-Range
    Unsatisfiable,  // 416 with "Content-Range: bytes */size"
};

struct RangeResult {
    RangeKind kind = RangeKind::Whole;
    uint64_t first = 0;   // for Single: first byte
    uint64_t length = 0;  // for Single: at least 1, first + length <= size
};

// Interprets a Range header value ("bytes=0-99", "bytes=500-", "bytes=-500") against
// a representation of `size` bytes. A last-pos past the end is clamped; a suffix
// longer than the file means the whole file (still a 206).
RangeResult parse_range(std::string_view header, uint64_t size);

// "bytes 0-99/1234" for a Single result; "bytes */1234" for Unsatisfiable.
std::string content_range(const RangeResult& r, uint64_t size);

// ------------------------------------------------------------------ validators

// The strong entity-tag kiln gives a file: size and modification time (nanoseconds)
// in hex, plus the content coding for a precompressed sibling, e.g. "\"1f4-17a3c9e8b2d1f000-br\"".
// Strong because a file with the same size and mtime is taken to be the same bytes,
// the assumption nginx and Apache also make; a change inside one mtime tick that
// keeps the size would go unseen.
std::string make_etag(uint64_t size, int64_t mtime_ns, std::string_view coding);

// If-None-Match (§13.1.2): true if `header` is "*" or lists an entity-tag that
// matches `etag` by the weak comparison (W/ prefixes ignored). A malformed list
// matches nothing from the point where it stops parsing.
bool none_match_hits(std::string_view header, std::string_view etag);
// If-Match (§13.1.1): true if `header` is "*" or lists an entity-tag equal to `etag`
// by the strong comparison (a weak tag never matches). False: 412.
bool match_hits(std::string_view header, std::string_view etag);
// If-Unmodified-Since (§13.1.4): false (412) only if the file changed after the
// date in `header`; an invalid date is true (the field is ignored).
bool unmodified_since(std::string_view header, time_t last_modified);

// If-Range (§13.1.5): true if the range may be served. An entity-tag must equal the
// strong `etag` exactly (a weak one never matches); an HTTP-date must equal the
// file's Last-Modified second exactly. Anything else is false (serve the whole file).
bool if_range_holds(std::string_view header, std::string_view etag, time_t last_modified);

// If-Modified-Since (§13.1.3): true if the file has not changed since the date in
// `header` (answer 304). An invalid date is false (the field is ignored).
bool not_modified_since(std::string_view header, time_t last_modified);

// ------------------------------------------------------------------ Accept-Encoding

// How much the client wants each precompressed coding: its qvalue in thousandths
// (0 = not acceptable). "x-gzip" counts as gzip; "*" covers codings not named.
// A missing header means no coding (identity only): kiln never guesses.
struct AcceptedCodings {
    int br = 0;
    int gzip = 0;
    int zstd = 0;
};
AcceptedCodings parse_accept_encoding(std::string_view header);

}  // namespace kiln::app
