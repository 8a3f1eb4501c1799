// net::Loop and net::TimerList on their own: timers fire in deadline order and can
// be disarmed or re-armed, wake() from another thread runs the hooks on the loop
// thread, and destroy_later() outlives the batch of events that asked for it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <kiln/sleep.hpp>

#include "net/deadline_heap.hpp"
#include "net/loop.hpp"
#include "net/reconnect.hpp"
#include "net/timer.hpp"
#include "support/async_test.hpp"

namespace kiln::net {
namespace {

struct Recorder {
    std::vector<std::string>* log;
    std::string name;
    Timer timer;
};

void arm(Recorder& r, TimerList& list, uint64_t now, std::vector<std::string>& log, std::string name) {
    r.log = &log;
    r.name = std::move(name);
    r.timer.owner = &r;
    r.timer.fire = [](Timer* t) {
        auto* self = static_cast<Recorder*>(t->owner);
        self->log->push_back(self->name);
    };
    list.arm(r.timer, now);
}

}  // namespace

TEST(TimerList, FiresInDeadlineOrderOnlyWhenDue) {
    TimerList list(100);
    std::vector<std::string> log;
    Recorder a, b, c;
    arm(a, list, 0, log, "a");
    arm(b, list, 10, log, "b");
    arm(c, list, 20, log, "c");
    EXPECT_EQ(list.expire(99), 100u);
    EXPECT_TRUE(log.empty());
    EXPECT_EQ(list.expire(110), 120u);
    EXPECT_EQ(log, (std::vector<std::string>{"a", "b"}));
    EXPECT_FALSE(a.timer.armed());
    EXPECT_TRUE(c.timer.armed());
}

TEST(TimerList, RearmingMovesATimerToTheBackAndDisarmingRemovesIt) {
    TimerList list(100);
    std::vector<std::string> log;
    Recorder a, b, c;
    arm(a, list, 0, log, "a");
    arm(b, list, 0, log, "b");
    arm(c, list, 0, log, "c");
    list.arm(a.timer, 50);  // a's deadline moves to 150
    b.timer.disarm();
    list.expire(100);
    EXPECT_EQ(log, (std::vector<std::string>{"c"}));
    list.expire(150);
    EXPECT_EQ(log, (std::vector<std::string>{"c", "a"}));
    EXPECT_EQ(list.next_deadline(), UINT64_MAX);
}

TEST(Loop, WakeFromAnotherThreadRunsTheHooksOnTheLoopThread) {
    std::atomic<Loop*> loop_ptr{nullptr};
    std::atomic<int> woken{0};
    std::thread::id hook_thread, loop_thread;
    std::thread t([&] {
        Loop loop;
        loop.add_wake_hook([&] {
            hook_thread = std::this_thread::get_id();
            if (++woken == 2) loop.stop();
        });
        loop_thread = std::this_thread::get_id();
        loop_ptr = &loop;
        loop.run();
    });
    while (!loop_ptr.load()) std::this_thread::yield();
    loop_ptr.load()->wake();
    for (int i = 0; i < 200 && woken.load() < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    loop_ptr.load()->wake();
    t.join();
    EXPECT_EQ(woken.load(), 2);
    EXPECT_EQ(hook_thread, loop_thread);
}

TEST(Loop, TimersOfTheLoopFireWhileItRuns) {
    Loop loop;
    struct Stopper {
        Loop* loop;
        Timer timer;
        int fired = 0;
    } s{&loop, {}, 0};
    s.timer.owner = &s;
    s.timer.fire = [](Timer* t) {
        auto* self = static_cast<Stopper*>(t->owner);
        ++self->fired;
        self->loop->stop();
    };
    loop.timers(20).arm(s.timer, loop.now_ms());
    auto start = std::chrono::steady_clock::now();
    loop.run();
    EXPECT_EQ(s.fired, 1);
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(15));
}

TEST(Loop, DestroyLaterDeletesOnlyAfterTheBatch) {
    static int alive = 0;
    struct Tracked {
        Tracked() { ++alive; }
        ~Tracked() { --alive; }
    };
    Loop loop;
    loop.add_wake_hook([&] {
        loop.destroy_later(new Tracked());
        EXPECT_EQ(alive, 1);  // still there for the rest of the batch
        loop.stop();
    });
    loop.wake();
    loop.run();
    EXPECT_EQ(alive, 0);
}

}  // namespace kiln::net

// A deadline armed by a fire, due at once, waits for the next pass: a zero sleep
// resumed there and sleeping again fired again in the same pass, for ever.
TEST(DeadlineHeap, ADeadlineArmedByAFireWaitsForTheNextPass) {
    kiln::net::DeadlineHeap heap;
    struct Again {
        kiln::net::DeadlineHeap* heap;
        int fired = 0;
    } again{&heap};
    kiln::net::Deadline d;
    d.owner = &again;
    d.fire = [](kiln::net::Deadline* dl) {
        auto* a = static_cast<Again*>(dl->owner);
        if (++a->fired < 1000) a->heap->arm(*dl, 5);
    };
    heap.arm(d, 5);
    heap.expire(5);
    EXPECT_EQ(again.fired, 1);
    heap.expire(5);
    EXPECT_EQ(again.fired, 2);
    heap.disarm(d);
}

// kiln::sleep(0) is a yield: the loop's other work (here, deferred work) runs before
// the sleeper goes on.
TEST(Loop, AZeroSleepYieldsToTheLoop) {
    kiln::net::Loop loop;
    bool flag = false;
    int n = 0;
    kiln::test::run(loop, [&]() -> kiln::Task<> {
        loop.defer([](void* f) { *static_cast<bool*>(f) = true; }, &flag);
        while (!flag && n < 100000) {  // (bounded: it never ended before)
            ++n;
            co_await kiln::sleep(std::chrono::milliseconds(0));
        }
    });
    EXPECT_LE(n, 3);
}

// After a server restart every connection lost it at once: each comes back after a
// random half to all of its back-off, not all at the same moment.
TEST(Reconnect, EachWaitIsARandomHalfToAllOfTheBackOff) {
    kiln::net::Loop loop;
    std::set<uint64_t> waits;
    for (int i = 0; i < 50; ++i) {
        kiln::net::Reconnect r;
        r.retry.fire = [](kiln::net::Deadline*) {};
        r.lost(loop, "gone", std::chrono::milliseconds(100), std::chrono::milliseconds(1000));
        uint64_t wait = r.retry.at_ms - loop.now_ms();
        EXPECT_GE(wait, 50u);
        EXPECT_LE(wait, 100u);
        waits.insert(wait);
        loop.deadlines().disarm(r.retry);
    }
    EXPECT_GT(waits.size(), 5u);
}
