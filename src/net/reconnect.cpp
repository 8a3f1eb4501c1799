#include "net/reconnect.hpp"

#include <algorithm>
#include <random>

#include "util/random.hpp"

namespace kiln::net {

void Reconnect::lost(Loop& loop, std::string why, std::chrono::milliseconds min, std::chrono::milliseconds max) {
    last_error = std::move(why);
    uint64_t lo = static_cast<uint64_t>(std::max<int64_t>(min.count(), 1));
    uint64_t hi = static_cast<uint64_t>(std::max<int64_t>(max.count(), 1));
    if (up_ms != 0 && loop.now_ms() - up_ms >= hi) backoff_ms = 0;  // it lasted
    up_ms = 0;
    backoff_ms = backoff_ms == 0 ? lo : std::min(backoff_ms * 2, hi);
    // A random half to all of it: after a restart of the server, every connection of
    // every loop, worker and node lost it at once, and would come back at once.
    thread_local std::minstd_rand jitter([] {
        uint32_t seed;
        util::random_bytes(&seed, sizeof seed);
        return seed;
    }());
    uint64_t wait = backoff_ms / 2 + std::uniform_int_distribution<uint64_t>(0, backoff_ms - backoff_ms / 2)(jitter);
    loop.deadlines().arm(retry, loop.now_ms() + std::max<uint64_t>(wait, 1));
}

std::string Reconnect::unavailable(const Loop& loop, const char* what) const {
    std::string message = what;
    if (!last_error.empty()) message += " (last: " + last_error + ")";
    if (retry.armed())
        message += "; retrying in " + std::to_string(retry.at_ms > loop.now_ms() ? retry.at_ms - loop.now_ms() : 0) + " ms";
    return message;
}

}  // namespace kiln::net
