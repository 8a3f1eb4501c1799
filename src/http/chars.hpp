// Character classes of RFC 9110/9112 as 256-entry tables, shared by the parsers.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

namespace kiln::http::chars {

constexpr std::array<bool, 256> make_tchar() {
    std::array<bool, 256> t{};
    for (int c = '0'; c <= '9'; ++c) t[c] = true;
    for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
    for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
    for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<uint8_t>(c)] = true;
    return t;
}
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

inline constexpr std::array<bool, 256> kToken = make_tchar();
inline constexpr std::array<bool, 256> kFieldValue = make_field_value();
inline constexpr std::array<bool, 256> kTarget = make_target();

inline bool is_token(uint8_t c) { return kToken[c]; }
inline bool is_ows(char c) { return c == ' ' || c == '\t'; }
inline char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c | 0x20) : c; }

}  // namespace kiln::http::chars
