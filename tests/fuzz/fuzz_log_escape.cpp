// Fuzzes the access log's escapers (server/log_escape.hpp) on any field bytes. Both
// only append, and no output byte is a control byte, DEL or a '"' that is not part of
// an escape (or, for JSON, the literal's own quotes). Decoding the escapes with the
// decoders here gives the field back (an empty field is "-" in the combined format).
// The JSON literal is well formed by the grammar checked here and always parses with
// nlohmann::json: to the field itself when the field is valid UTF-8, else with each
// ill-formed run replaced by U+FFFD (the well-formed characters kept, in order, by the
// fuzzers' own UTF-8 reader).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "server/log_escape.hpp"

using kiln::server::append_clf;
using kiln::server::append_json_string;

namespace {

constexpr std::string_view kBefore = "earlier line content ";

int hex(char c, bool upper_only) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (!upper_only && c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

void check_clf(std::string_view field) {
    std::string out(kBefore);
    append_clf(out, field);
    FUZZ_CHECK(out.starts_with(kBefore));
    std::string_view got = std::string_view(out).substr(kBefore.size());
    std::string decoded;
    for (size_t i = 0; i < got.size(); ++i) {
        auto c = static_cast<unsigned char>(got[i]);
        FUZZ_CHECK(c >= 0x20 && c < 0x7f && c != '"');  // printable ASCII only
        if (c != '\\') {
            decoded += static_cast<char>(c);
            continue;
        }
        FUZZ_CHECK(i + 3 < got.size() && got[i + 1] == 'x');
        int hi = hex(got[i + 2], true), lo = hex(got[i + 3], true);
        FUZZ_CHECK(hi >= 0 && lo >= 0);
        decoded += static_cast<char>(hi << 4 | lo);
        i += 3;
    }
    FUZZ_CHECK(decoded == (field.empty() ? std::string_view("-") : field));
}

void check_json(std::string_view field) {
    std::string out(kBefore);
    append_json_string(out, field);
    FUZZ_CHECK(out.starts_with(kBefore));
    std::string_view lit = std::string_view(out).substr(kBefore.size());
    FUZZ_CHECK(lit.size() >= 2 && lit.front() == '"' && lit.back() == '"');
    std::string_view body = lit.substr(1, lit.size() - 2);
    std::string decoded;
    size_t replaced = 0;
    for (size_t i = 0; i < body.size(); ++i) {
        auto c = static_cast<unsigned char>(body[i]);
        FUZZ_CHECK(!is_control(c) && c != '"');
        if (c != '\\') {
            decoded += static_cast<char>(c);
            continue;
        }
        FUZZ_CHECK(i + 1 < body.size());
        char e = body[++i];
        switch (e) {
            case '"': decoded += '"'; break;
            case '\\': decoded += '\\'; break;
            case '/': decoded += '/'; break;
            case 'b': decoded += '\b'; break;
            case 'f': decoded += '\f'; break;
            case 'n': decoded += '\n'; break;
            case 'r': decoded += '\r'; break;
            case 't': decoded += '\t'; break;
            case 'u': {
                FUZZ_CHECK(i + 4 < body.size());
                uint32_t cp = 0;
                for (size_t k = 1; k <= 4; ++k) {
                    int h = hex(body[i + k], false);
                    FUZZ_CHECK(h >= 0);
                    cp = cp << 4 | static_cast<uint32_t>(h);
                }
                // The escaper writes \u for control bytes and DEL (one byte), and U+FFFD
                // in place of an ill-formed run (noted here as nothing: see `kept`).
                FUZZ_CHECK(cp < 0x20 || cp == 0x7f || cp == 0xfffd);
                if (cp == 0xfffd) ++replaced;
                else decoded += static_cast<char>(cp);
                i += 4;
                break;
            }
            default: FUZZ_CHECK(!"an escape JSON does not have");
        }
    }
    // What a field keeps: its well-formed characters, in order (the bytes of an
    // ill-formed run are continuation bytes after at most one lead, never a character).
    std::string kept;
    for (size_t i = 0; i < field.size();) {
        size_t n = utf8_char_at(field, i);
        if (n > 0) kept.append(field.substr(i, n));
        i += n > 0 ? n : 1;
    }
    FUZZ_CHECK(decoded == kept);
    FUZZ_CHECK((replaced == 0) == valid_utf8(field));

    nlohmann::json j = nlohmann::json::parse(lit);  // throws (a crash here) if not JSON
    FUZZ_CHECK(j.is_string());
    const std::string& text = j.get_ref<const std::string&>();
    FUZZ_CHECK(valid_utf8(text));
    if (replaced == 0) FUZZ_CHECK(text == field);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view field(reinterpret_cast<const char*>(data), size);
    check_clf(field);
    check_json(field);
    return 0;
}
