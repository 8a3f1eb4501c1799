// Fuzzes the urlencoded form decoder. Limits hold for every delivered pair; a body
// with no malformed %-escape never fails with BadEscape and a body that decodes
// cleanly has none; and re-encoding the decoded pairs then decoding again gives the
// same pairs (round trip). Byte 0 picks the limits; the rest is the body.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "http/chars.hpp"
#include "http/form.hpp"

using namespace kiln::http;

namespace {

bool has_bad_escape(std::string_view s) {
    for (size_t i = 0; i < s.size(); ++i)
        if (s[i] == '%' && (i + 2 >= s.size() || chars::hex_digit(s[i + 1]) < 0 || chars::hex_digit(s[i + 2]) < 0))
            return true;
    return false;
}

// Encodes as a browser does: unreserved bytes as is, space as '+', the rest %XX.
void encode(std::string_view in, std::string& out) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    for (char c : in) {
        auto u = static_cast<uint8_t>(c);
        if ((u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || c == '-' || c == '.' ||
            c == '_' || c == '~' || c == '*') {
            out.push_back(c);
        } else if (c == ' ') {
            out.push_back('+');
        } else {
            out.push_back('%');
            out.push_back(kHex[u >> 4]);
            out.push_back(kHex[u & 15]);
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    static const FormLimits kLimits[] = {{}, {4, 8, 16}, {1, 1024, 1024}, {100, 1, 1}};
    const FormLimits& limits = kLimits[data[0] % 4];
    std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);

    std::vector<FormField> fields;
    FormError e = parse_form(body, fields, limits);
    FUZZ_CHECK(fields.size() <= limits.max_fields);
    for (const FormField& f : fields) {
        FUZZ_CHECK(f.name.size() <= limits.max_key_bytes && f.value.size() <= limits.max_value_bytes);
        FUZZ_CHECK(f.name.size() + f.value.size() <= body.size());
    }
    if (!has_bad_escape(body)) FUZZ_CHECK(e != FormError::BadEscape);
    if (e == FormError::None) FUZZ_CHECK(!has_bad_escape(body));
    FUZZ_CHECK((status_for(e) == 200) == (e == FormError::None));

    // The callback form sees exactly the same pairs.
    size_t i = 0;
    FormError e2 = for_each_form_field(
        body,
        [&](std::string_view n, std::string_view v) {
            FUZZ_CHECK(i < fields.size() && fields[i].name == n && fields[i].value == v);
            ++i;
        },
        limits);
    FUZZ_CHECK(e2 == e && i == fields.size());

    if (e != FormError::None) return 0;
    std::string again;
    for (const FormField& f : fields) {
        if (!again.empty()) again.push_back('&');
        encode(f.name, again);
        again.push_back('=');
        encode(f.value, again);
    }
    std::vector<FormField> back;
    FUZZ_CHECK(parse_form(again, back, limits) == FormError::None);
    FUZZ_CHECK(back.size() == fields.size());
    for (size_t k = 0; k < back.size(); ++k)
        FUZZ_CHECK(back[k].name == fields[k].name && back[k].value == fields[k].value);
    return 0;
}
