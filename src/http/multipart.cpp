#include "http/multipart.hpp"

#include <algorithm>
#include <cstring>

#include "http/chars.hpp"
#include "http/parser.hpp"
#include "http/url.hpp"
#include "http/ws_frame.hpp"  // Utf8Stream

namespace kiln::http {
namespace {

using chars::is_ows;

constexpr std::string_view kImpliedCRLF = "\r\n";

size_t skip_ows(std::string_view v, size_t i) {
    while (i < v.size() && is_ows(v[i])) ++i;
    return i;
}

// Walks a header value of the form `type *( OWS ";" OWS name "=" value )` (RFC 9110
// §5.6.6), where value is a quoted-string or a run of bytes other than ';', '"' and
// whitespace (more lenient than token: clients send '=' and '/' unquoted in
// boundaries). Sets *type; calls fn(name, value, quoted) with the raw inner text of a
// quoted value (escapes not yet removed). False on malformed syntax or when fn says so.
template <class Fn>
bool parse_params(std::string_view v, std::string_view* type, Fn&& fn) {
    size_t n = v.size(), i = skip_ows(v, 0), start = i;
    while (i < n && v[i] != ';' && !is_ows(v[i])) ++i;
    *type = v.substr(start, i - start);
    i = skip_ows(v, i);
    while (i < n) {
        if (v[i] != ';') return false;
        i = skip_ows(v, i + 1);
        if (i == n || v[i] == ';') continue;  // empty parameter: tolerated
        start = i;
        while (i < n && chars::is_token(static_cast<uint8_t>(v[i]))) ++i;
        std::string_view name = v.substr(start, i - start);
        i = skip_ows(v, i);
        if (name.empty() || i == n || v[i] != '=') return false;
        i = skip_ows(v, i + 1);
        bool quoted = i < n && v[i] == '"';
        if (quoted) {
            start = ++i;
            while (i < n && v[i] != '"') i += (v[i] == '\\' && i + 1 < n) ? 2 : 1;
            if (i >= n) return false;  // unterminated quoted-string
        } else {
            start = i;
            while (i < n && v[i] != ';' && v[i] != '"' && !is_ows(v[i])) ++i;
            if (i == start || (i < n && v[i] == '"')) return false;
        }
        if (!fn(name, v.substr(start, i - start), quoted)) return false;
        i = skip_ows(v, i + (quoted ? 1 : 0));
    }
    return true;
}

// Removes quoted-pair escapes. Only \" and \\ are escapes: browsers send Windows paths
// with bare backslashes (HTML's form encoding escapes '"' as %22, never with '\').
void unquote(std::string_view raw, bool quoted, std::string& out) {
    out.clear();
    for (size_t i = 0; i < raw.size(); ++i) {
        if (quoted && raw[i] == '\\' && i + 1 < raw.size() && (raw[i + 1] == '"' || raw[i + 1] == '\\')) ++i;
        out.push_back(raw[i]);
    }
}

// RFC 8187 ext-value: charset "'" [language] "'" pct-encoded bytes; only UTF-8, and
// what it decodes to must be UTF-8 text (no control character), as a plain filename is.
bool decode_ext_value(std::string_view v, std::string& out) {
    size_t q1 = v.find('\'');
    size_t q2 = q1 == v.npos ? v.npos : v.find('\'', q1 + 1);
    if (q2 == v.npos || !iequals(v.substr(0, q1), "UTF-8")) return false;
    if (!decode_component(v.substr(q2 + 1), out, false)) return false;
    for (char c : out)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
    ws::Utf8Stream utf8;
    return utf8.feed(out) && utf8.complete();
}

}  // namespace

bool valid_boundary(std::string_view b) {
    if (b.empty() || b.size() > kMaxBoundaryLength || b.back() == ' ') return false;
    for (char c : b)
        if (c < 0x20 || c > 0x7e) return false;
    return true;
}

std::optional<std::string_view> multipart_boundary(std::string_view content_type) {
    std::string_view type, boundary;
    bool found = false;
    bool ok = parse_params(content_type, &type, [&](std::string_view name, std::string_view value, bool) {
        if (!iequals(name, "boundary")) return true;
        if (found || value.find('\\') != value.npos) return false;  // repeated, or escapes
        found = true;
        boundary = value;
        return true;
    });
    if (!ok || !found || !iequals(type, "multipart/form-data") || !valid_boundary(boundary))
        return std::nullopt;
    return boundary;
}

const Header* PartHead::find(std::string_view field) const {
    for (size_t i = 0; i < header_count; ++i)
        if (iequals(headers[i].name, field)) return &headers[i];
    return nullptr;
}

MultipartParser::MultipartParser(std::string_view boundary, MultipartLimits limits)
    : limits_(limits) {
    if (!valid_boundary(boundary)) {
        fail(MultipartError::BadBoundary);
        return;
    }
    delim_.reserve(4 + boundary.size());
    delim_.append("\r\n--").append(boundary);
    // The body may open with "--boundary" directly: behave as if a CRLF came first.
    matched_ = held_from_ = kImpliedCRLF.size();
}

MultipartStatus MultipartParser::fail(MultipartError e) {
    if (state_ != State::Error) error_ = e;
    state_ = State::Error;
    return MultipartStatus::Error;
}

size_t MultipartParser::buffered_bytes() const {
    return delim_.capacity() + head_.capacity() + headers_.capacity() * sizeof(Header) +
           name_.capacity() + filename_.capacity();
}

MultipartStatus MultipartParser::feed(std::string_view data, MultipartSink& sink) {
    size_t i = 0;
    while (true) {
        if (state_ == State::Done) return MultipartStatus::Done;
        if (state_ == State::Error) return MultipartStatus::Error;
        if (i == data.size()) return MultipartStatus::NeedMore;
        char c = data[i];
        switch (state_) {
            case State::Preamble:
            case State::Data: {
                bool in_part = state_ == State::Data, found = false;
                i += scan(data.substr(i), in_part ? &sink : nullptr, &found);
                if (!found || state_ == State::Error) break;
                seen_delimiter_ = true;
                if (in_part && !sink.on_part_end()) return fail(MultipartError::Aborted);
                state_ = State::AfterDelim;
                break;
            }
            case State::AfterDelim:
            case State::Padding:
                ++i;
                if (c == '-' && state_ == State::AfterDelim) state_ = State::Dash2;
                else if (is_ows(c)) state_ = State::Padding;
                else if (c == '\r') state_ = State::DelimLF;
                else return fail(c == '\n' ? MultipartError::BareLF : MultipartError::BadDelimiter);
                break;
            case State::Dash2:
                ++i;
                if (c != '-') return fail(MultipartError::BadDelimiter);
                state_ = State::Done;
                break;
            case State::DelimLF:
                ++i;
                if (c != '\n') return fail(MultipartError::BadDelimiter);
                if (parts_ == limits_.max_parts) return fail(MultipartError::TooManyParts);
                head_.clear();
                line_start_ = 0;
                state_ = State::Head;
                break;
            case State::Head:
                i += take_head(data.substr(i), sink);
                break;
            case State::Done:
            case State::Error:
                break;
        }
    }
}

MultipartStatus MultipartParser::finish() {
    if (state_ == State::Done) return MultipartStatus::Done;
    if (state_ == State::Error) return MultipartStatus::Error;
    return fail(seen_delimiter_ ? MultipartError::Truncated : MultipartError::NoBoundary);
}

// Looks for the delimiter in `d`, passing the bytes before it to the sink (if any).
// Returns the bytes consumed: through the delimiter when *found, else all of `d`, the
// tail that may start a delimiter being remembered in matched_. Held-back bytes are a
// prefix of delim_, so they are re-emitted from delim_ itself when the match fails:
// since delim_ has no CR after its first byte, the failing byte may only start a new
// match from scratch.
size_t MultipartParser::scan(std::string_view d, MultipartSink* sink, bool* found) {
    auto emit = [&](std::string_view s) {
        if (sink == nullptr || s.empty() || sink->on_data(s)) return true;
        fail(MultipartError::Aborted);
        return false;
    };
    const size_t n = d.size(), m = delim_.size();
    size_t i = 0;
    while (matched_ > 0) {  // a match carried over from the previous feed
        if (i == n) return n;
        if (d[i] == delim_[matched_]) {
            ++i;
            if (++matched_ == m) {
                matched_ = held_from_ = 0;
                *found = true;
                return i;
            }
            continue;
        }
        std::string_view held(delim_.data() + held_from_, matched_ - held_from_);
        matched_ = held_from_ = 0;
        if (!emit(held)) return i;
    }
    size_t run = i;
    while (i < n) {
        const void* cr = std::memchr(d.data() + i, '\r', n - i);
        if (cr == nullptr) break;
        size_t j = static_cast<size_t>(static_cast<const char*>(cr) - d.data());
        size_t k = std::min(m, n - j);
        if (std::memcmp(d.data() + j, delim_.data(), k) == 0) {
            if (!emit(d.substr(run, j - run))) return j;
            if (k == m) {
                *found = true;
                return j + m;
            }
            matched_ = k;  // the feed ends inside a possible delimiter
            return n;
        }
        i = j + 1;
    }
    emit(d.substr(run));
    return n;
}

// Appends to the part head up to its empty line, then announces the part.
size_t MultipartParser::take_head(std::string_view d, MultipartSink& sink) {
    for (size_t i = 0; i < d.size(); ++i) {
        char c = d[i];
        size_t len = head_.size();
        if (len == limits_.max_part_header_bytes) {
            fail(MultipartError::HeadersTooLarge);
            return i;
        }
        if (len > 0 && head_[len - 1] == '\r' && c != '\n') {
            fail(MultipartError::BareCR);
            return i;
        }
        head_.push_back(c);
        if (c != '\n') continue;
        if (len == 0 || head_[len - 1] != '\r') {
            fail(MultipartError::BareLF);
            return i;
        }
        if (len - 1 > line_start_) {  // a field line ended
            line_start_ = len + 1;
            continue;
        }
        if (!parse_head()) return i + 1;
        PartHead head;
        head.index = parts_++;
        head.name = name_;
        if (has_filename_) head.filename = std::string_view(filename_);
        head.raw_headers = std::string_view(head_).substr(0, head_.size() - 2);
        head.headers = headers_.data();
        head.header_count = headers_.size();
        const Header* type = head.find("Content-Type");
        head.content_type = type != nullptr ? type->value : std::string_view("text/plain");
        if (!sink.on_part(head)) {
            fail(MultipartError::Aborted);
            return i + 1;
        }
        // The CRLF that ended the head may also open the next delimiter (a part with
        // no body at all, RFC 2046 body-part := headers [CRLF *OCTET]).
        state_ = State::Data;
        matched_ = held_from_ = kImpliedCRLF.size();
        return i + 1;
    }
    return d.size();
}

// Splits the head into fields and reads Content-Disposition.
bool MultipartParser::parse_head() {
    headers_.clear();
    std::string_view block(head_.data(), head_.size() - 2);  // without the empty line
    const Header* disposition = nullptr;
    while (!block.empty()) {
        size_t eol = block.find("\r\n");
        std::string_view line = block.substr(0, eol);
        block.remove_prefix(eol + 2);
        size_t colon = line.find(':');
        if (is_ows(line[0]) || colon == line.npos || colon == 0) return fail(MultipartError::BadHeader), false;
        std::string_view name = line.substr(0, colon), value = line.substr(colon + 1);
        for (char c : name)
            if (!chars::is_token(static_cast<uint8_t>(c))) return fail(MultipartError::BadHeader), false;
        for (char c : value)
            if (!chars::kFieldValue[static_cast<uint8_t>(c)]) return fail(MultipartError::BadHeader), false;
        while (!value.empty() && is_ows(value.front())) value.remove_prefix(1);
        while (!value.empty() && is_ows(value.back())) value.remove_suffix(1);
        if (headers_.size() == limits_.max_headers_per_part) return fail(MultipartError::TooManyHeaders), false;
        headers_.push_back({name, value});
    }
    for (const Header& h : headers_) {
        if (!iequals(h.name, "Content-Disposition")) continue;
        if (disposition != nullptr) return fail(MultipartError::BadDisposition), false;
        disposition = &h;
    }
    if (disposition == nullptr || !parse_disposition(disposition->value))
        return fail(MultipartError::BadDisposition), false;
    return true;
}

// `form-data; name="..."[; filename="..."][; filename*=UTF-8''...]`. name is required;
// each parameter at most once; other parameters are ignored.
bool MultipartParser::parse_disposition(std::string_view value) {
    bool has_name = false, has_plain = false, has_ext = false;
    std::string ext;
    std::string_view type;
    bool ok = parse_params(value, &type, [&](std::string_view key, std::string_view v, bool quoted) {
        if (iequals(key, "name")) {
            if (has_name) return false;
            has_name = true;
            unquote(v, quoted, name_);
        } else if (iequals(key, "filename")) {
            if (has_plain) return false;
            has_plain = true;
            unquote(v, quoted, filename_);
        } else if (iequals(key, "filename*")) {
            if (has_ext) return false;
            has_ext = true;
            std::string raw;
            unquote(v, quoted, raw);
            if (!decode_ext_value(raw, ext)) return false;
        }
        return true;
    });
    if (!ok || !has_name || !iequals(type, "form-data")) return false;
    if (has_ext) filename_ = std::move(ext);
    has_filename_ = has_plain || has_ext;
    return true;
}

int status_for(MultipartError e) {
    switch (e) {
        case MultipartError::None: return 200;
        case MultipartError::HeadersTooLarge:
        case MultipartError::TooManyHeaders:
        case MultipartError::TooManyParts: return 413;
        default: return 400;
    }
}

std::string_view describe(MultipartError e) {
    switch (e) {
        case MultipartError::None: return "no error";
        case MultipartError::BadBoundary: return "invalid multipart boundary";
        case MultipartError::NoBoundary: return "no multipart delimiter in the body";
        case MultipartError::BadDelimiter: return "malformed multipart delimiter line";
        case MultipartError::BareLF: return "LF without CR in multipart body";
        case MultipartError::BareCR: return "CR not followed by LF in a part head";
        case MultipartError::BadHeader: return "malformed header field in a part head";
        case MultipartError::BadDisposition: return "missing or invalid Content-Disposition in a part";
        case MultipartError::HeadersTooLarge: return "part head too large";
        case MultipartError::TooManyHeaders: return "too many header fields in a part";
        case MultipartError::TooManyParts: return "too many parts";
        case MultipartError::Truncated: return "multipart body ended before the close delimiter";
        case MultipartError::Aborted: return "multipart parsing stopped by the application";
    }
    return "unknown error";
}

}  // namespace kiln::http
