#include <kiln/redis.hpp>

#include <ctime>

#include "util/log.hpp"

namespace kiln::redis {

Cache::Cache(PerLoop& redis, std::string prefix) : redis_(redis), prefix_(std::move(prefix)) {}

Task<std::string> Cache::get_or_set(std::string key, std::chrono::seconds ttl, std::function<Task<std::string>()> fn) {
    Client& client = redis_.local();
    std::string full = prefix_ + key;
    bool reachable = true;
    try {
        std::optional<std::string> hit = co_await client.get(full);
        if (hit) co_return std::move(*hit);
    } catch (const Error& e) {
        // Unreachable, or not answering reads now (LOADING): the page goes on without
        // the cache. A wrong type under the key is a bug to see.
        if (e.kind() != Error::Kind::Io && e.kind() != Error::Kind::Busy) throw;
        reachable = false;
    }
    std::string value = co_await fn();
    if (reachable && ttl.count() > 0) {  // (0 or less: expired already, not stored for ever)
        try {
            co_await client.set(full, value, ttl);
        } catch (const Error& e) {
            // Refused (OOM at maxmemory, MISCONF after a failed snapshot, READONLY on
            // a replica) or lost: the value is computed, and the page has it. Said in
            // the error log at most once a minute per thread: a cache that stores
            // nothing is otherwise silent.
            thread_local int64_t last_said = 0;
            int64_t now = static_cast<int64_t>(std::time(nullptr));
            if (e.kind() != Error::Kind::Io && now - last_said >= 60) {
                last_said = now;
                util::log(util::LogLevel::Warn, "redis cache: storing %s failed: %s", full.c_str(), e.what());
            }
        }
    }
    co_return value;
}

Task<> Cache::invalidate(std::string key) {
    co_await redis_.local().del(prefix_ + key);
}

}  // namespace kiln::redis
