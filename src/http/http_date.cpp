#include "http/http_date.hpp"

#include <cstdint>

#include "http/chars.hpp"

namespace kiln::http {

size_t format_imf_fixdate(time_t t, char* out) {
    static constexpr char kDays[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr char kMonths[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    tm g;
    gmtime_r(&t, &g);
    auto two = [](char* p, int v) {
        p[0] = static_cast<char>('0' + v / 10);
        p[1] = static_cast<char>('0' + v % 10);
    };
    char* p = out;
    for (int i = 0; i < 3; ++i) *p++ = kDays[g.tm_wday][i];
    *p++ = ',';
    *p++ = ' ';
    two(p, g.tm_mday);
    p += 2;
    *p++ = ' ';
    for (int i = 0; i < 3; ++i) *p++ = kMonths[g.tm_mon][i];
    *p++ = ' ';
    int y = g.tm_year + 1900;
    two(p, y / 100);
    two(p + 2, y % 100);
    p += 4;
    *p++ = ' ';
    two(p, g.tm_hour);
    p[2] = ':';
    two(p + 3, g.tm_min);
    p[5] = ':';
    two(p + 6, g.tm_sec);
    p += 8;
    *p++ = ' ';
    *p++ = 'G';
    *p++ = 'M';
    *p++ = 'T';
    return static_cast<size_t>(p - out);
}

std::string_view DateCache::get(time_t now) {
    if (now != last_) {
        format_imf_fixdate(now, buf_);
        last_ = now;
    }
    return {buf_, 29};
}

namespace {

constexpr std::string_view kMonths[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::string_view kDays[7] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
constexpr std::string_view kLongDays[7] = {"Monday", "Tuesday", "Wednesday", "Thursday",
                                           "Friday", "Saturday", "Sunday"};

// A cursor over the text; every take_* returns false (and the parse fails) on a mismatch.
struct Cursor {
    std::string_view s;
    bool lit(std::string_view l) {
        if (!s.starts_with(l)) return false;
        s.remove_prefix(l.size());
        return true;
    }
    bool digits(size_t n, int& out) {
        if (s.size() < n) return false;
        out = 0;
        for (size_t i = 0; i < n; ++i) {
            if (s[i] < '0' || s[i] > '9') return false;
            out = out * 10 + (s[i] - '0');
        }
        s.remove_prefix(n);
        return true;
    }
    bool month(int& out) {
        for (int i = 0; i < 12; ++i)
            if (lit(kMonths[i])) {
                out = i + 1;
                return true;
            }
        return false;
    }
    bool time_of_day(int& h, int& m, int& sec) {
        return digits(2, h) && lit(":") && digits(2, m) && lit(":") && digits(2, sec);
    }
};

bool is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar.
int64_t days_from_civil(int y, int m, int d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

std::optional<time_t> to_time(int y, int mon, int d, int h, int mi, int s) {
    static constexpr int kMonthDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int max_day = kMonthDays[mon - 1] + (mon == 2 && is_leap(y));
    if (d < 1 || d > max_day || h > 23 || mi > 59 || s > 59) return std::nullopt;
    return static_cast<time_t>(days_from_civil(y, mon, d) * 86400 + h * 3600 + mi * 60 + s);
}

}  // namespace

std::optional<time_t> parse_http_date(std::string_view text) {
    Cursor c{chars::trim_ows(text)};
    int y = 0, mon = 0, d = 0, h = 0, mi = 0, sec = 0;
    for (std::string_view day : kLongDays) {  // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT"
        Cursor r = c;
        if (!r.lit(day) || !r.lit(", ")) continue;
        if (!(r.digits(2, d) && r.lit("-") && r.month(mon) && r.lit("-") && r.digits(2, y) && r.lit(" ") &&
              r.time_of_day(h, mi, sec) && r.lit(" GMT") && r.s.empty()))
            return std::nullopt;
        return to_time(y < 70 ? 2000 + y : 1900 + y, mon, d, h, mi, sec);
    }
    bool known_day = false;
    for (std::string_view day : kDays)
        if (c.lit(day)) {
            known_day = true;
            break;
        }
    if (!known_day) return std::nullopt;
    if (c.lit(", ")) {  // IMF-fixdate
        if (!(c.digits(2, d) && c.lit(" ") && c.month(mon) && c.lit(" ") && c.digits(4, y) && c.lit(" ") &&
              c.time_of_day(h, mi, sec) && c.lit(" GMT") && c.s.empty()))
            return std::nullopt;
        return to_time(y, mon, d, h, mi, sec);
    }
    // asctime: "Sun Nov  6 08:49:37 1994" (a one-digit day is padded with a space)
    if (!(c.lit(" ") && c.month(mon) && c.lit(" "))) return std::nullopt;
    if (!(c.lit(" ") ? c.digits(1, d) : c.digits(2, d))) return std::nullopt;
    if (!(c.lit(" ") && c.time_of_day(h, mi, sec) && c.lit(" ") && c.digits(4, y) && c.s.empty()))
        return std::nullopt;
    return to_time(y, mon, d, h, mi, sec);
}

}  // namespace kiln::http
