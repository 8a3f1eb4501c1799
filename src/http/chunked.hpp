// Incremental decoder for the chunked transfer coding (RFC 9112 §7.1), in place:
// decoded payload is moved down over the framing inside the caller's buffer, so a
// chunked body ends up contiguous with no copy to another buffer. Pure: no I/O, no
// allocation. Trailer fields are validated and discarded.
#pragma once
#include <cstddef>
#include <cstdint>

#include "http/limits.hpp"

namespace kiln::http {

enum class ChunkedStatus : uint8_t { NeedMore, Done, Malformed, TooLarge, TrailersTooLarge };

class ChunkedDecoder {
public:
    // Decodes raw bytes buf[*read .. end). Payload bytes are written at buf[*write ..]
    // (always *write <= *read). Advances both. Done: the last chunk and trailers are
    // consumed, *read is one past the message. TooLarge: payload would pass max_body.
    ChunkedStatus decode(char* buf, size_t* read, size_t* write, size_t end, size_t max_body);

    uint64_t body_size() const { return body_; }

private:
    enum class State : uint8_t { Size, Ext, SizeLF, Data, DataCR, DataLF, Trailer, TrailerLF, Done };
    State state_ = State::Size;
    uint8_t size_digits_ = 0;
    bool line_empty_ = true;      // in Trailer: nothing on the current line yet
    bool in_name_ = false;        // in Trailer: inside the field name (before ':')
    uint64_t chunk_left_ = 0;
    uint64_t body_ = 0;
    size_t line_len_ = 0;         // bytes on the current size/trailer line
    size_t trailer_bytes_ = 0;
};

}  // namespace kiln::http
