// kiln::Subscription on a loop of the test's own: a waiting coroutine resumes from the
// loop's deferred work, never inside the publish() that woke it; a wait cancelled
// just before a message comes ends once (Cancelled), and the message stays queued; a
// timeout gives nullopt; two coroutines cannot await one subscription; the queue is
// bounded in messages and in bytes.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

#include <kiln/task.hpp>
#include <kiln/topics.hpp>

#include "support/async_test.hpp"

using namespace std::chrono_literals;
using kiln::Task;

namespace {

// What one waiting coroutine saw.
struct Seen {
    int resumed = 0;
    int cancelled = 0;
    std::optional<std::string> message;
};

Task<> wait_once(kiln::Subscription& sub, Seen& seen, std::chrono::milliseconds timeout) {
    try {
        seen.message = co_await sub.next(timeout);
        ++seen.resumed;
    } catch (const kiln::Cancelled&) {
        ++seen.cancelled;
    }
}

}  // namespace

TEST(Topics, AWaitResumesAfterThePublishThatWokeIt) {
    kiln::test::run([]() -> Task<> {
        kiln::Subscription sub("news");
        Seen seen;
        Task<> waiter = wait_once(sub, seen, 10s);
        waiter.start();
        EXPECT_EQ(seen.resumed, 0);
        kiln::publish("news", "first");
        // The publisher's stack: the waiting coroutine has not run inside it (it could
        // have run another request's code in the middle of this handler's).
        EXPECT_EQ(seen.resumed, 0);
        // A due sleep may run before the deferred resume in the same turn (deadlines
        // expire first), so wait for it a bounded number of turns.
        for (int turn = 0; turn < 1000 && !waiter.done(); ++turn) co_await kiln::sleep(1);
        EXPECT_EQ(seen.resumed, 1);
        EXPECT_EQ(seen.message, "first");
        EXPECT_TRUE(waiter.done());
    });
}

TEST(Topics, AWaitCancelledAsAMessageComesEndsOnceAndTheMessageStays) {
    kiln::test::run([]() -> Task<> {
        kiln::Subscription sub("news");
        Seen seen;
        kiln::net::AsyncScope scope;
        Task<> waiter;
        {
            kiln::net::AsyncScope::Enter enter(&scope);
            waiter = wait_once(sub, seen, 10s);
            waiter.start();
        }
        // Both in one turn of the loop, before the cancel's deferred resume: the
        // message must not resume the cancelled wait a second time (before, it resumed
        // it at once, and the deferred resume then ran on a freed wait: ASan's
        // heap-use-after-free, or another coroutine resumed at the wrong point).
        scope.cancel();
        kiln::publish("news", "late");
        co_await kiln::sleep(1);
        co_await kiln::sleep(1);
        EXPECT_EQ(seen.cancelled, 1);
        EXPECT_EQ(seen.resumed, 0);
        EXPECT_TRUE(waiter.done());
        auto kept = co_await sub.next(1ms);  // the message was not lost
        EXPECT_EQ(kept, "late");
    });
}

TEST(Topics, ATimeoutGivesNulloptAndALaterMessageWaitsForTheNextCall) {
    kiln::test::run([]() -> Task<> {
        kiln::Subscription sub("news");
        Seen seen;
        Task<> waiter = wait_once(sub, seen, 5ms);
        waiter.start();
        while (!waiter.done()) co_await kiln::sleep(1);
        EXPECT_EQ(seen.resumed, 1);
        EXPECT_FALSE(seen.message);
        kiln::publish("news", "after");
        auto m = co_await sub.next(1s);
        EXPECT_EQ(m, "after");
    });
}

TEST(Topics, TwoCoroutinesCannotAwaitOneSubscription) {
    kiln::test::run([]() -> Task<> {
        kiln::Subscription sub("news");
        Seen first;
        Task<> waiter = wait_once(sub, first, 10s);
        waiter.start();
        bool refused = false;
        try {
            co_await sub.next(1s);
        } catch (const std::logic_error&) {
            refused = true;
        }
        EXPECT_TRUE(refused);
        kiln::publish("news", "one");
        while (!waiter.done()) co_await kiln::sleep(1);
        EXPECT_EQ(first.message, "one");
    });
}

TEST(Topics, AFrameDestroyedWhileWaitingLetsGo) {
    kiln::test::run([]() -> Task<> {
        kiln::Subscription sub("news");
        Seen seen;
        {
            Task<> waiter = wait_once(sub, seen, 5ms);
            waiter.start();
        }  // destroyed suspended: its deadline and the subscription's hold on it go
        co_await kiln::sleep(10);
        kiln::publish("news", "x");
        co_await kiln::sleep(1);
        EXPECT_EQ(seen.resumed + seen.cancelled, 0);
        EXPECT_EQ(co_await sub.next(1ms), "x");
    });
}

TEST(Topics, TheQueueIsBoundedInBytesAsInMessages) {
    kiln::test::run([]() -> Task<> {
        kiln::Subscription sub("news");
        sub.max_queued_bytes = 100 * 1024;
        const std::string blob(40 * 1024, 'b');
        for (int i = 0; i < 5; ++i) kiln::publish("news", std::to_string(i) + blob);
        EXPECT_EQ(sub.dropped(), 3u);  // 40 KiB each: two fit in 100 KiB
        auto m = co_await sub.next(1ms);
        EXPECT_EQ(m->front(), '3');
        m = co_await sub.next(1ms);
        EXPECT_EQ(m->front(), '4');
        sub.max_queued = 2;
        for (int i = 0; i < 3; ++i) kiln::publish("news", std::to_string(i));
        EXPECT_EQ(sub.dropped(), 4u);
        EXPECT_EQ(co_await sub.next(1ms), "1");
    });
}
