#include "app/file_http.hpp"

#include <charconv>
#include <limits>
#include <optional>

#include "http/chars.hpp"
#include "http/http_date.hpp"
#include "http/parser.hpp"

namespace kiln::app {
namespace {

// Decimal digits only (no sign, no space), saturating at UINT64_MAX; nullopt if
// `s` is empty or holds anything else.
std::optional<uint64_t> parse_pos(std::string_view s) {
    if (s.empty()) return std::nullopt;
    constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        unsigned d = static_cast<unsigned>(c - '0');
        v = v > (kMax - d) / 10 ? kMax : v * 10 + d;
    }
    return v;
}

// qvalue (§12.4.2): "0", "0.5", "1", "1.000" -> 0..1000; nullopt if malformed.
std::optional<int> parse_qvalue(std::string_view s) {
    if (s.empty() || (s[0] != '0' && s[0] != '1')) return std::nullopt;
    int whole = s[0] - '0';
    if (s.size() == 1) return whole * 1000;
    if (s[1] != '.' || s.size() > 5) return std::nullopt;
    int frac = 0, scale = 100;
    for (char c : s.substr(2)) {
        if (c < '0' || c > '9') return std::nullopt;
        frac += (c - '0') * scale;
        scale /= 10;
    }
    if (whole == 1 && frac != 0) return std::nullopt;
    return whole * 1000 + frac;
}

// The opaque-tag of an entity-tag (the quoted part, W/ removed).
std::string_view opaque(std::string_view tag) { return tag.starts_with("W/") ? tag.substr(2) : tag; }

}  // namespace

RangeResult parse_range(std::string_view header, uint64_t size) {
    RangeResult whole;
    header = http::chars::trim_ows(header);
    if (size == 0 || header.size() < 6 || !http::iequals(header.substr(0, 6), "bytes=")) return whole;
    std::string_view set = header.substr(6);
    std::string_view spec;
    size_t specs = 0;
    while (!set.empty()) {  // empty list elements ("0-1, ,") are allowed and skipped
        size_t comma = set.find(',');
        std::string_view element = http::chars::trim_ows(set.substr(0, comma));
        set = comma == set.npos ? std::string_view() : set.substr(comma + 1);
        if (element.empty()) continue;
        spec = element;
        ++specs;
    }
    if (specs != 1) return whole;
    size_t dash = spec.find('-');
    if (dash == spec.npos) return whole;
    std::optional<uint64_t> first = parse_pos(spec.substr(0, dash));
    std::optional<uint64_t> last = parse_pos(spec.substr(dash + 1));
    RangeResult r;
    if (!first) {  // suffix: the last N bytes
        if (!last || dash != 0) return whole;
        if (*last == 0) return {RangeKind::Unsatisfiable, 0, 0};
        uint64_t n = *last < size ? *last : size;
        return {RangeKind::Single, size - n, n};
    }
    if (dash + 1 < spec.size() && !last) return whole;  // "5-x"
    if (last && *last < *first) return whole;           // invalid, so ignored (§14.1.1)
    if (*first >= size) return {RangeKind::Unsatisfiable, 0, 0};
    uint64_t end = last && *last < size - 1 ? *last : size - 1;
    return {RangeKind::Single, *first, end - *first + 1};
}

std::string content_range(const RangeResult& r, uint64_t size) {
    std::string out = "bytes ";
    if (r.kind == RangeKind::Single)
        out += std::to_string(r.first) + "-" + std::to_string(r.first + r.length - 1);
    else
        out += "*";
    return out + "/" + std::to_string(size);
}

std::string make_etag(uint64_t size, int64_t mtime_ns, std::string_view coding) {
    char buf[64];
    char* p = buf;
    *p++ = '"';
    p = std::to_chars(p, buf + sizeof buf, size, 16).ptr;
    *p++ = '-';
    p = std::to_chars(p, buf + sizeof buf, static_cast<uint64_t>(mtime_ns), 16).ptr;
    std::string out(buf, p);
    if (!coding.empty()) out.append("-").append(coding);
    out.push_back('"');
    return out;
}

namespace {
// Whether the entity-tag list `h` holds "*" or a tag equal to `etag`: by the weak
// comparison (W/ ignored on both sides), or the strong one (a weak tag on either
// side never equal).
bool list_hits(std::string_view h, std::string_view etag, bool strong) {
    if (strong && etag.starts_with("W/")) return false;
    std::string_view mine = opaque(etag);
    size_t i = 0;
    while (i < h.size()) {
        if (http::chars::is_ows(h[i]) || h[i] == ',') {
            ++i;
            continue;
        }
        if (h[i] == '*') return true;
        bool weak = h.substr(i).starts_with("W/");
        if (weak) i += 2;
        if (i >= h.size() || h[i] != '"') return false;
        size_t close = h.find('"', i + 1);
        if (close == h.npos) return false;
        if (!(strong && weak) && h.substr(i, close - i + 1) == mine) return true;
        i = close + 1;
    }
    return false;
}
}  // namespace

bool none_match_hits(std::string_view h, std::string_view etag) { return list_hits(h, etag, false); }
bool match_hits(std::string_view h, std::string_view etag) { return list_hits(h, etag, true); }

bool unmodified_since(std::string_view header, time_t last_modified) {
    std::optional<time_t> date = http::parse_http_date(header);
    return !date || last_modified <= *date;
}

bool if_range_holds(std::string_view header, std::string_view etag, time_t last_modified) {
    header = http::chars::trim_ows(header);
    if (header.starts_with("W/")) return false;  // weak tags are never good enough for a range
    if (header.starts_with("\"")) return !etag.starts_with("W/") && header == etag;
    std::optional<time_t> date = http::parse_http_date(header);
    return date && *date == last_modified;
}

bool not_modified_since(std::string_view header, time_t last_modified) {
    std::optional<time_t> date = http::parse_http_date(header);
    return date && last_modified <= *date;
}

AcceptedCodings parse_accept_encoding(std::string_view h) {
    int br = -1, gzip = -1, zstd = -1, star = -1;  // -1: not named
    while (!h.empty()) {
        size_t comma = h.find(',');
        std::string_view element = h.substr(0, comma);
        h = comma == h.npos ? std::string_view() : h.substr(comma + 1);
        size_t semi = element.find(';');
        std::string_view coding = http::chars::trim_ows(element.substr(0, semi));
        int q = 1000;
        while (semi != element.npos) {  // parameters: only q matters
            element = element.substr(semi + 1);
            semi = element.find(';');
            std::string_view param = http::chars::trim_ows(element.substr(0, semi));
            size_t eq = param.find('=');
            if (eq == param.npos || !http::iequals(http::chars::trim_ows(param.substr(0, eq)), "q")) continue;
            std::optional<int> v = parse_qvalue(http::chars::trim_ows(param.substr(eq + 1)));
            q = v ? *v : 0;  // a malformed qvalue makes the coding unacceptable, never preferred
        }
        if (http::iequals(coding, "br")) br = q;
        else if (http::iequals(coding, "gzip") || http::iequals(coding, "x-gzip")) gzip = q;
        else if (http::iequals(coding, "zstd")) zstd = q;
        else if (coding == "*") star = q;
    }
    AcceptedCodings out;
    out.br = br >= 0 ? br : (star > 0 ? star : 0);
    out.gzip = gzip >= 0 ? gzip : (star > 0 ? star : 0);
    out.zstd = zstd >= 0 ? zstd : (star > 0 ? star : 0);
    return out;
}

}  // namespace kiln::app
