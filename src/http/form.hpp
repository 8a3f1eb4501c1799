// Decoder for application/x-www-form-urlencoded bodies (the HTML form encoding):
// "a=1&b=x+y&c=%41" gives (a, "1"), (b, "x y"), (c, "A"), in order, duplicates kept.
// Works on the whole body: the connection has already bounded it by the route's body
// limit. Splitting and %-decoding are the query-string helpers of http/url.hpp.
// Stricter than the WHATWG parser on one point: a malformed %-escape is an error (400)
// rather than kept as text. Empty pieces ("a=1&&b=2") are skipped; a piece without '='
// is a name with an empty value. Pure: no I/O, no exceptions.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "http/url.hpp"

namespace kiln::http {

inline constexpr size_t kMaxFormFields = 1000;              // more pairs -> 413
inline constexpr size_t kMaxFormKeyBytes = 1024;            // a decoded name -> 413
inline constexpr size_t kMaxFormValueBytes = 1024 * 1024;   // a decoded value -> 413

struct FormLimits {
    size_t max_fields = kMaxFormFields;
    size_t max_key_bytes = kMaxFormKeyBytes;
    size_t max_value_bytes = kMaxFormValueBytes;
};

enum class FormError : uint8_t {
    None,
    BadEscape,      // 400: '%' not followed by two hex digits
    TooManyFields,  // 413
    KeyTooLong,     // 413
    ValueTooLong,   // 413
};

int status_for(FormError e);
std::string_view describe(FormError e);

struct FormField {
    std::string name;
    std::string value;
};

namespace form_detail {
struct Scratch {
    std::string name, value;
};
// Decodes one raw pair; the views point into the raw text when it holds no '%' or '+'
// (no copy), else into `s`.
FormError decode_pair(std::string_view raw_name, std::string_view raw_value, const FormLimits& limits,
                      Scratch& s, std::string_view* name, std::string_view* value);
}  // namespace form_detail

// Calls fn(name, value) for each decoded pair, in order, and stops at the first error.
// The views are valid only during the call. Pairs before an error have been delivered.
template <class Fn>
FormError for_each_form_field(std::string_view body, Fn&& fn, const FormLimits& limits = {}) {
    FormError err = FormError::None;
    size_t count = 0;
    form_detail::Scratch scratch;
    for_each_query_pair(body, [&](std::string_view raw_name, std::string_view raw_value) {
        if (err != FormError::None) return;
        if (++count > limits.max_fields) {
            err = FormError::TooManyFields;
            return;
        }
        std::string_view name, value;
        err = form_detail::decode_pair(raw_name, raw_value, limits, scratch, &name, &value);
        if (err == FormError::None) fn(name, value);
    });
    return err;
}

// Appends the decoded pairs of `body` to `out`; on error, `out` holds the pairs before it.
FormError parse_form(std::string_view body, std::vector<FormField>& out, const FormLimits& limits = {});

}  // namespace kiln::http
