// What a client connection that comes back by itself keeps between attempts: the
// retry on the loop's deadline heap, its back-off (min, doubling to max, reset by a
// success; each wait a random half to all of it) and the last reason, for the "no connection" errors that fail requests
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
    uint64_t backoff_ms = 0;  // the last wait's bound (it was half to all of it); 0: the last attempt succeeded
    std::string last_error;

    // The connection was lost (or an attempt failed): the retry is armed.
    void lost(Loop& loop, std::string why, std::chrono::milliseconds min, std::chrono::milliseconds max);
    void recovered() {
        backoff_ms = 0;
        last_error.clear();
    }
    // "<what> (last: <why>); retrying in N ms", the parts it knows.
    std::string unavailable(const Loop& loop, const char* what) const;
};

}  // namespace kiln::net
