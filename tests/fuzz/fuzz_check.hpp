// Shared by the fuzz targets: FUZZ_CHECK aborts with the failed condition, so
// libFuzzer records the input as a crash and the message names the broken invariant;
// valid_utf8 is the fuzzers' own second opinion on UTF-8 (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF).
#pragma once
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#define FUZZ_CHECK(cond)                                                               \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, \
                         #cond);                                                       \
            std::abort();                                                              \
        }                                                                              \
    } while (0)

// The length of the well-formed character at s[i], or 0 when the bytes there are not one.
inline size_t utf8_char_at(std::string_view s, size_t i) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 9;
    if (n == 9 || s.size() - i - 1 < n) return 0;
    uint32_t cp = n == 0 ? c : c & (0x3f >> n);
    for (size_t k = 1; k <= n; ++k) {
        auto cc = static_cast<unsigned char>(s[i + k]);
        if ((cc & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (cc & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n + 1;
}

inline bool valid_utf8(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        size_t n = utf8_char_at(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}
