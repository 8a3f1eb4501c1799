// Date formatting helpers of kiln/view.hpp, UTC, into a fixed buffer.
#include <kiln/view.hpp>

#include <algorithm>
#include <cstdio>

namespace kiln {
namespace {

constexpr int64_t kMinSeconds = -62135596800;  // 0001-01-01T00:00:00Z
constexpr int64_t kMaxSeconds = 253402300799;  // 9999-12-31T23:59:59Z

DateText format(int64_t unix_seconds, bool rfc3339) {
    using namespace std::chrono;
    int64_t t = std::clamp(unix_seconds, kMinSeconds, kMaxSeconds);
    int64_t days_since = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);  // floor
    int64_t secs = t - days_since * 86400;
    year_month_day ymd{sys_days{days{days_since}}};
    int hh = static_cast<int>(secs / 3600), mm = static_cast<int>(secs / 60 % 60), ss = static_cast<int>(secs % 60);
    DateText out;
    int n = rfc3339 ? std::snprintf(out.data, sizeof out.data, "%04d-%02u-%02uT%02d:%02d:%02dZ", int(ymd.year()),
                                    unsigned(ymd.month()), unsigned(ymd.day()), hh, mm, ss)
                    : std::snprintf(out.data, sizeof out.data, "%04d-%02u-%02u %02d:%02d", int(ymd.year()),
                                    unsigned(ymd.month()), unsigned(ymd.day()), hh, mm);
    out.size = static_cast<uint8_t>(n > 0 ? n : 0);
    return out;
}

int64_t to_unix(std::chrono::system_clock::time_point t) {
    return std::chrono::floor<std::chrono::seconds>(t).time_since_epoch().count();
}

}  // namespace

inline namespace helpers {

DateText format_datetime(int64_t unix_seconds) { return format(unix_seconds, false); }
DateText format_datetime(std::chrono::system_clock::time_point t) { return format(to_unix(t), false); }
DateText format_rfc3339(int64_t unix_seconds) { return format(unix_seconds, true); }
DateText format_rfc3339(std::chrono::system_clock::time_point t) { return format(to_unix(t), true); }

}  // namespace helpers
}  // namespace kiln
