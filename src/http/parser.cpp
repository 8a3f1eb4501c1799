#include "http/parser.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "http/chars.hpp"

namespace kiln::http {
namespace {

using chars::is_ows;
using chars::lower;

struct Cursor {
    const char* p;
    const char* end;
};

// RFC 9112 §2.2: empty lines before the request line are ignored. The bytes of the
// CRLFs at the start of buf; the parser and head_may_be_complete count the request
// line from there alike.
size_t leading_empty_lines(std::string_view buf) {
    size_t n = 0;
    while (buf.size() - n >= 2 && buf[n] == '\r' && buf[n + 1] == '\n') n += 2;
    return n;
}

// Iterates the comma-separated elements of a list-valued field (RFC 9110 §5.6.1),
// trimming OWS; calls fn(element) for each, including empty ones.
template <class Fn>
void for_each_element(std::string_view v, Fn&& fn) {
    size_t i = 0;
    while (true) {
        size_t comma = v.find(',', i);
        std::string_view e = v.substr(i, comma == std::string_view::npos ? v.npos : comma - i);
        while (!e.empty() && is_ows(e.front())) e.remove_prefix(1);
        while (!e.empty() && is_ows(e.back())) e.remove_suffix(1);
        fn(e);
        if (comma == std::string_view::npos) break;
        i = comma + 1;
    }
}

bool parse_decimal(std::string_view v, int64_t* out) {
    if (v.empty() || v.size() > 18) return false;  // 18 digits cannot overflow int64
    int64_t n = 0;
    for (char c : v) {
        if (c < '0' || c > '9') return false;
        n = n * 10 + (c - '0');
    }
    *out = n;
    return true;
}

bool starts_with_icase(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

// Splits the request target into path, query and (absolute-form) host.
bool split_target(RequestHead& h) {
    std::string_view t = h.target;
    if (t[0] == '/') {
        size_t q = t.find('?');
        h.path = t.substr(0, q);
        h.query = q == t.npos ? std::string_view() : t.substr(q + 1);
        return true;
    }
    if (t == "*") {
        if (h.method != Method::Options) return false;
        h.path = t;
        return true;
    }
    if (h.method == Method::Connect) {  // authority-form: host:port
        h.path = {};
        return t.find('/') == t.npos;
    }
    size_t scheme_len = starts_with_icase(t, "http://") ? 7 : starts_with_icase(t, "https://") ? 8 : 0;
    if (scheme_len == 0) return false;
    std::string_view rest = t.substr(scheme_len);
    size_t end = rest.find_first_of("/?");
    std::string_view authority = rest.substr(0, end);
    if (authority.empty() || authority.find('@') != authority.npos) return false;
    h.host = authority;
    std::string_view pq = end == rest.npos ? std::string_view() : rest.substr(end);
    size_t q = pq.find('?');
    h.path = pq.substr(0, q);
    if (h.path.empty()) h.path = "/";  // static storage, not the buffer
    h.query = q == pq.npos ? std::string_view() : pq.substr(q + 1);
    return true;
}

// Host = uri-host [ ":" port ] (RFC 9110 §7.2): reg-name or IPv4 characters, or an
// IP-literal in brackets; empty is allowed (the target has no authority).
bool host_ok(std::string_view h) {
    size_t i = 0;
    if (!h.empty() && h[0] == '[') {
        size_t close = h.find(']');
        if (close == h.npos || close == 1) return false;
        for (char c : h.substr(1, close - 1))
            if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.')) return false;
        i = close + 1;
    } else {
        for (; i < h.size() && h[i] != ':'; ++i)
            if (!chars::kHost[static_cast<uint8_t>(h[i])]) return false;
    }
    if (i == h.size()) return true;
    if (h[i] != ':') return false;
    for (++i; i < h.size(); ++i)
        if (h[i] < '0' || h[i] > '9') return false;
    return true;
}

// Applies the framing rules of RFC 9112 §6 to the parsed fields.
ParseError interpret_fields(RequestHead& h) {
    bool saw_host = false, saw_te = false, te_final_chunked = false, te_saw_chunked = false,
         te_chunked_twice = false;
    bool te_unsupported = false, te_malformed = false, conn_close = false, conn_keep_alive = false;
    bool absolute_host = !h.host.empty();
    for (size_t i = 0; i < h.header_count; ++i) {
        const Header& f = h.headers[i];
        std::string_view n = f.name;
        switch (lower(n[0])) {
            case 'h':
                if (iequals(n, "host")) {
                    if (saw_host) return ParseError::DuplicateHost;
                    saw_host = true;
                    if (!absolute_host) h.host = f.value;
                }
                break;
            case 'c':
                if (iequals(n, "content-length")) {
                    int64_t len;
                    if (!parse_decimal(f.value, &len)) return ParseError::BadContentLength;
                    if (h.content_length >= 0 && h.content_length != len)
                        return ParseError::ConflictingContentLength;
                    h.content_length = len;
                } else if (iequals(n, "connection")) {
                    for_each_element(f.value, [&](std::string_view e) {
                        if (iequals(e, "close")) conn_close = true;
                        else if (iequals(e, "keep-alive")) conn_keep_alive = true;
                        else if (iequals(e, "upgrade")) h.upgrade = true;
                    });
                }
                break;
            case 't':
                if (iequals(n, "transfer-encoding")) {
                    saw_te = true;
                    for_each_element(f.value, [&](std::string_view e) {
                        if (e.empty()) return;  // empty list elements are allowed and ignored
                        if (iequals(e, "chunked")) {
                            // RFC 9112 §6.1: chunked at most once, adjacent or not.
                            te_chunked_twice = te_chunked_twice || te_saw_chunked;
                            te_saw_chunked = te_final_chunked = true;
                            return;
                        }
                        te_final_chunked = false;
                        bool token = true;
                        for (char c : e) token = token && chars::is_token(static_cast<uint8_t>(c));
                        if (token) te_unsupported = true;
                        else te_malformed = true;
                    });
                }
                break;
            case 'e':
                if (iequals(n, "expect") && iequals(f.value, "100-continue")) h.expect_continue = true;
                break;
        }
    }
    if (saw_te) {
        if (h.version_minor == 0 || te_malformed || te_chunked_twice) return ParseError::BadTransferEncoding;
        if (h.content_length >= 0) return ParseError::ContentLengthWithChunked;
        if (!te_final_chunked) return ParseError::BadTransferEncoding;  // length undeterminable (§6.3)
        if (te_unsupported) return ParseError::UnsupportedTransferCoding;
        h.chunked = true;
    }
    if (h.version_minor == 1 && !saw_host) return ParseError::MissingHost;
    if (!host_ok(h.host)) return ParseError::BadHost;
    if (h.version_minor == 0) h.expect_continue = false;
    h.keep_alive = h.version_minor == 1 ? !conn_close : (conn_keep_alive && !conn_close);
    return ParseError::None;
}

ParseResult error(ParseError e) { return {ParseStatus::Error, e, 0}; }
ParseResult incomplete() { return {ParseStatus::Incomplete, ParseError::None, 0}; }

}  // namespace

bool valid_host(std::string_view host) { return host_ok(host); }

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

bool list_has_token(std::string_view list, std::string_view token) {
    while (!list.empty()) {
        size_t comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        list = comma == list.npos ? std::string_view() : list.substr(comma + 1);
        item = chars::trim_ows(item);
        item = item.substr(0, item.find_first_of(" \t=;"));
        if (iequals(item, token)) return true;
    }
    return false;
}

const Header* RequestHead::find(std::string_view name) const {
    for (size_t i = 0; i < header_count; ++i)
        if (iequals(headers[i].name, name)) return &headers[i];
    return nullptr;
}

Method method_from(std::string_view t) {
    switch (t.size()) {
        case 3:
            if (t == "GET") return Method::Get;
            if (t == "PUT") return Method::Put;
            break;
        case 4:
            if (t == "POST") return Method::Post;
            if (t == "HEAD") return Method::Head;
            break;
        case 5:
            if (t == "PATCH") return Method::Patch;
            if (t == "TRACE") return Method::Trace;
            break;
        case 6:
            if (t == "DELETE") return Method::Delete;
            break;
        case 7:
            if (t == "OPTIONS") return Method::Options;
            if (t == "CONNECT") return Method::Connect;
            break;
    }
    return Method::Other;
}

std::string_view method_name(Method m) {
    static constexpr std::string_view names[] = {"GET",   "HEAD",    "POST",    "PUT",   "DELETE",
                                                 "PATCH", "OPTIONS", "CONNECT", "TRACE", ""};
    return names[static_cast<size_t>(m)];
}

ParseResult parse_request_head(std::string_view buf, RequestHead& h, const Limits& limits) {
    const char* const begin = buf.data();
    const char* p = begin;
    const char* const end = begin + buf.size();

    // The empty lines skipped before the request line count toward the request-line
    // limit too, so a peer sending only CRLFs is cut off instead of filling the buffer.
    p += leading_empty_lines(buf);
    if (static_cast<size_t>(p - begin) > limits.max_request_line) return error(ParseError::RequestLineTooLong);
    if (p < end && *p == '\r' && end - p < 2) return incomplete();
    const char* const line_start = p;
    auto line_too_long = [&] { return static_cast<size_t>(p - line_start) > limits.max_request_line; };

    // method SP
    const char* tok = p;
    while (p < end && chars::is_token(static_cast<uint8_t>(*p))) ++p;
    if (p == end) return line_too_long() ? error(ParseError::RequestLineTooLong) : incomplete();
    if (*p != ' ' || p == tok) return error(ParseError::BadMethod);
    h.method_token = std::string_view(tok, p - tok);
    h.method = method_from(h.method_token);
    ++p;

    // request-target SP
    tok = p;
    p = chars::skip_target(p, end);
    while (p < end && chars::kTarget[static_cast<uint8_t>(*p)]) ++p;
    if (p == end) return line_too_long() ? error(ParseError::RequestLineTooLong) : incomplete();
    if (*p != ' ' || p == tok) return error(ParseError::BadTarget);
    h.target = std::string_view(tok, p - tok);
    ++p;

    // HTTP-version CRLF
    if (end - p < 10) {
        // Validate the prefix we have, so garbage is rejected without waiting.
        static constexpr char kProto[] = "HTTP/";
        for (const char* q = p; q < end && q - p < 5; ++q)
            if (*q != kProto[q - p]) return error(ParseError::BadVersion);
        return line_too_long() ? error(ParseError::RequestLineTooLong) : incomplete();
    }
    if (std::memcmp(p, "HTTP/", 5) != 0 || p[5] < '0' || p[5] > '9' || p[6] != '.' || p[7] < '0' ||
        p[7] > '9')
        return error(ParseError::BadVersion);
    if (p[8] != '\r') return error(p[8] == '\n' ? ParseError::BareLF : ParseError::BadVersion);
    if (p[9] != '\n') return error(ParseError::BareCR);
    if (p[5] != '1') return error(ParseError::UnsupportedVersion);
    // RFC 9112 §2.3: a higher 1.x minor version is processed as 1.1.
    h.version_major = 1;
    h.version_minor = p[7] == '0' ? 0 : 1;
    p += 10;
    if (static_cast<size_t>(p - line_start) - 2 > limits.max_request_line)
        return error(ParseError::RequestLineTooLong);

    // header fields
    const char* const fields_start = p;
    auto fields_too_large = [&] { return static_cast<size_t>(p - fields_start) > limits.max_header_bytes; };
    h.header_count = 0;
    while (true) {
        if (p == end) return fields_too_large() ? error(ParseError::HeadersTooLarge) : incomplete();
        if (*p == '\r') {
            if (end - p < 2) return incomplete();
            if (p[1] != '\n') return error(ParseError::BareCR);
            p += 2;
            break;
        }
        if (*p == '\n') return error(ParseError::BareLF);
        if (is_ows(*p)) return error(ParseError::ObsFold);
        if (h.header_count == limits.max_header_count) return error(ParseError::TooManyHeaders);

        tok = p;
        while (p < end && chars::is_token(static_cast<uint8_t>(*p))) ++p;
        if (p == end) return fields_too_large() ? error(ParseError::HeadersTooLarge) : incomplete();
        if (*p != ':' || p == tok) return error(ParseError::BadHeaderName);
        std::string_view name(tok, p - tok);
        ++p;
        while (p < end && is_ows(*p)) ++p;
        tok = p;
        p = chars::skip_field_value(p, end);
        while (p < end && chars::kFieldValue[static_cast<uint8_t>(*p)]) ++p;
        if (p == end) return fields_too_large() ? error(ParseError::HeadersTooLarge) : incomplete();
        if (*p == '\n') return error(ParseError::BareLF);
        if (*p != '\r') return error(ParseError::BadHeaderValue);
        if (end - p < 2) return fields_too_large() ? error(ParseError::HeadersTooLarge) : incomplete();
        if (p[1] != '\n') return error(ParseError::BareCR);
        const char* vend = p;
        while (vend > tok && is_ows(vend[-1])) --vend;
        h.headers[h.header_count++] = Header{name, std::string_view(tok, vend - tok)};
        p += 2;
        if (fields_too_large()) return error(ParseError::HeadersTooLarge);
    }

    h.host = {};
    h.path = {};
    h.query = {};
    h.content_length = -1;
    h.chunked = h.expect_continue = h.upgrade = false;
    h.protocol = {};
    if (!split_target(h)) return error(ParseError::BadTarget);
    if (ParseError e = interpret_fields(h); e != ParseError::None) return error(e);
    return {ParseStatus::Complete, ParseError::None, static_cast<size_t>(p - begin)};
}

bool head_may_be_complete(std::string_view buf, size_t from_hint, const Limits& limits) {
    if (from_hint == 0) return true;
    size_t from = from_hint > 3 ? from_hint - 3 : 0;
    // A line ended in the new bytes: the head may be complete, or a line malformed.
    if (buf.find('\n', from) != std::string_view::npos) return true;
    // A limit was crossed by the new bytes: the parser reports it now, so must we (a
    // client that stops there gets its 414 or 431, not a timeout). Both are counted
    // after the empty lines the parser skips before the request line.
    size_t lead = leading_empty_lines(buf);
    size_t line_cap = lead + limits.max_request_line;
    if (buf.size() <= std::min(line_cap, lead + limits.max_header_bytes)) return false;  // neither can be due
    size_t nl = buf.substr(0, std::min(buf.size(), line_cap + 2)).find('\n', lead);
    // 414: the request line, unfinished, passes max_request_line.
    if (nl == std::string_view::npos) return buf.size() > line_cap && from_hint <= line_cap;
    // 431: the fields pass max_header_bytes, counted from the end of the request line.
    size_t fields_cap = nl + 1 + limits.max_header_bytes;
    return buf.size() > fields_cap && from_hint <= fields_cap;
}

int status_for(ParseError e) {
    switch (e) {
        case ParseError::None: return 200;
        case ParseError::RequestLineTooLong: return 414;
        case ParseError::HeadersTooLarge:
        case ParseError::TooManyHeaders: return 431;
        case ParseError::UnsupportedTransferCoding: return 501;
        case ParseError::UnsupportedVersion: return 505;
        default: return 400;
    }
}

std::string_view describe(ParseError e) {
    switch (e) {
        case ParseError::None: return "no error";
        case ParseError::BadMethod: return "malformed method";
        case ParseError::BadTarget: return "malformed request target";
        case ParseError::BadVersion: return "malformed HTTP version";
        case ParseError::UnsupportedVersion: return "unsupported HTTP version";
        case ParseError::RequestLineTooLong: return "request line too long";
        case ParseError::BadHeaderName: return "malformed header field name";
        case ParseError::BadHeaderValue: return "control character in header field value";
        case ParseError::ObsFold: return "obsolete line folding";
        case ParseError::BareCR: return "CR not followed by LF";
        case ParseError::BareLF: return "LF without CR";
        case ParseError::HeadersTooLarge: return "header section too large";
        case ParseError::TooManyHeaders: return "too many header fields";
        case ParseError::BadContentLength: return "invalid Content-Length";
        case ParseError::ConflictingContentLength: return "conflicting Content-Length values";
        case ParseError::ContentLengthWithChunked: return "both Content-Length and Transfer-Encoding";
        case ParseError::BadTransferEncoding: return "invalid Transfer-Encoding";
        case ParseError::UnsupportedTransferCoding: return "unsupported transfer coding";
        case ParseError::MissingHost: return "missing Host header";
        case ParseError::DuplicateHost: return "more than one Host header";
        case ParseError::BadHost: return "invalid Host header";
    }
    return "unknown error";
}

}  // namespace kiln::http
