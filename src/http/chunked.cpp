#include "http/chunked.hpp"

#include <cstring>

#include "http/chars.hpp"

namespace kiln::http {

ChunkedStatus ChunkedDecoder::decode(char* buf, size_t* read, size_t* write, size_t end,
                                     size_t max_body) {
    size_t r = *read, w = *write;
    auto out = [&](ChunkedStatus s) {
        *read = r;
        *write = w;
        return s;
    };
    while (r < end) {
        char c = buf[r];
        switch (state_) {
            case State::Size: {
                int v = chars::hex_digit(c);
                if (v >= 0) {
                    if (++size_digits_ > 15) return out(ChunkedStatus::Malformed);  // < 2^60
                    chunk_left_ = chunk_left_ * 16 + static_cast<uint64_t>(v);
                } else if (size_digits_ == 0) {
                    return out(ChunkedStatus::Malformed);
                } else if (c == ';' || chars::is_ows(c)) {
                    state_ = State::Ext;
                    line_empty_ = c != ';';  // in Ext: only BWS seen so far, ';' must come next
                } else if (c == '\r') {
                    state_ = State::SizeLF;
                } else {
                    return out(ChunkedStatus::Malformed);
                }
                ++r;
                if (++line_len_ > kMaxChunkLine) return out(ChunkedStatus::Malformed);
                break;
            }
            case State::Ext:
                // chunk-ext is ignored but must stay on its line and free of controls.
                // RFC 9112 §7.1.1: chunk-size [ BWS ";" ... ]; "5 5" is not a size of 5.
                if (c == '\r') state_ = State::SizeLF;
                else if (line_empty_ && !chars::is_ows(c) && c != ';') return out(ChunkedStatus::Malformed);
                else if (!chars::kFieldValue[static_cast<uint8_t>(c)]) return out(ChunkedStatus::Malformed);
                else if (c == ';') line_empty_ = false;
                ++r;
                if (++line_len_ > kMaxChunkLine) return out(ChunkedStatus::Malformed);
                break;
            case State::SizeLF:
                if (c != '\n') return out(ChunkedStatus::Malformed);
                ++r;
                line_len_ = 0;
                size_digits_ = 0;
                if (chunk_left_ == 0) {
                    state_ = State::Trailer;
                    line_empty_ = true;
                } else {
                    if (body_ + chunk_left_ > max_body) return out(ChunkedStatus::TooLarge);
                    state_ = State::Data;
                }
                break;
            case State::Data: {
                size_t n = end - r;
                if (n > chunk_left_) n = static_cast<size_t>(chunk_left_);
                if (w != r) std::memmove(buf + w, buf + r, n);
                r += n;
                w += n;
                chunk_left_ -= n;
                body_ += n;
                if (chunk_left_ == 0) state_ = State::DataCR;
                break;
            }
            case State::DataCR:
                if (c != '\r') return out(ChunkedStatus::Malformed);
                ++r;
                state_ = State::DataLF;
                break;
            case State::DataLF:
                if (c != '\n') return out(ChunkedStatus::Malformed);
                ++r;
                state_ = State::Size;
                break;
            case State::Trailer:
                // A trailer line is a field line: token name, ':', field value.
                if (c == '\r') {
                    if (in_name_) return out(ChunkedStatus::Malformed);  // no ':'
                    state_ = State::TrailerLF;
                } else if (line_empty_ || in_name_) {
                    if (c == ':' && !line_empty_) in_name_ = false;
                    else if (!chars::is_token(static_cast<uint8_t>(c))) return out(ChunkedStatus::Malformed);
                    else in_name_ = true;
                    line_empty_ = false;
                } else if (!chars::kFieldValue[static_cast<uint8_t>(c)]) {
                    return out(ChunkedStatus::Malformed);
                }
                ++r;
                if (++trailer_bytes_ > kMaxTrailerBytes) return out(ChunkedStatus::TrailersTooLarge);
                break;
            case State::TrailerLF:
                if (c != '\n') return out(ChunkedStatus::Malformed);
                ++r;
                if (++trailer_bytes_ > kMaxTrailerBytes) return out(ChunkedStatus::TrailersTooLarge);
                if (line_empty_) {
                    state_ = State::Done;
                    return out(ChunkedStatus::Done);
                }
                line_empty_ = true;
                state_ = State::Trailer;
                break;
            case State::Done:
                return out(ChunkedStatus::Done);
        }
    }
    return out(state_ == State::Done ? ChunkedStatus::Done : ChunkedStatus::NeedMore);
}

}  // namespace kiln::http
