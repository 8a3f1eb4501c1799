// Running coroutines in a test: a loop of the test's own, driven until the test's
// coroutine ends (the client tests of pg and redis share it).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <kiln/sleep.hpp>
#include <kiln/task.hpp>

#include "net/async.hpp"
#include "net/loop.hpp"

namespace kiln::test {

// Runs body() as a coroutine on `loop` until it ends; rethrows what it threw.
inline void run(net::Loop& loop, std::function<Task<>()> body) {
    std::exception_ptr error;
    auto main = [&]() -> Task<> {
        try {
            co_await body();
        } catch (...) {
            error = std::current_exception();
        }
        loop.stop();
    };
    Task<> task = main();
    loop.defer([](void* t) { static_cast<Task<>*>(t)->start(); }, &task);
    loop.run();
    if (error) std::rethrow_exception(error);
}

inline void run(std::function<Task<>()> body) {
    net::Loop loop;
    run(loop, std::move(body));
}

// Waits (on the loop) until every task is done; rethrows the first failure.
inline Task<> join(std::vector<Task<>>& tasks) {
    for (;;) {
        bool all = true;
        for (auto& t : tasks) all = all && t.done();
        if (all) break;
        co_await sleep(1);
    }
    for (auto& t : tasks) t.result();
}

// Runs body() in a scope of its own for at most `limit`, then cancels it (its wait
// throws kiln::Cancelled); returns how long it ran. For a wait that would never end
// were the code under test wrong: the test fails instead of hanging.
inline Task<std::chrono::steady_clock::duration> run_for_at_most(std::chrono::milliseconds limit,
                                                                 std::function<Task<>()> body) {
    auto started = std::chrono::steady_clock::now();
    net::AsyncScope scope;
    Task<> task;
    {
        net::AsyncScope::Enter enter(&scope);
        task = body();
        task.start();
    }
    while (!task.done() && std::chrono::steady_clock::now() - started < limit) co_await sleep(10);
    auto ran = std::chrono::steady_clock::now() - started;
    scope.cancel();
    while (!task.done()) co_await sleep(1);
    co_return ran;
}

// Runs `$<env> <action>` (a test server's ctl: stop, start, ...) on a thread, so the
// loop keeps serving meanwhile.
class Ctl {
public:
    Ctl(const char* env, std::string action) {
        const char* ctl = std::getenv(env);
        if (!ctl) throw std::runtime_error(std::string(env) + " is not set: run the test through its server script (ctest does)");
        thread_ = std::thread([this, cmd = std::string(ctl) + " " + action] {
            status_ = std::system(cmd.c_str());
            done_ = true;
        });
    }
    ~Ctl() { thread_.join(); }
    Ctl(const Ctl&) = delete;
    Ctl& operator=(const Ctl&) = delete;
    bool done() const { return done_; }
    int status() const { return status_; }

private:
    std::atomic<bool> done_{false};
    std::atomic<int> status_{-1};
    std::thread thread_;
};

}  // namespace kiln::test
