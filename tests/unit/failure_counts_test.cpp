// auth::FailureCounts on SQLite, with the times chosen by the test: a key counts up
// to its limit and no further, a window ends `window` seconds after its first count
// and the next count starts over at 1, and a count given back after its window ended
// does not come out of the next window's.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <unistd.h>

#include <kiln/auth.hpp>
#include <kiln/store.hpp>

#include "auth/failure_counts.hpp"
#include "support/async_test.hpp"

namespace {

using kiln::auth::FailureCounts;
using kiln::auth::Failures;

class FailureCountsTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("kiln-failure-counts-" + std::to_string(::getpid()));
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
        path_ = dir_ / "app.sqlite";
        kiln::db::Database setup(path_);
        setup.exec(
            "CREATE TABLE auth_failures (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, "
            "failures INTEGER NOT NULL, window_start INTEGER NOT NULL)");
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    // The row of `key` as {failures, window_start}; {0, 0} when there is none.
    static kiln::Task<std::pair<int64_t, int64_t>> row(kiln::Store& store, const std::string& key) {
        std::vector<Failures> f = co_await store.where<Failures>("key = ?", key);
        if (f.empty()) co_return std::pair<int64_t, int64_t>{0, 0};
        co_return std::pair<int64_t, int64_t>{f.front().failures, f.front().window_start};
    }

    std::filesystem::path dir_, path_;
};

constexpr int64_t kT = 1'800'000'000;  // a start time; the window is 100 s

TEST_F(FailureCountsTest, AKeyCountsUpToItsLimitWithinItsWindowThenStartsOver) {
    kiln::Store store(path_);
    FailureCounts counts(store, std::chrono::seconds(100));
    kiln::test::run([&]() -> kiln::Task<> {
        for (int i = 0; i < 3; ++i) EXPECT_TRUE(co_await counts.count_within("address:a", 3, kT + i)) << i;
        EXPECT_FALSE(co_await counts.count_within("address:a", 3, kT + 50));  // at the limit: unchanged
        auto r = co_await row(store, "address:a");
        EXPECT_EQ(r.first, 3);
        EXPECT_EQ(r.second, kT);
        EXPECT_EQ(co_await counts.wait_of("address:a", kT + 50), 50);
        EXPECT_FALSE(co_await counts.count_within("address:a", 3, kT + 99));  // the window's last second
        EXPECT_TRUE(co_await counts.count_within("address:a", 3, kT + 100));  // a new window, at 1
        r = co_await row(store, "address:a");
        EXPECT_EQ(r.first, 1);
        EXPECT_EQ(r.second, kT + 100);
        EXPECT_TRUE(co_await counts.count_within("address:b", 3, kT + 50));  // another key is its own
        EXPECT_EQ((co_await row(store, "address:b")).first, 1);
    });
}

TEST_F(FailureCountsTest, ACountGivenBackInItsWindowComesOff) {
    kiln::Store store(path_);
    FailureCounts counts(store, std::chrono::seconds(100));
    kiln::test::run([&]() -> kiln::Task<> {
        EXPECT_TRUE(co_await counts.count_within("address:a", 3, kT));
        EXPECT_TRUE(co_await counts.count_within("address:a", 3, kT + 10));
        co_await counts.give_back("address:a", kT + 10);
        EXPECT_EQ((co_await row(store, "address:a")).first, 1);
        co_await counts.give_back("address:a", kT);
        co_await counts.give_back("address:a", kT);  // never below 0
        EXPECT_EQ((co_await row(store, "address:a")).first, 0);
        co_await counts.give_back("address:none", kT);  // no row: nothing happens
        EXPECT_EQ((co_await row(store, "address:none")).first, 0);
    });
}

TEST_F(FailureCountsTest, ACountGivenBackAfterItsWindowEndedLeavesTheNextWindowAlone) {
    // An attempt counts at the last second of a window; before it gives its count back
    // (a log-in that succeeds, after its password hash), another attempt from the same
    // address starts the next window. The give-back must not take that one's count.
    kiln::Store store(path_);
    FailureCounts counts(store, std::chrono::seconds(100));
    kiln::test::run([&]() -> kiln::Task<> {
        EXPECT_TRUE(co_await counts.count_within("address:a", 3, kT));
        EXPECT_TRUE(co_await counts.count_within("address:a", 3, kT + 99));  // the success's count
        EXPECT_TRUE(co_await counts.count_within("address:a", 3, kT + 100));  // a failure: window 2
        co_await counts.give_back("address:a", kT + 99);
        auto r = co_await row(store, "address:a");
        EXPECT_EQ(r.first, 1) << "the give-back took a count of the window it was not in";
        EXPECT_EQ(r.second, kT + 100);
        co_await counts.give_back("address:a", kT + 100);  // its own window: it comes off
        EXPECT_EQ((co_await row(store, "address:a")).first, 0);
    });
}

TEST_F(FailureCountsTest, ForgetDropsBothKeysAndNoOther) {
    kiln::Store store(path_);
    FailureCounts counts(store, std::chrono::seconds(100));
    kiln::test::run([&]() -> kiln::Task<> {
        for (const char* key : {"account:x", "account:x from:a", "address:a"})
            EXPECT_TRUE(co_await counts.count_within(key, 3, kT));
        co_await counts.forget("account:x", "account:x from:a");
        EXPECT_EQ((co_await row(store, "account:x")).first, 0);
        EXPECT_EQ((co_await row(store, "account:x from:a")).first, 0);
        EXPECT_EQ((co_await row(store, "address:a")).first, 1);
    });
}

TEST_F(FailureCountsTest, PurgeDropsTheRowsOfWindowsThatAreOverAndNoOther) {
    kiln::Store store(path_);
    FailureCounts counts(store, std::chrono::seconds(100));
    kiln::test::run([&]() -> kiln::Task<> {
        EXPECT_TRUE(co_await counts.count_within("address:old", 3, kT));
        EXPECT_TRUE(co_await counts.count_within("address:edge", 3, kT + 2));
        EXPECT_TRUE(co_await counts.count_within("address:new", 3, kT + 60));
        co_await counts.purge(kT + 101);  // windows of 100 s: address:old's is over since kT + 100
        EXPECT_EQ((co_await row(store, "address:old")).first, 0);
        EXPECT_EQ((co_await row(store, "address:edge")).first, 1);  // its window is over at kT + 102
        EXPECT_EQ((co_await row(store, "address:new")).first, 1);
        EXPECT_EQ(co_await store.count<Failures>(), 2);
    });
}

}  // namespace
