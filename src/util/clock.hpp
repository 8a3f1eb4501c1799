// Monotonic microseconds, for measuring how long something took (not for timers:
// those use net::Loop's per-iteration clock).
#pragma once
#include <time.h>

#include <cstdint>

namespace kiln::util {

inline uint64_t monotonic_us() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000 + static_cast<uint64_t>(ts.tv_nsec) / 1000;
}

}  // namespace kiln::util
