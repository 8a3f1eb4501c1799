// redis::Cache: read-through, with the misses of one key on one event loop computed
// once (a flight): the requests that miss while it is computed wait for its value.
#include <kiln/redis.hpp>

#include <ctime>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "net/async.hpp"
#include "net/loop.hpp"
#include "net/pending.hpp"
#include "util/log.hpp"

namespace kiln::redis {
namespace {

// A request waiting for another's computation of the same key.
struct Waiter final : net::Pending {
    using net::Pending::Pending;
    std::string value;
    bool again = false;  // the computing request went without a value: compute it anew
};

struct Flight {
    bool done = false;   // value is in place (and being stored)
    bool stale = false;  // invalidate() came while it ran: not stored, not given to later misses
    std::string value;
    std::vector<Waiter*> waiters;  // each holds a reference
};

// This loop's flights, by cache and full key.
using Flights = std::unordered_map<const Cache*, std::unordered_map<std::string, std::shared_ptr<Flight>>>;
thread_local Flights flights;

std::shared_ptr<Flight> flight_of(const Cache* cache, const std::string& key) {
    auto c = flights.find(cache);
    if (c == flights.end()) return nullptr;
    auto f = c->second.find(key);
    return f == c->second.end() ? nullptr : f->second;
}

// co_await: the flight's value, or nullopt if it must be computed again.
class Join {
public:
    explicit Join(Flight& f) : op_(new Waiter(*net::Loop::current())) {
        op_->hold();  // the flight's reference, until it answers
        f.waiters.push_back(op_);
    }
    Join(const Join&) = delete;
    Join& operator=(const Join&) = delete;
    ~Join() { op_->abandon(); }
    bool await_ready() const noexcept { return op_->done; }
    bool await_suspend(std::coroutine_handle<> h) { return op_->suspend(h); }
    std::optional<std::string> await_resume() {
        op_->settle();  // kiln::Cancelled (this request's), or what the computation threw
        if (op_->again) return std::nullopt;
        return std::move(op_->value);
    }

private:
    Waiter* op_;
};

// The computing request's side: answers the waiters once, and takes the flight off
// the loop's list when it goes (a request cancelled, or its frame destroyed, mid-way:
// the waiters compute anew, one of them for all).
class Lead {
public:
    Lead(const Cache* cache, std::string key) : cache_(cache), key_(std::move(key)), flight_(std::make_shared<Flight>()) {
        flights[cache_][key_] = flight_;
    }
    Lead(const Lead&) = delete;
    Lead& operator=(const Lead&) = delete;
    ~Lead() {
        answer([](Waiter& w) { w.again = true; }, nullptr);
        auto c = flights.find(cache_);
        if (c == flights.end()) return;
        if (auto f = c->second.find(key_); f != c->second.end() && f->second == flight_) c->second.erase(f);
        if (c->second.empty()) flights.erase(c);
    }
    void succeed(const std::string& value) {
        flight_->done = true;
        flight_->value = value;
        answer([&](Waiter& w) { w.value = value; }, nullptr);
    }
    void fail(std::exception_ptr e) {
        answer([](Waiter&) {}, std::move(e));
    }
    bool stale() const { return flight_->stale; }

private:
    template <class Fn>
    void answer(Fn fn, std::exception_ptr error) {
        std::vector<Waiter*> waiters = std::exchange(flight_->waiters, {});
        for (Waiter* w : waiters) {
            if (error) {
                w->fail(error);
            } else {
                fn(*w);
                w->finish();
            }
            w->release();
        }
    }

    const Cache* cache_;
    std::string key_;
    std::shared_ptr<Flight> flight_;
};

}  // namespace

Cache::Cache(PerLoop& redis, std::string prefix) : redis_(redis), prefix_(std::move(prefix)) {}

Task<std::string> Cache::get_or_set(std::string key, std::chrono::seconds ttl, std::function<Task<std::string>()> fn) {
    Client& client = redis_.local();
    std::string full = prefix_ + key;
    for (;;) {
        std::shared_ptr<Flight> flight = flight_of(this, full);
        bool reachable = true;
        if (!flight) {
            try {
                std::optional<std::string> hit = co_await client.get(full);
                if (hit) co_return std::move(*hit);
            } catch (const Error& e) {
                // Unreachable, or not answering reads now (LOADING): the page goes on
                // without the cache. A wrong type under the key is a bug to see.
                if (e.kind() != Error::Kind::Io && e.kind() != Error::Kind::Busy) throw;
                reachable = false;
            }
            flight = flight_of(this, full);  // one may have started while we read
        }
        if (flight) {
            if (flight->done) co_return flight->value;  // computed; being stored
            std::optional<std::string> value = co_await Join(*flight);
            if (value) co_return std::move(*value);
            continue;  // its request went: look again
        }
        Lead lead(this, full);
        net::AsyncScope* scope = net::AsyncScope::current();  // this request's
        std::string value;
        try {
            value = co_await fn();
        } catch (const Cancelled&) {
            // This request went: the waiters compute anew (Lead's destructor). A
            // Cancelled of fn's own is its failure, as any other exception.
            if (!scope || scope->cancelled()) throw;
            lead.fail(std::current_exception());
            throw;
        } catch (...) {
            lead.fail(std::current_exception());
            throw;
        }
        lead.succeed(value);
        if (reachable && ttl.count() > 0 && !lead.stale()) {  // (0 or less: expired already, not stored for ever)
            try {
                co_await client.set(full, value, ttl);
            } catch (const Error& e) {
                // Refused (OOM at maxmemory, MISCONF after a failed snapshot, READONLY
                // on a replica) or lost: the value is computed, and the page has it.
                // Said in the error log at most once a minute per thread: a cache that
                // stores nothing is otherwise silent.
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
}

Task<> Cache::invalidate(std::string key) {
    std::string full = prefix_ + key;
    // A computation of this loop that began before the write this follows may hold
    // the old data: later misses must not get it, and it is not stored.
    if (auto c = flights.find(this); c != flights.end()) {
        if (auto f = c->second.find(full); f != c->second.end()) {
            f->second->stale = true;
            c->second.erase(f);
        }
        if (c->second.empty()) flights.erase(c);
    }
    co_await redis_.local().del(full);
}

}  // namespace kiln::redis
