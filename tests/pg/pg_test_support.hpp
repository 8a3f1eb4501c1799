// What the PostgreSQL tests share: the server's URL (tests/pg/pg_server.py sets
// KILN_TEST_PG_URL), and running coroutines on a loop of the test's own.
#pragma once
#include <atomic>
#include <cstdlib>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <kiln/sleep.hpp>
#include <kiln/task.hpp>

#include "net/loop.hpp"

namespace kiln::pg_test {

inline std::string pg_url() {
    const char* url = std::getenv("KILN_TEST_PG_URL");
    if (!url || !*url)
        throw std::runtime_error("KILN_TEST_PG_URL is not set: run this test through tests/pg/pg_server.py (ctest does)");
    return url;
}

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

// Starts pg_server.py's ctl (stop/start) on a thread, so the loop keeps serving meanwhile.
class Ctl {
public:
    explicit Ctl(std::string action) {
        const char* ctl = std::getenv("KILN_TEST_PG_CTL");
        if (!ctl) throw std::runtime_error("KILN_TEST_PG_CTL is not set: run through tests/pg/pg_server.py");
        thread_ = std::thread([this, cmd = std::string(ctl) + " " + action] {
            status_ = std::system(cmd.c_str());
            done_ = true;
        });
    }
    ~Ctl() { thread_.join(); }
    bool done() const { return done_; }
    int status() const { return status_; }

private:
    std::atomic<bool> done_{false};
    std::atomic<int> status_{-1};
    std::thread thread_;
};

}  // namespace kiln::pg_test
