#include "http/date.hpp"

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

}  // namespace kiln::http
