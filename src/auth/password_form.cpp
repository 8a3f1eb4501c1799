// normalize_password: Unicode NFKC through utf8proc, in buffers of our own that are
// wiped before they go (utf8proc_map would leave copies in memory it frees); and
// has_unassigned, from the same tables.
#include <sodium.h>
#include <utf8proc.h>

#include <vector>

#include <kiln/auth.hpp>

#include "auth/password_form.hpp"
#include "auth/wipe.hpp"
#include "util/utf8.hpp"

namespace kiln::auth {

std::string normalize_password(std::string_view password) {
    constexpr auto kOptions = static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE);
    const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(password.data());
    const auto length = static_cast<utf8proc_ssize_t>(password.size());
    // Code points after decomposition: at most 18 per input one (U+FDFA), so the
    // bytes' count is enough but for such input, which asks once more. One spare
    // code point: utf8proc_reencode ends its output with a NUL.
    std::vector<utf8proc_int32_t> points(password.size() + 1);
    utf8proc_ssize_t room = static_cast<utf8proc_ssize_t>(password.size());
    utf8proc_ssize_t n = utf8proc_decompose(bytes, length, points.data(), room, kOptions);
    if (n > room) {
        sodium_memzero(points.data(), points.size() * sizeof points[0]);
        points.assign(static_cast<size_t>(n) + 1, 0);
        n = utf8proc_decompose(bytes, length, points.data(), n, kOptions);
    }
    std::string out = secret_copy({});  // on the heap (auth/wipe.hpp): the caller may move it
    if (n < 0) {  // not UTF-8: the bytes as they are (they were hashed so)
        out.assign(password);
    } else {
        // Composed, then encoded in place: UTF-8 never takes more bytes than the
        // four of each code point it encodes (and the NUL after them fits the spare).
        utf8proc_ssize_t len = utf8proc_reencode(points.data(), n, kOptions);
        if (len < 0) out.assign(password);
        else out.assign(reinterpret_cast<const char*>(points.data()), static_cast<size_t>(len));
    }
    sodium_memzero(points.data(), points.size() * sizeof points[0]);
    return out;
}

bool has_unassigned(std::string_view text) {
    for (size_t i = 0; i < text.size();) {
        uint32_t point = 0;
        size_t len = utf8::sequence_at(text, i, &point);
        if (len == 0) return false;
        if (utf8proc_category(static_cast<utf8proc_int32_t>(point)) == UTF8PROC_CATEGORY_CN) return true;
        i += len;
    }
    return false;
}

}  // namespace kiln::auth
