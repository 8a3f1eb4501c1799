// HTTP-date (RFC 9110 §5.6.7) both ways: the Date header value (IMF-fixdate),
// formatted at most once a second per event loop so every response on that loop
// shares the same bytes; and parsing If-Modified-Since / If-Range values: the
// preferred IMF-fixdate and, as recipients must also accept, the obsolete RFC 850
// and asctime forms (pure, no locale, no allocation; any thread).
#pragma once
#include <ctime>
#include <optional>
#include <string_view>

namespace kiln::http {

class DateCache {
public:
    // "Sun, 06 Nov 1994 08:49:37 GMT" for the given wall-clock second.
    std::string_view get(time_t now);

private:
    time_t last_ = -1;
    char buf_[32];
};

// Formats t into out (at least 29 bytes); returns the length (29).
size_t format_imf_fixdate(time_t t, char* out);

// Seconds since the epoch (UTC) for one of
//   "Sun, 06 Nov 1994 08:49:37 GMT"   IMF-fixdate
//   "Sunday, 06-Nov-94 08:49:37 GMT"  RFC 850 (two-digit year: 70..99 -> 19xx, else 20xx)
//   "Sun Nov  6 08:49:37 1994"        asctime
// Surrounding whitespace is ignored; anything else (a bad field, a leap second, a
// day that the month lacks, trailing text) gives nullopt. The weekday name is
// checked for spelling but not against the date, as most servers do.
std::optional<time_t> parse_http_date(std::string_view s);

}  // namespace kiln::http
