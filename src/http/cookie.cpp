#include "http/cookie.hpp"

#include "http/chars.hpp"
#include "http/http_date.hpp"
#include "http/parser.hpp"

namespace kiln::http {
namespace {

bool has_control(std::string_view v) {
    for (char c : v) {
        auto u = static_cast<uint8_t>(c);
        if (u < 0x20 || u == 0x7f) return true;
    }
    return false;
}

// cookie-octet (RFC 6265 §4.1.1): visible ASCII except DQUOTE, ',', ';' and '\'.
bool is_cookie_octet(char c) {
    return c > 0x20 && c < 0x7f && c != '"' && c != ',' && c != ';' && c != '\\';
}

bool valid_domain(std::string_view d) {
    if (!d.empty() && d.front() == '.') d.remove_prefix(1);
    if (d.empty() || d.size() > 253) return false;
    size_t label = 0;
    for (char c : d) {
        if (c == '.') {
            if (label == 0) return false;
            label = 0;
        } else if (c == '-' || (c >= '0' && c <= '9') || (chars::lower(c) >= 'a' && chars::lower(c) <= 'z')) {
            if (++label > 63) return false;
        } else {
            return false;
        }
    }
    return label > 0;
}

bool valid_path(std::string_view p) {
    if (p.empty() || p.front() != '/') return false;
    for (char c : p)
        if (c < 0x20 || c > 0x7e || c == ';') return false;
    return true;
}

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

constexpr time_t kLastExpires = 253402300799;  // 9999-12-31T23:59:59Z

CookieError check(std::string_view name, std::string_view value, const CookieAttributes& a, bool secure) {
    if (name.empty()) return CookieError::BadName;
    for (char c : name)
        if (!chars::is_token(static_cast<uint8_t>(c))) return CookieError::BadName;
    for (char c : value)
        if (!is_cookie_octet(c)) return CookieError::BadValue;
    if (name.size() + value.size() > kMaxCookieBytes) return CookieError::TooLarge;
    if (!a.domain.empty() && !valid_domain(a.domain)) return CookieError::BadDomain;
    if (!a.path.empty() && !valid_path(a.path)) return CookieError::BadPath;
    if (a.expires && (*a.expires < 0 || *a.expires > kLastExpires)) return CookieError::BadExpires;
    // Cookie prefixes (RFC 6265bis §4.1.3): browsers refuse such cookies otherwise.
    if (starts_with_nocase(name, "__Secure-") && !secure) return CookieError::BadPrefix;
    if (starts_with_nocase(name, "__Host-") && (!secure || a.path != "/" || !a.domain.empty()))
        return CookieError::BadPrefix;
    return CookieError::None;
}

}  // namespace

namespace cookie_detail {

bool next_pair(std::string_view* header, CookiePair* out) {
    std::string_view& h = *header;
    while (!h.empty()) {
        size_t semi = h.find(';');
        std::string_view piece = h.substr(0, semi);
        h = semi == h.npos ? std::string_view() : h.substr(semi + 1);
        size_t eq = piece.find('=');
        if (eq == piece.npos) continue;
        std::string_view name = chars::trim_ows(piece.substr(0, eq)), value = chars::trim_ows(piece.substr(eq + 1));
        if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
        if (name.empty() || has_control(name) || has_control(value)) continue;
        *out = {name, value};
        return true;
    }
    return false;
}

}  // namespace cookie_detail

std::vector<CookiePair> parse_cookie_header(std::string_view header) {
    std::vector<CookiePair> out;
    for_each_cookie(header, [&](std::string_view n, std::string_view v) { out.push_back({n, v}); });
    return out;
}

std::optional<std::string_view> find_cookie(std::string_view header, std::string_view name) {
    CookiePair p;
    while (cookie_detail::next_pair(&header, &p))
        if (p.name == name) return p.value;
    return std::nullopt;
}

CookieError build_set_cookie(std::string_view name, std::string_view value, const CookieAttributes& a,
                             std::string& out) {
    out.clear();
    bool secure = a.secure || a.same_site == SameSite::None || a.partitioned;
    CookieError e = check(name, value, a, secure);
    if (e != CookieError::None) return e;
    out.reserve(name.size() + value.size() + 128);
    out.append(name).append("=").append(value);
    if (a.expires) {
        char date[32];
        out.append("; Expires=").append(date, format_imf_fixdate(*a.expires, date));
    }
    if (a.max_age) out.append("; Max-Age=").append(std::to_string(*a.max_age > 0 ? *a.max_age : 0));
    if (!a.domain.empty()) out.append("; Domain=").append(a.domain);
    if (!a.path.empty()) out.append("; Path=").append(a.path);
    if (secure) out.append("; Secure");
    if (a.http_only) out.append("; HttpOnly");
    switch (a.same_site) {
        case SameSite::Unset: break;
        case SameSite::Strict: out.append("; SameSite=Strict"); break;
        case SameSite::Lax: out.append("; SameSite=Lax"); break;
        case SameSite::None: out.append("; SameSite=None"); break;
    }
    if (a.partitioned) out.append("; Partitioned");
    return CookieError::None;
}

std::optional<std::string> set_cookie_header(std::string_view name, std::string_view value,
                                             const CookieAttributes& attrs) {
    std::string out;
    if (build_set_cookie(name, value, attrs, out) != CookieError::None) return std::nullopt;
    return out;
}

std::string_view describe(CookieError e) {
    switch (e) {
        case CookieError::None: return "no error";
        case CookieError::BadName: return "cookie name is not a token";
        case CookieError::BadValue: return "cookie value holds a byte outside cookie-octet";
        case CookieError::TooLarge: return "cookie name and value exceed 4096 bytes";
        case CookieError::BadDomain: return "invalid cookie Domain";
        case CookieError::BadPath: return "invalid cookie Path";
        case CookieError::BadExpires: return "cookie Expires out of range";
        case CookieError::BadPrefix: return "__Secure-/__Host- cookie without the attributes its prefix requires";
    }
    return "unknown error";
}

}  // namespace kiln::http
