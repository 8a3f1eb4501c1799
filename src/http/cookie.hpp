// Cookies (RFC 6265): reading the Cookie request header and writing Set-Cookie.
// Reading is tolerant, as browsers are: pairs are split on ';', whitespace around names
// and values is trimmed, one pair of DQUOTEs around a value is removed, and a piece
// with no '=', an empty name, or a control byte is skipped. Nothing is decoded and
// nothing is allocated: names and values are views into the header.
// Writing is strict: the name must be a token and the value cookie-octets, so what a
// browser sends back parses to the same pair. Errors are values; the app layer throws.
// Pure: no I/O, no exceptions.
#pragma once
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::http {

inline constexpr size_t kMaxCookieBytes = 4096;  // name + value: browsers drop larger ones

struct CookiePair {
    std::string_view name;
    std::string_view value;
};

namespace cookie_detail {
// The next well-formed pair of `*header` at or after the front; consumes what it read.
// False when no pair is left.
bool next_pair(std::string_view* header, CookiePair* out);
}  // namespace cookie_detail

// Calls fn(name, value) for each well-formed pair of a Cookie header, in order
// (duplicates kept: browsers send the most specific path first).
template <class Fn>
void for_each_cookie(std::string_view header, Fn&& fn) {
    CookiePair p;
    while (cookie_detail::next_pair(&header, &p)) fn(p.name, p.value);
}

// All pairs, in order; views into `header`.
std::vector<CookiePair> parse_cookie_header(std::string_view header);

// The value of the first pair named `name` (case-sensitive, as RFC 6265 says).
std::optional<std::string_view> find_cookie(std::string_view header, std::string_view name);

enum class SameSite : uint8_t { Unset, Strict, Lax, None };

struct CookieAttributes {
    std::optional<time_t> expires;   // absolute time, written as an IMF-fixdate
    std::optional<int64_t> max_age;  // seconds; <= 0 is written "Max-Age=0" (delete now)
    std::string_view domain;         // empty: a host-only cookie
    std::string_view path;           // empty: no Path attribute
    bool secure = false;
    bool http_only = false;
    SameSite same_site = SameSite::Unset;  // None also writes Secure (browsers require it)
    bool partitioned = false;              // CHIPS; also writes Secure
};

enum class CookieError : uint8_t {
    None,
    BadName,     // empty or not a token
    BadValue,    // a byte outside cookie-octet (SP, DQUOTE, ',', ';', '\', controls, non-ASCII)
    TooLarge,    // name + value over kMaxCookieBytes
    BadDomain,   // not [.]label(.label)* of letters, digits and '-'
    BadPath,     // does not start with '/', or holds ';' or a control byte
    BadExpires,  // before 1970 or after 9999
    BadPrefix,   // "__Secure-" without Secure, or "__Host-" without Secure, Path=/ and no Domain
};

std::string_view describe(CookieError e);

// Writes the Set-Cookie field value for name=value and the attributes into `out`
// (replacing its contents). On error `out` is left empty.
CookieError build_set_cookie(std::string_view name, std::string_view value, const CookieAttributes& attrs,
                             std::string& out);

// Same, as a value: nullopt on any CookieError.
std::optional<std::string> set_cookie_header(std::string_view name, std::string_view value,
                                             const CookieAttributes& attrs = {});

}  // namespace kiln::http
