#include <kiln/form_reader.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

#include <kiln/request.hpp>

namespace kiln {

void FieldErrors::add(std::string_view field, std::string message) {
    list_.push_back({std::string(field), std::move(message)});
}

bool FieldErrors::has(std::string_view field) const {
    return std::any_of(list_.begin(), list_.end(), [&](const FieldError& e) { return e.field == field; });
}

std::string_view FieldErrors::on(std::string_view field) const {
    for (const FieldError& e : list_)
        if (e.field == field) return e.message;
    return {};
}

std::string label_of(std::string_view field_name) {
    std::string out(field_name);
    std::replace(out.begin(), out.end(), '_', ' ');
    if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 'a' + 'A');
    return out;
}

std::string_view trim(std::string_view s) {
    constexpr std::string_view kSpace = " \t\r\n\f\v";
    size_t first = s.find_first_not_of(kSpace);
    if (first == s.npos) return {};
    return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

std::optional<size_t> utf8_length(std::string_view s) {
    size_t chars = 0;
    for (size_t i = 0; i < s.size(); ++chars) {
        auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
        unsigned char c = byte(i);
        if (c < 0x80) {
            ++i;
            continue;
        }
        size_t len;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            cp = c & 0x07;
        } else {
            return std::nullopt;  // a continuation byte first, C0/C1 (overlong), or past F4
        }
        if (i + len > s.size()) return std::nullopt;
        for (size_t k = 1; k < len; ++k) {
            if ((byte(i + k) & 0xC0) != 0x80) return std::nullopt;
            cp = (cp << 6) | (byte(i + k) & 0x3F);
        }
        bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
        bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
        if (overlong || surrogate || cp > 0x10FFFF) return std::nullopt;
        i += len;
    }
    return chars;
}

namespace {

bool has_control_characters(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](char ch) {
        auto c = static_cast<unsigned char>(ch);
        return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F;
    });
}

template <class N>
bool parse_whole(std::string_view text, N& out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
}

std::optional<int> digits(std::string_view s, size_t at, size_t len) {
    int v = 0;
    for (size_t i = at; i < at + len; ++i) {
        if (s[i] < '0' || s[i] > '9') return std::nullopt;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

}  // namespace

std::optional<std::chrono::sys_seconds> parse_datetime_local(std::string_view s) {
    if (s.size() != 16 && s.size() != 19) return std::nullopt;
    if (s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':') return std::nullopt;
    if (s.size() == 19 && s[16] != ':') return std::nullopt;
    auto y = digits(s, 0, 4), mo = digits(s, 5, 2), d = digits(s, 8, 2), h = digits(s, 11, 2), mi = digits(s, 14, 2);
    auto sec = s.size() == 19 ? digits(s, 17, 2) : std::optional<int>(0);
    if (!y || !mo || !d || !h || !mi || !sec || *h > 23 || *mi > 59 || *sec > 59) return std::nullopt;
    std::chrono::year_month_day ymd{std::chrono::year(*y), std::chrono::month(unsigned(*mo)), std::chrono::day(unsigned(*d))};
    if (!ymd.ok()) return std::nullopt;
    return std::chrono::sys_days(ymd) + std::chrono::hours(*h) + std::chrono::minutes(*mi) + std::chrono::seconds(*sec);
}

std::string datetime_local(std::chrono::sys_seconds t) {
    auto days = std::chrono::floor<std::chrono::days>(t);
    std::chrono::year_month_day ymd(days);
    std::chrono::hh_mm_ss hms(t - days);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d", int(ymd.year()), unsigned(ymd.month()),
                  unsigned(ymd.day()), int(hms.hours().count()), int(hms.minutes().count()),
                  int(hms.seconds().count()));
    return buf;
}

namespace detail {

bool parse_form_number(std::string_view text, long long& out) { return parse_whole(text, out); }
bool parse_form_number(std::string_view text, unsigned long long& out) { return parse_whole(text, out); }
bool parse_form_number(std::string_view text, double& out) {
    return parse_whole(text, out) && std::isfinite(out);  // from_chars takes "inf" and "nan": a form does not
}

std::string format_form_number(long long v) { return std::to_string(v); }
std::string format_form_number(unsigned long long v) { return std::to_string(v); }
std::string format_form_number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

}  // namespace detail

FormReader::FormReader(const Request& req) : form_(req.form()) {}

void FormReader::fail(std::string_view name, std::string_view label, std::string_view what) {
    std::string message = label.empty() ? label_of(name) : std::string(label);
    message += ' ';
    message += what;
    errors_.add(name, std::move(message));
}

void FormReader::fail_range(std::string_view name, std::string_view label, std::string_view relation,
                            std::string bound) {
    fail(name, label, "must be " + std::string(relation) + " " + bound);
}

std::optional<std::string_view> FormReader::present(std::string_view name, std::string_view label, bool required) {
    std::string_view text = trim(form_.get(name).value_or(""));
    if (!text.empty()) return text;
    if (required) fail(name, label, "can't be blank");
    return std::nullopt;
}

FormReader& FormReader::text(std::string_view name, std::string& out, const TextRules& rules) {
    std::string_view raw = form_.get(name).value_or("");
    std::optional<size_t> chars = utf8_length(raw);
    if (!chars || has_control_characters(raw)) {
        fail(name, rules.label, "contains characters that are not allowed");
        return *this;  // not stored: such bytes should not go back into a page
    }
    std::string_view trimmed = trim(raw);
    out.assign(rules.trim ? trimmed : raw);  // kept even when wrong, so the form shows what was typed
    if (trimmed.empty()) {
        if (rules.required) fail(name, rules.label, "can't be blank");
        return *this;
    }
    size_t length = rules.trim ? *utf8_length(trimmed) : *chars;
    if (rules.max_chars && length > rules.max_chars)
        fail(name, rules.label, "is too long (at most " + std::to_string(rules.max_chars) + " characters)");
    else if (length < rules.min_chars)
        fail(name, rules.label, "is too short (at least " + std::to_string(rules.min_chars) + " characters)");
    return *this;
}

FormReader& FormReader::checkbox(std::string_view name, bool& out) {
    auto v = form_.get(name);
    out = v && (*v == "1" || *v == "on" || *v == "true");
    return *this;
}

FormReader& FormReader::choice(std::string_view name, std::string& out, std::initializer_list<std::string_view> allowed,
                               const ChoiceRules& rules) {
    auto text = present(name, rules.label, rules.required);
    if (!text) return *this;
    if (std::find(allowed.begin(), allowed.end(), *text) == allowed.end()) {
        fail(name, rules.label, "is not one of the choices");
        return *this;
    }
    out.assign(*text);
    return *this;
}

FormReader& FormReader::datetime(std::string_view name, std::chrono::sys_seconds& out, const DateTimeRules& rules) {
    auto text = present(name, rules.label, rules.required);
    if (!text) return *this;
    auto t = parse_datetime_local(*text);
    if (!t) {
        fail(name, rules.label, "must be a date and time");
        return *this;
    }
    out = *t;
    return *this;
}

FormReader& FormReader::check(bool ok, std::string_view field, std::string message) {
    if (!ok) errors_.add(field, std::move(message));
    return *this;
}

}  // namespace kiln
