#include "auth/failure_counts.hpp"

#include <algorithm>
#include <atomic>
#include <vector>

#include <kiln/auth.hpp>  // Model<Failures>

namespace kiln::auth {
namespace {
std::atomic<void (*)()> give_back_hook{nullptr};
}  // namespace

void set_give_back_hook(void (*hook)()) { give_back_hook.store(hook, std::memory_order_release); }

Task<bool> FailureCounts::count_within(const std::string& key, int limit, int64_t now) {
    // One statement, so concurrent attempts each see the others: the row changes
    // only if its window is over (it starts again at 1) or it is under the limit.
    int64_t stale = now - window_;  // a window started at or before this is over
    int64_t changed = co_await store_.execute(
        "INSERT INTO auth_failures (key, failures, window_start) VALUES (?, 1, ?) "
        "ON CONFLICT (key) DO UPDATE SET "
        "failures = CASE WHEN auth_failures.window_start <= ? THEN 1 ELSE auth_failures.failures + 1 END, "
        "window_start = CASE WHEN auth_failures.window_start <= ? THEN ? ELSE auth_failures.window_start END "
        "WHERE auth_failures.window_start <= ? OR auth_failures.failures < ?",
        key, now, stale, stale, now, stale, limit);
    co_return changed > 0;
}

Task<> FailureCounts::give_back(const std::string& key, int64_t counted_at) {
    // The count went into the window current at counted_at, which started at or before
    // it. A later window starts after it: count_within restarts a window only at a
    // `now` at least `window_` past the old start, and that start was later than
    // counted_at - window_.
    if (void (*hook)() = give_back_hook.load(std::memory_order_acquire)) hook();
    co_await store_.execute(
        "UPDATE auth_failures SET failures = failures - 1 WHERE key = ? AND failures > 0 AND window_start <= ?", key,
        counted_at);
}

Task<int64_t> FailureCounts::wait_of(const std::string& key, int64_t now) {
    std::vector<Failures> f = co_await store_.where<Failures>("key = ?", key);
    int64_t end = f.empty() ? now : f.front().window_start + window_;
    co_return std::max<int64_t>(1, end - now);
}

Task<> FailureCounts::forget(const std::string& key, const std::string& other) {
    co_await store_.execute("DELETE FROM auth_failures WHERE key = ? OR key = ?", key, other);
}

Task<> FailureCounts::purge(int64_t now) {
    co_await store_.execute("DELETE FROM auth_failures WHERE window_start <= ?", now - window_);
}

}  // namespace kiln::auth
