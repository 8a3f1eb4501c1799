#include "net/reconnect.hpp"

#include <algorithm>

namespace kiln::net {

void Reconnect::lost(Loop& loop, std::string why, std::chrono::milliseconds min, std::chrono::milliseconds max) {
    last_error = std::move(why);
    uint64_t lo = static_cast<uint64_t>(std::max<int64_t>(min.count(), 1));
    uint64_t hi = static_cast<uint64_t>(std::max<int64_t>(max.count(), 1));
    backoff_ms = backoff_ms == 0 ? lo : std::min(backoff_ms * 2, hi);
    loop.deadlines().arm(retry, loop.now_ms() + backoff_ms);
}

std::string Reconnect::unavailable(const Loop& loop, const char* what) const {
    std::string message = what;
    if (!last_error.empty()) message += " (last: " + last_error + ")";
    if (retry.armed())
        message += "; retrying in " + std::to_string(retry.at_ms > loop.now_ms() ? retry.at_ms - loop.now_ms() : 0) + " ms";
    return message;
}

}  // namespace kiln::net
