// What a client connection that comes back by itself keeps between attempts: the
// retry on the loop's deadline heap, its back-off (min, doubling to max, reset by a
// connection that lasted; each wait a random half to all of it) and the last reason, for the "no connection" errors that fail requests
// at once meanwhile. Shared by the PostgreSQL and Redis clients' pools and hubs; the
// owner sets retry.owner/fire and replaces the lost connection when it fires.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include "net/deadline_heap.hpp"
#include "net/loop.hpp"

namespace kiln::net {

struct Reconnect {
    Deadline retry;
    uint64_t backoff_ms = 0;  // the last wait's bound (it was half to all of it); 0: none since a connection lasted
    uint64_t up_ms = 0;       // when the connection came up; 0: it is not up
    std::string last_error;

    // The connection was lost (or an attempt failed): the retry is armed. The back-off
    // starts again from `min` only after a connection that lasted `max` at least: one
    // the server drops soon after it came up (a refused channel, a crash loop behind a
    // proxy) goes on doubling, instead of coming back every `min`.
    void lost(Loop& loop, std::string why, std::chrono::milliseconds min, std::chrono::milliseconds max);
    void recovered(const Loop& loop) {
        up_ms = loop.now_ms();
        last_error.clear();
    }
    // "<what> (last: <why>); retrying in N ms", the parts it knows.
    std::string unavailable(const Loop& loop, const char* what) const;
};

}  // namespace kiln::net
