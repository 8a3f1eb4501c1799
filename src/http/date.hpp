// The Date header value (IMF-fixdate, RFC 9110 §5.6.7), formatted at most once a
// second per event loop; every response on that loop shares the same bytes.
#pragma once
#include <ctime>
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

}  // namespace kiln::http
