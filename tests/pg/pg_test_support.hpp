// What the PostgreSQL tests share: the server's URL (tests/pg/pg_server.py sets
// KILN_TEST_PG_URL), and running coroutines on a loop of the test's own.
#pragma once
#include <chrono>
#include <cstdlib>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <kiln/pg.hpp>
#include <kiln/task.hpp>

#include "support/async_test.hpp"

namespace kiln::pg_test {

inline std::string pg_url() {
    const char* url = std::getenv("KILN_TEST_PG_URL");
    if (!url || !*url)
        throw std::runtime_error("KILN_TEST_PG_URL is not set: run this test through tests/pg/pg_server.py (ctest does)");
    return url;
}

using test::join;
using test::run;

// pg_server.py's ctl (stop/start) on a thread, so the loop keeps serving meanwhile.
struct Ctl : test::Ctl {
    explicit Ctl(std::string action) : test::Ctl("KILN_TEST_PG_CTL", std::move(action)) {}
};

// After `Ctl pause(...)`: true once a new connection gets no answer (the control
// script takes a moment to stop the server). Bounded: 40 tries of 100 ms.
inline Task<bool> until_paused() {
    for (int i = 0; i < 40; ++i) {
        pg::Client probe({.url = pg_url(), .connect_timeout = std::chrono::milliseconds(100)});
        try {
            co_await probe.exec("SELECT 1");
        } catch (const db::Error&) {
            co_return true;
        }
    }
    co_return false;
}

}  // namespace kiln::pg_test
