// Counts of failed attempts in fixed windows, one row per key in the app's
// auth_failures table (key, failures, window_start), so every worker and every node on
// one database shares them. Times are unix seconds, passed in: the caller takes one
// `now` per attempt, and the tests choose theirs.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include <kiln/store.hpp>
#include <kiln/task.hpp>

namespace kiln::auth {

class FailureCounts {
public:
    FailureCounts(Store& store, std::chrono::seconds window) : store_(store), window_(window.count()) {}

    // One more in key's window at `now` unless `limit` are counted in it already
    // (false: nothing changed). A window is over `window` seconds after its first count;
    // the next count starts a new one at 1.
    Task<bool> count_within(const std::string& key, int limit, int64_t now);
    // One less, if the window that held the count made at `counted_at` is still the
    // key's: a count taken back after its window ended must not come out of the next.
    Task<> give_back(const std::string& key, int64_t counted_at);
    // Seconds left of key's window at `now` (at least 1).
    Task<int64_t> wait_of(const std::string& key, int64_t now);
    // The counts of both keys start over (one statement).
    Task<> forget(const std::string& key, const std::string& other);
    // Drops the rows of every window over at `now` (their counts no longer matter).
    Task<> purge(int64_t now);

private:
    Store& store_;
    int64_t window_;
};

// Test hook: called on the loop thread as each give-back begins (a test cancels the
// request there, as a client hanging up at that moment would). nullptr, the default:
// none. Set it while no attempt runs.
void set_give_back_hook(void (*hook)());

}  // namespace kiln::auth
