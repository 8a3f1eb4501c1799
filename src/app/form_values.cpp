// The value-level helpers of <kiln/form_reader.hpp>: labels, trimming, UTF-8
// length, datetime-local both ways, and the number parsing FormReader::number uses.
// Pure functions of their input (fuzzed by tests/fuzz/fuzz_form_values.cpp).
#include <kiln/form_reader.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "util/utf8.hpp"

namespace kiln {

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
        size_t len = utf8::sequence_at(s, i);
        if (len == 0) return std::nullopt;
        i += len;
    }
    return chars;
}

namespace {

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

}  // namespace kiln
