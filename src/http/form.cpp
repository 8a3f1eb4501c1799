#include "http/form.hpp"

namespace kiln::http {
namespace form_detail {
namespace {

// Decodes `raw` unless it is plain text already; false on a malformed escape.
bool decode(std::string_view raw, std::string& scratch, std::string_view* out) {
    if (raw.find_first_of("%+") == raw.npos) {
        *out = raw;
        return true;
    }
    if (!decode_component(raw, scratch, /*plus_is_space=*/true)) return false;
    *out = scratch;
    return true;
}

}  // namespace

FormError decode_pair(std::string_view raw_name, std::string_view raw_value, const FormLimits& limits,
                      Scratch& s, std::string_view* name, std::string_view* value) {
    if (!decode(raw_name, s.name, name) || !decode(raw_value, s.value, value)) return FormError::BadEscape;
    if (name->size() > limits.max_key_bytes) return FormError::KeyTooLong;
    if (value->size() > limits.max_value_bytes) return FormError::ValueTooLong;
    return FormError::None;
}

}  // namespace form_detail

FormError parse_form(std::string_view body, std::vector<FormField>& out, const FormLimits& limits) {
    return for_each_form_field(
        body,
        [&](std::string_view name, std::string_view value) {
            out.push_back({std::string(name), std::string(value)});
        },
        limits);
}

int status_for(FormError e) {
    switch (e) {
        case FormError::None: return 200;
        case FormError::BadEscape: return 400;
        case FormError::TooManyFields:
        case FormError::KeyTooLong:
        case FormError::ValueTooLong: return 413;
    }
    return 400;
}

std::string_view describe(FormError e) {
    switch (e) {
        case FormError::None: return "no error";
        case FormError::BadEscape: return "malformed %-escape in form body";
        case FormError::TooManyFields: return "too many form fields";
        case FormError::KeyTooLong: return "form field name too long";
        case FormError::ValueTooLong: return "form field value too long";
    }
    return "unknown error";
}

}  // namespace kiln::http
