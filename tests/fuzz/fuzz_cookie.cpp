// Fuzzes the Cookie parser and the Set-Cookie writer. Parsing any bytes yields pairs
// with a non-empty, trimmed name and no ';' or control byte, as views into the input.
// Writing: byte 0 picks the attributes, the rest is name '=' value; when the writer
// accepts them, the header it writes holds no control byte, starts with name=value,
// and a browser echoing the pair back (alone or among others) parses to the same pair;
// when it refuses, the reason must hold.
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

void check_round_trip(uint8_t flags, std::string_view name, std::string_view value) {
    CookieAttributes a;
    a.secure = flags & 1;
    a.http_only = flags & 2;
    a.same_site = static_cast<SameSite>((flags >> 2) & 3);
    a.partitioned = flags & 16;
    if (flags & 32) a.path = "/";
    if (flags & 64) a.domain = "example.com";
    if (flags & 128) a.max_age = static_cast<int64_t>(value.size()) - 3;
    std::string out;
    CookieError e = build_set_cookie(name, value, a, out);
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
        FUZZ_CHECK(e == CookieError::BadName || e == CookieError::BadValue || e == CookieError::TooLarge ||
                   e == CookieError::BadPrefix);
        return;
    }
    for (char c : out) FUZZ_CHECK(!is_control(c));
    std::string pair = std::string(name) + "=" + std::string(value);
    FUZZ_CHECK(out.compare(0, pair.size(), pair) == 0);
    FUZZ_CHECK(out.size() == pair.size() || out[pair.size()] == ';');
    if (a.same_site == SameSite::None || a.partitioned) FUZZ_CHECK(out.find("; Secure") != out.npos);

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
