// net::Loop and net::TimerList on their own: timers fire in deadline order and can
// be disarmed or re-armed, wake() from another thread runs the hooks on the loop
// thread, and destroy_later() outlives the batch of events that asked for it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "net/loop.hpp"
#include "net/timer.hpp"

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
