// Character classes of RFC 9110/9112 as 256-entry tables, shared by the parsers.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace kiln::http::chars {

// ALPHA, DIGIT and the given punctuation.
constexpr std::array<bool, 256> alnum_and(std::string_view extra) {
    std::array<bool, 256> t{};
    for (int c = '0'; c <= '9'; ++c) t[c] = true;
    for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
    for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
    for (char c : extra) t[static_cast<uint8_t>(c)] = true;
    return t;
}
constexpr std::array<bool, 256> make_tchar() { return alnum_and("!#$%&'*+-.^_`|~"); }
// field-value bytes: HTAB, SP, VCHAR, obs-text. Excludes CR, LF and other controls.
constexpr std::array<bool, 256> make_field_value() {
    std::array<bool, 256> t{};
    t['\t'] = true;
    for (int c = 0x20; c < 0x7f; ++c) t[c] = true;
    for (int c = 0x80; c < 0x100; ++c) t[c] = true;
    return t;
}
// request-target bytes: visible ASCII except '#' (no SP, controls or obs-text).
constexpr std::array<bool, 256> make_target() {
    std::array<bool, 256> t{};
    for (int c = 0x21; c < 0x7f; ++c) t[c] = true;
    t['#'] = false;  // a fragment is never part of a request-target (RFC 9112 §3.2)
    return t;
}

// reg-name / IPv4 bytes of a Host (RFC 3986 §3.2.2): unreserved, pct-encoded, sub-delims.
inline constexpr std::array<bool, 256> kHost = alnum_and("-._~%!$&'()*+,;=");
inline constexpr std::array<bool, 256> kToken = make_tchar();
inline constexpr std::array<bool, 256> kFieldValue = make_field_value();
inline constexpr std::array<bool, 256> kTarget = make_target();

inline bool is_token(uint8_t c) { return kToken[c]; }
// Value of a hex digit, or -1.
inline int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Eight bytes at a time (SWAR): skip the stretch of a field value or target that
// certainly holds no byte the caller must look at; the caller's byte loop then
// checks the rest exactly. has_less is exact for n <= 128.
namespace swar {
constexpr uint64_t kOnes = 0x0101010101010101ULL;
constexpr uint64_t kHighs = 0x8080808080808080ULL;
inline uint64_t load8(const char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
inline uint64_t has_less(uint64_t x, uint8_t n) { return (x - kOnes * n) & ~x & kHighs; }
inline uint64_t has_byte(uint64_t x, uint8_t b) { return has_less(x ^ (kOnes * b), 1); }
}  // namespace swar

// Skips bytes that are plainly field-value (no control, no DEL).
inline const char* skip_field_value(const char* p, const char* end) {
    while (end - p >= 8) {
        uint64_t x = swar::load8(p);
        if (swar::has_less(x, 0x20) | swar::has_byte(x, 0x7f)) break;
        p += 8;
    }
    return p;
}

// Skips bytes that are plainly request-target (visible ASCII other than '#').
inline const char* skip_target(const char* p, const char* end) {
    while (end - p >= 8) {
        uint64_t x = swar::load8(p);
        if (swar::has_less(x, 0x21) | (x & swar::kHighs) | swar::has_byte(x, 0x7f) | swar::has_byte(x, '#')) break;
        p += 8;
    }
    return p;
}
inline bool is_ows(char c) { return c == ' ' || c == '\t'; }
// Without leading and trailing optional whitespace (SP, HTAB).
inline std::string_view trim_ows(std::string_view s) {
    while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
    return s;
}
inline char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c | 0x20) : c; }

}  // namespace kiln::http::chars
