#include <kiln/form_reader.hpp>

#include <algorithm>
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

namespace {

bool has_control_characters(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](char ch) {
        auto c = static_cast<unsigned char>(ch);
        return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F;
    });
}

}  // namespace

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
