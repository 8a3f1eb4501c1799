// kiln::FormReader: copies a submitted form's fields into typed members and
// collects a message for each field that is missing or malformed, so a handler can
// show the form again with what the user typed and what is wrong:
//
//   kiln::FormReader in(req);
//   in.text("title", post.title, {.max_chars = 200});
//   in.text("body", post.body, {.trim = false});
//   in.number("stock", item.stock, {.min = 0});
//   in.checkbox("published", post.published);
//   if (!in.ok()) return render_form_again(std::move(in).errors());  // 422
//
// A field's label in messages comes from its name ("published_at" reads "Published
// at") unless the rules give one. A value that parses is stored in the member; one
// that does not leaves the member as it was and records a message. Text must be
// valid UTF-8 without control characters (tab, CR and LF allowed), and lengths count
// characters (code points), not bytes.
#pragma once
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <kiln/form.hpp>

namespace kiln {

class Request;

struct FieldError {
    std::string field;
    std::string message;
};

// The messages of a form, in the order the fields were read.
class FieldErrors {
public:
    void add(std::string_view field, std::string message);
    bool any() const { return !list_.empty(); }
    bool empty() const { return list_.empty(); }
    size_t size() const { return list_.size(); }
    bool has(std::string_view field) const;
    // The first message about `field`; empty if there is none.
    std::string_view on(std::string_view field) const;
    std::vector<FieldError>::const_iterator begin() const { return list_.begin(); }
    std::vector<FieldError>::const_iterator end() const { return list_.end(); }

private:
    std::vector<FieldError> list_;
};

struct TextRules {
    std::string_view label{};  // in messages; derived from the name when empty
    bool required = true;      // blank (only whitespace) counts as missing
    bool trim = true;          // store the value without surrounding whitespace
    size_t min_chars = 0;
    size_t max_chars = 0;      // 0: no limit
};

template <class T>
struct NumberRules {
    std::string_view label{};
    bool required = true;      // when false, an empty field leaves the member alone
    std::optional<T> min{};
    std::optional<T> max{};
};

struct ChoiceRules {
    std::string_view label{};
    bool required = true;
};

struct DateTimeRules {
    std::string_view label{};
    bool required = true;
};

class FormReader {
public:
    explicit FormReader(const Form& form) : form_(form) {}
    explicit FormReader(const Request& req);

    FormReader& text(std::string_view name, std::string& out, const TextRules& rules = {});
    // An integer or floating-point member; "must be a whole number" / "a number".
    template <class T>
    FormReader& number(std::string_view name, T& out, const NumberRules<T>& rules = {});
    // Ticked ("1", "on" or "true") or not; never an error.
    FormReader& checkbox(std::string_view name, bool& out);
    // One of `allowed` (a <select> or radio buttons), compared exactly.
    FormReader& choice(std::string_view name, std::string& out, std::initializer_list<std::string_view> allowed,
                       const ChoiceRules& rules = {});
    // An <input type="datetime-local">: "2024-03-09T14:05" or with ":07" seconds, as UTC.
    FormReader& datetime(std::string_view name, std::chrono::sys_seconds& out, const DateTimeRules& rules = {});
    // A rule of the app's own: records `message` against `field` unless `ok`.
    FormReader& check(bool ok, std::string_view field, std::string message);

    bool ok() const { return errors_.empty(); }
    const FieldErrors& errors() const& { return errors_; }
    FieldErrors errors() && { return std::move(errors_); }

private:
    // The trimmed raw value; nullopt (and a message when required) if blank.
    std::optional<std::string_view> present(std::string_view name, std::string_view label, bool required);
    void fail(std::string_view name, std::string_view label, std::string_view what);
    void fail_range(std::string_view name, std::string_view label, std::string_view relation, std::string bound);
    template <class T>
    static std::string bound_text(T v);

    const Form& form_;
    FieldErrors errors_;
};

// "published_at" → "Published at": the label a field gets when the rules give none.
std::string label_of(std::string_view field_name);
// Without leading and trailing spaces, tabs, CR, LF, FF and VT.
std::string_view trim(std::string_view s);
// Characters (code points) of a valid UTF-8 string; nullopt if it is not valid
// UTF-8 (overlong forms, surrogates and values past U+10FFFF are invalid).
std::optional<size_t> utf8_length(std::string_view s);
// "2024-03-09T14:05[:07]" (also with a space for the T), as UTC; nullopt otherwise.
std::optional<std::chrono::sys_seconds> parse_datetime_local(std::string_view s);
// The value for an <input type="datetime-local" step="1">: "2024-03-09T14:05:07".
std::string datetime_local(std::chrono::sys_seconds t);

namespace detail {
bool parse_form_number(std::string_view text, long long& out);
bool parse_form_number(std::string_view text, unsigned long long& out);
bool parse_form_number(std::string_view text, double& out);
std::string format_form_number(long long v);
std::string format_form_number(unsigned long long v);
std::string format_form_number(double v);
}  // namespace detail

template <class T>
std::string FormReader::bound_text(T v) {
    if constexpr (std::is_floating_point_v<T>)
        return detail::format_form_number(static_cast<double>(v));
    else if constexpr (std::is_signed_v<T>)
        return detail::format_form_number(static_cast<long long>(v));
    else
        return detail::format_form_number(static_cast<unsigned long long>(v));
}

template <class T>
FormReader& FormReader::number(std::string_view name, T& out, const NumberRules<T>& rules) {
    static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>,
                  "FormReader::number: T must be an integer or floating-point type (checkbox() reads a bool)");
    auto text = present(name, rules.label, rules.required);
    if (!text) return *this;
    T value{};
    if constexpr (std::is_floating_point_v<T>) {
        double d = 0;
        if (!detail::parse_form_number(*text, d)) {
            fail(name, rules.label, "must be a number");
            return *this;
        }
        if (std::abs(d) > static_cast<double>(std::numeric_limits<T>::max())) {  // 1e39 for a float: inf
            fail(name, rules.label, "is out of range");
            return *this;
        }
        value = static_cast<T>(d);
    } else {
        using Wide = std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>;
        Wide w = 0;
        if (!detail::parse_form_number(*text, w)) {
            fail(name, rules.label, "must be a whole number");
            return *this;
        }
        if (w < static_cast<Wide>(std::numeric_limits<T>::min()) || w > static_cast<Wide>(std::numeric_limits<T>::max())) {
            fail(name, rules.label, "is out of range");
            return *this;
        }
        value = static_cast<T>(w);
    }
    if (rules.min && value < *rules.min)
        fail_range(name, rules.label, "at least", bound_text(*rules.min));
    else if (rules.max && value > *rules.max)
        fail_range(name, rules.label, "at most", bound_text(*rules.max));
    else
        out = value;
    return *this;
}

}  // namespace kiln
