// Fuzzes the Cookie parser and the Set-Cookie writer. Parsing any bytes yields pairs
// with a non-empty, trimmed name and no ';' or control byte, as views into the input.
// Writing: byte 0 picks the attributes, the rest is name '=' value; when the writer
// accepts them, the header it writes holds no control byte, starts with name=value,
// and a browser echoing the pair back (alone or among others) parses to the same pair;
// when it refuses, the reason must hold.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "http/chars.hpp"
#include "http/cookie.hpp"

using namespace kiln::http;

namespace {

bool is_control(char c) { return static_cast<uint8_t>(c) < 0x20 || c == 0x7f; }

void check_parse(std::string_view header) {
    std::vector<CookiePair> pairs = parse_cookie_header(header);
    for (const CookiePair& p : pairs) {
        FUZZ_CHECK(!p.name.empty());
        FUZZ_CHECK(p.name.data() >= header.data() && p.name.data() + p.name.size() <= header.data() + header.size());
        FUZZ_CHECK(p.value.data() >= header.data() &&
                   p.value.data() + p.value.size() <= header.data() + header.size());
        FUZZ_CHECK(!chars::is_ows(p.name.front()) && !chars::is_ows(p.name.back()));
        for (std::string_view s : {p.name, p.value})
            for (char c : s) FUZZ_CHECK(c != ';' && !is_control(c));
        FUZZ_CHECK(p.name.find('=') == p.name.npos);
    }
    if (!pairs.empty()) FUZZ_CHECK(find_cookie(header, pairs[0].name) == pairs[0].value);
    size_t n = 0;
    for_each_cookie(header, [&](std::string_view, std::string_view) { ++n; });
    FUZZ_CHECK(n == pairs.size());
}

bool is_cookie_octet(char c) { return c > 0x20 && c < 0x7f && c != '"' && c != ',' && c != ';' && c != '\\'; }

// The app's own attributes, fuzzed too: a value holding \x01 carries a Domain after it,
// then (after a second \x01) a Path, then (after a third) Expires in seconds.
bool label_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'; }

// [.]label(.label)*: labels of 1 to 63 letters, digits and '-', 253 bytes at most.
bool domain_ok(std::string_view d) {
    if (d.starts_with('.')) d.remove_prefix(1);
    if (d.empty() || d.size() > 253) return false;
    size_t label = 0;
    for (char c : d) {
        if (c == '.') {
            if (label == 0) return false;
            label = 0;
        } else if (!label_char(c) || ++label > 63) {
            return false;
        }
    }
    return label > 0;
}

// Starts with '/', printable ASCII without ';'.
bool path_ok(std::string_view p) {
    return p.starts_with('/') && std::all_of(p.begin(), p.end(), [](char c) { return c >= 0x20 && c <= 0x7e && c != ';'; });
}

void check_round_trip(uint8_t flags, std::string_view name, std::string_view value) {
    CookieAttributes a;
    std::string_view extra[3];  // Domain, Path, Expires: what follows the value's \x01s
    size_t cut = value.find('\x01');
    std::string_view rest = cut == value.npos ? std::string_view() : value.substr(cut + 1);
    value = value.substr(0, cut);
    for (size_t i = 0; i < 3 && cut != std::string_view::npos; ++i) {
        cut = rest.find('\x01');
        extra[i] = rest.substr(0, cut);
        if (cut != rest.npos) rest.remove_prefix(cut + 1);
    }
    a.secure = flags & 1;
    a.http_only = flags & 2;
    a.same_site = static_cast<SameSite>((flags >> 2) & 3);
    a.partitioned = flags & 16;
    if (flags & 32) a.path = "/";
    if (flags & 64) a.domain = "example.com";
    if (flags & 128) a.max_age = static_cast<int64_t>(value.size()) - 3;
    if (!extra[0].empty()) a.domain = extra[0];
    if (!extra[1].empty()) a.path = extra[1];
    if (!extra[2].empty()) {
        int64_t t = 0;
        for (char c : extra[2].substr(0, 18)) t = t * 10 + (c >= '0' && c <= '9' ? c - '0' : 1);
        a.expires = static_cast<time_t>(extra[2][0] == '-' ? -t : t);
    }
    std::string out;
    CookieError e = build_set_cookie(name, value, a, out);
    if (e == CookieError::BadDomain) FUZZ_CHECK(!domain_ok(a.domain));
    if (e == CookieError::BadPath) FUZZ_CHECK(!path_ok(a.path));
    if (e != CookieError::None) {
        FUZZ_CHECK(out.empty());
        if (e == CookieError::BadValue) {
            bool bad = false;
            for (char c : value) bad |= !is_cookie_octet(c);
            FUZZ_CHECK(bad);
        }
        if (e == CookieError::BadName) {
            bool bad = name.empty();
            for (char c : name) bad |= !chars::is_token(static_cast<uint8_t>(c));
            FUZZ_CHECK(bad);
        }
        if (e == CookieError::BadExpires) FUZZ_CHECK(a.expires && (*a.expires < 0 || *a.expires > 253402300799));
        FUZZ_CHECK(e == CookieError::BadName || e == CookieError::BadValue || e == CookieError::TooLarge ||
                   e == CookieError::BadPrefix || e == CookieError::BadDomain || e == CookieError::BadPath ||
                   e == CookieError::BadExpires);
        return;
    }
    for (char c : out) FUZZ_CHECK(!is_control(c));
    std::string pair = std::string(name) + "=" + std::string(value);
    FUZZ_CHECK(out.compare(0, pair.size(), pair) == 0);
    FUZZ_CHECK(out.size() == pair.size() || out[pair.size()] == ';');
    if (a.same_site == SameSite::None || a.partitioned) FUZZ_CHECK(out.find("; Secure") != out.npos);
    // Accepted attributes are valid and written whole; nothing an app passes can end the
    // header or add an attribute of its own.
    if (!a.domain.empty()) FUZZ_CHECK(domain_ok(a.domain) && out.find("; Domain=" + std::string(a.domain)) != out.npos);
    if (!a.path.empty()) FUZZ_CHECK(path_ok(a.path) && out.find("; Path=" + std::string(a.path)) != out.npos);
    if (a.expires) {
        size_t at = out.find("; Expires=");
        FUZZ_CHECK(*a.expires >= 0 && at != out.npos && out.compare(at + 10 + 26, 3, "GMT") == 0);
    }

    std::vector<CookiePair> alone = parse_cookie_header(pair);
    FUZZ_CHECK(alone.size() == 1 && alone[0].name == name && alone[0].value == value);
    std::string among = "a=1; " + pair + ";b=\"2\"";
    std::vector<CookiePair> three = parse_cookie_header(among);
    FUZZ_CHECK(three.size() == 3 && three[1].name == name && three[1].value == value);
    FUZZ_CHECK(three[2].value == "2");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    check_parse(in);
    if (size < 1) return 0;
    std::string_view rest = in.substr(1);
    size_t eq = rest.find('=');
    std::string_view name = rest.substr(0, eq);
    std::string_view value = eq == rest.npos ? std::string_view() : rest.substr(eq + 1);
    check_round_trip(data[0], name, value);
    return 0;
}
