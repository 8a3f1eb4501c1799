// Response head parsing and body framing for the load client (see the header).
#include "bench/response_parser.hpp"

#include <cstring>

namespace kiln::bench {
namespace {

constexpr uint64_t kMaxContentLength = uint64_t{1} << 62;

bool is_tchar(unsigned char c) {
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
    return c != 0 && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        unsigned char x = static_cast<unsigned char>(a[i]);
        unsigned char y = static_cast<unsigned char>(b[i]);
        if (x >= 'A' && x <= 'Z') x = static_cast<unsigned char>(x + 32);
        if (y >= 'A' && y <= 'Z') y = static_cast<unsigned char>(y + 32);
        if (x != y) return false;
    }
    return true;
}

std::string_view trim(std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
}

// Calls f(token) for each comma-separated, trimmed, non-empty token of v.
template <typename F>
void for_each_token(std::string_view v, F f) {
    while (!v.empty()) {
        size_t comma = v.find(',');
        std::string_view t = trim(v.substr(0, comma));
        if (!t.empty()) f(t);
        if (comma == std::string_view::npos) break;
        v.remove_prefix(comma + 1);
    }
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// "HTTP/1.x NNN[ reason]" without its CRLF.
ResponseError parse_status_line(std::string_view line, ResponseHead* out) {
    if (line.size() < 12 || line.substr(0, 7) != "HTTP/1." || line[7] < '0' || line[7] > '9' ||
        line[8] != ' ')
        return ResponseError::BadStatusLine;
    int status = 0;
    for (size_t i = 9; i < 12; ++i) {
        if (line[i] < '0' || line[i] > '9') return ResponseError::BadStatusLine;
        status = status * 10 + (line[i] - '0');
    }
    if (status < 100 || (line.size() > 12 && line[12] != ' ')) return ResponseError::BadStatusLine;
    for (unsigned char c : line.substr(12))
        if ((c < 0x20 && c != '\t') || c == 0x7f) return ResponseError::BadStatusLine;
    out->status = status;
    out->version_minor = static_cast<uint8_t>(line[7] - '0');
    return ResponseError::None;
}

}  // namespace

std::string_view describe(ResponseError e) {
    switch (e) {
        case ResponseError::None: return "no error";
        case ResponseError::BadStatusLine: return "bad status line";
        case ResponseError::BadHeader: return "bad header line";
        case ResponseError::BareLF: return "line not ended by CRLF";
        case ResponseError::BadContentLength: return "bad Content-Length";
        case ResponseError::LengthWithChunked: return "Content-Length with chunked Transfer-Encoding";
        case ResponseError::BadChunk: return "bad chunked framing";
        case ResponseError::TrailerTooLarge: return "chunked trailer too large";
        case ResponseError::Upgrade: return "unexpected 101 Switching Protocols";
    }
    return "unknown error";
}

ResponseError parse_response_head(std::string_view head, bool head_request, ResponseHead* out) {
    // Field by field: zeroing the whole struct (its Set-Cookie array) per response costs.
    out->status = 0;
    out->version_minor = 1;
    out->keep_alive = true;
    out->framing = BodyFraming::None;
    out->content_length = 0;
    out->set_cookie_count = 0;
    out->set_cookie_dropped = 0;
    size_t eol = head.find("\r\n");
    if (eol == std::string_view::npos) return ResponseError::BareLF;
    if (ResponseError e = parse_status_line(head.substr(0, eol), out); e != ResponseError::None)
        return e;

    bool has_length = false, has_te = false, chunked = false, close = false, keep = false;
    uint64_t length = 0;
    size_t pos = eol + 2;
    for (;;) {
        eol = head.find("\r\n", pos);
        if (eol == std::string_view::npos) return ResponseError::BareLF;
        std::string_view line = head.substr(pos, eol - pos);
        pos = eol + 2;
        if (line.empty()) break;
        size_t colon = line.find(':');
        if (colon == 0 || colon == std::string_view::npos) return ResponseError::BadHeader;
        std::string_view name = line.substr(0, colon);
        for (unsigned char c : name)
            if (!is_tchar(c)) return ResponseError::BadHeader;
        std::string_view value = trim(line.substr(colon + 1));
        for (unsigned char c : value)
            if ((c < 0x20 && c != '\t') || c == 0x7f || c == '\n' || c == '\r')
                return ResponseError::BadHeader;

        if (iequals(name, "content-length")) {
            if (value.empty()) return ResponseError::BadContentLength;
            uint64_t n = 0;
            for (char c : value) {
                if (c < '0' || c > '9') return ResponseError::BadContentLength;
                n = n * 10 + static_cast<uint64_t>(c - '0');
                if (n > kMaxContentLength) return ResponseError::BadContentLength;
            }
            if (has_length && n != length) return ResponseError::BadContentLength;
            has_length = true;
            length = n;
        } else if (iequals(name, "transfer-encoding")) {
            has_te = true;
            for_each_token(value, [&](std::string_view t) { chunked = iequals(t, "chunked"); });
        } else if (iequals(name, "connection")) {
            for_each_token(value, [&](std::string_view t) {
                if (iequals(t, "close")) close = true;
                if (iequals(t, "keep-alive")) keep = true;
            });
        } else if (iequals(name, "set-cookie")) {
            if (out->set_cookie_count < kMaxSetCookies)
                out->set_cookies[out->set_cookie_count++] = value;
            else
                ++out->set_cookie_dropped;
        }
    }

    out->keep_alive = out->version_minor >= 1 ? !close : (keep && !close);
    int s = out->status;
    if (head_request || s < 200 || s == 204 || s == 304) {
        out->framing = BodyFraming::None;
    } else if (has_te) {
        if (has_length) return ResponseError::LengthWithChunked;
        out->framing = chunked ? BodyFraming::Chunked : BodyFraming::UntilClose;
    } else if (has_length) {
        out->framing = BodyFraming::Length;
        out->content_length = length;
    } else {
        out->framing = BodyFraming::UntilClose;
    }
    if (out->framing == BodyFraming::UntilClose) out->keep_alive = false;
    return ResponseError::None;
}

void ResponseParser::reset(bool head_request) {
    state_ = State::HeadWait;
    head_request_ = head_request;
    error_ = ResponseError::None;
    scanned_ = 0;
    left_ = 0;
    body_bytes_ = 0;
    head_.set_cookie_count = 0;
    head_.set_cookie_dropped = 0;
}

ResponseParser::Step ResponseParser::feed(const char* data, size_t len, size_t* used,
                                          std::string* sink) {
    size_t pos = 0;
    *used = 0;
    for (;;) {
        switch (state_) {
            case State::HeadWait: {
                const char* h = data + pos;
                size_t n = len - pos;
                size_t i = scanned_;
                for (;;) {
                    const void* nl = i < n ? std::memchr(h + i, '\n', n - i) : nullptr;
                    if (nl == nullptr) {
                        scanned_ = n;
                        *used = pos;
                        return Step::NeedMore;
                    }
                    size_t j = static_cast<size_t>(static_cast<const char*>(nl) - h);
                    if (j == 0 || h[j - 1] != '\r') {
                        error_ = ResponseError::BareLF;
                        return Step::Error;
                    }
                    i = j + 1;
                    if (j == 1 || h[j - 2] == '\n') break;  // an empty line ends the head
                }
                error_ = parse_response_head(std::string_view(h, i), head_request_, &head_);
                if (error_ != ResponseError::None) return Step::Error;
                pos += i;
                scanned_ = 0;
                if (head_.status < 200) {
                    if (head_.status == 101) {
                        error_ = ResponseError::Upgrade;
                        return Step::Error;
                    }
                    continue;  // interim response: the final one follows
                }
                body_bytes_ = 0;
                switch (head_.framing) {
                    case BodyFraming::None: state_ = State::Done; break;
                    case BodyFraming::Length: state_ = State::Length; left_ = head_.content_length; break;
                    case BodyFraming::UntilClose: state_ = State::UntilClose; break;
                    case BodyFraming::Chunked:
                        state_ = State::Size;
                        size_digits_ = 0;
                        left_ = 0;
                        line_len_ = 0;
                        trailer_bytes_ = 0;
                        break;
                }
                *used = pos;
                return Step::Head;
            }
            case State::Length: {
                size_t avail = len - pos;
                size_t take = left_ < avail ? static_cast<size_t>(left_) : avail;
                if (sink != nullptr) sink->append(data + pos, take);
                pos += take;
                left_ -= take;
                body_bytes_ += take;
                *used = pos;
                if (left_ != 0) return Step::NeedMore;
                state_ = State::Done;
                return Step::Done;
            }
            case State::UntilClose: {
                if (sink != nullptr) sink->append(data + pos, len - pos);
                body_bytes_ += len - pos;
                *used = len;
                return Step::NeedMore;
            }
            case State::Done:
                *used = pos;
                return Step::Done;
            default: {
                size_t chunk_used = 0;
                Step s = chunked(data + pos, len - pos, &chunk_used, sink);
                *used = pos + chunk_used;
                return s;
            }
        }
    }
}

ResponseParser::Step ResponseParser::chunked(const char* data, size_t len, size_t* used,
                                             std::string* sink) {
    size_t i = 0;
    auto fail = [&](ResponseError e) {
        error_ = e;
        *used = i;
        return Step::Error;
    };
    while (i < len) {
        char c = data[i];
        switch (state_) {
            case State::Size: {
                int v = hex_value(c);
                if (v >= 0) {
                    if (size_digits_ == 15) return fail(ResponseError::BadChunk);
                    left_ = left_ * 16 + static_cast<uint64_t>(v);
                    ++size_digits_;
                    line_len_ = size_digits_;
                } else if (size_digits_ == 0) {
                    return fail(ResponseError::BadChunk);
                } else if (c == '\r') {
                    state_ = State::SizeLF;
                } else if (c == ';' || c == ' ' || c == '\t') {
                    state_ = State::Ext;
                } else {
                    return fail(ResponseError::BadChunk);
                }
                ++i;
                break;
            }
            case State::Ext:
                if (c == '\r') state_ = State::SizeLF;
                else if (c == '\n' || ++line_len_ > kMaxChunkLine) return fail(ResponseError::BadChunk);
                ++i;
                break;
            case State::SizeLF:
                if (c != '\n') return fail(ResponseError::BadChunk);
                ++i;
                if (left_ == 0) {
                    state_ = State::Trailer;
                    line_empty_ = true;
                } else {
                    state_ = State::Data;
                }
                break;
            case State::Data: {
                size_t avail = len - i;
                size_t take = left_ < avail ? static_cast<size_t>(left_) : avail;
                if (sink != nullptr) sink->append(data + i, take);
                i += take;
                left_ -= take;
                body_bytes_ += take;
                if (left_ == 0) state_ = State::DataCR;
                break;
            }
            case State::DataCR:
                if (c != '\r') return fail(ResponseError::BadChunk);
                state_ = State::DataLF;
                ++i;
                break;
            case State::DataLF:
                if (c != '\n') return fail(ResponseError::BadChunk);
                state_ = State::Size;
                size_digits_ = 0;
                line_len_ = 0;
                ++i;
                break;
            case State::Trailer:
                if (c == '\r') {
                    state_ = State::TrailerLF;
                } else if (c == '\n') {
                    return fail(ResponseError::BareLF);
                } else {
                    line_empty_ = false;
                    if (++trailer_bytes_ > kMaxTrailerBytes) return fail(ResponseError::TrailerTooLarge);
                }
                ++i;
                break;
            case State::TrailerLF:
                if (c != '\n') return fail(ResponseError::BareLF);
                ++i;
                if (line_empty_) {
                    state_ = State::Done;
                    *used = i;
                    return Step::Done;
                }
                line_empty_ = true;
                state_ = State::Trailer;
                break;
            default:
                return fail(ResponseError::BadChunk);
        }
    }
    *used = i;
    return Step::NeedMore;
}

bool ResponseParser::finish_at_eof() {
    if (state_ == State::UntilClose) state_ = State::Done;
    return state_ == State::Done;
}

}  // namespace kiln::bench
