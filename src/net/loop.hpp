// The event loop: one epoll instance, edge-triggered, one per thread. Handlers
// are registered per fd with an IoHandler*; timers live in fixed-duration lists
// (a connection's phases) or in a heap (one-shot deadlines of any length);
// the cached clock is refreshed once per iteration (no clock syscall per event).
// Everything except stop() and wake() must be called on the loop's own thread.
#pragma once
#include <sys/epoll.h>

#include <atomic>
#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "net/buffer.hpp"
#include "net/deadline_heap.hpp"
#include "net/timer.hpp"

namespace kiln::net {

class Mailbox;

class IoHandler {
public:
    virtual void on_io(uint32_t events) = 0;
protected:
    ~IoHandler() = default;
};

class Loop {
public:
    Loop();
    ~Loop();
    Loop(const Loop&) = delete;
    Loop& operator=(const Loop&) = delete;

    // Registers fd; events is an EPOLL* mask (EPOLLET is added for sockets by the caller).
    void add(int fd, uint32_t events, IoHandler* handler);
    // A registered fd's new interest (one epoll_ctl, where remove + add is two).
    void modify(int fd, uint32_t events, IoHandler* handler);
    void remove(int fd);

    // The list of timers of this duration (created on first use).
    TimerList& timers(uint32_t duration_ms);
    // One-shot timers with their own deadlines (any duration).
    DeadlineHeap& deadlines() { return deadlines_; }

    // Runs fn(arg) on this loop thread after the events of the current iteration
    // (or of the next one, if called between iterations): work that must not run
    // inside the caller's stack, such as resuming a coroutine whose wait was cancelled.
    void defer(void (*fn)(void*), void* arg) { deferred_.push_back({fn, arg}); }
    // After run() returned (a server closing its connections on the way out): runs
    // what is deferred, and what that defers, so cancelled coroutines can end.
    void finish_deferred();

    // The loop running on this thread (inside run()), or null.
    static Loop* current();

    // Runs fn(arg) on this loop's thread when the loop is destroyed, first thing,
    // while it still works (per-loop resources such as a database client close here).
    void at_exit(void (*fn)(void*), void* arg) { exit_hooks_.push_back({fn, arg}); }

    uint64_t now_ms() const { return now_ms_; }       // monotonic, cached per iteration
    time_t wall_seconds() const { return wall_s_; }   // CLOCK_REALTIME seconds, cached
    BufferPool& buffers() { return pool_; }

    // Deletes obj at the end of the current iteration, after every event of the
    // batch was handled: an object closed by another's event may still be named
    // by a later event in the same batch.
    template <class T>
    void destroy_later(T* obj) {
        graveyard_.push_back({obj, [](void* p) { delete static_cast<T*>(p); }});
    }

    // Runs until stop(). Wake hooks run on the loop thread after wake(), in the
    // order they were added; add them before run().
    void run();
    // One iteration, waiting at most max_wait_ms for an event (a harness that drives
    // the loop step by step: fuzzers, tests).
    void run_once(int max_wait_ms = 0);
    void add_wake_hook(std::function<void()> fn) { wake_hooks_.push_back(std::move(fn)); }
    void wake();  // any thread
    // Other threads' way to run work on this loop (see net/mailbox.hpp).
    const std::shared_ptr<Mailbox>& mailbox() const { return mailbox_; }
    void stop();  // any thread
    bool in_loop_thread() const { return std::this_thread::get_id() == owner_; }

private:
    class Waker;
    void update_clock();
    void iterate(int max_wait_ms);  // -1: until an event or a timer
    int epoll_fd_ = -1;
    int wake_fd_ = -1;
    std::unique_ptr<Waker> waker_;
    std::atomic<bool> stop_{false};
    std::vector<std::function<void()>> wake_hooks_;
    std::shared_ptr<Mailbox> mailbox_;
    std::vector<std::unique_ptr<TimerList>> lists_;
    DeadlineHeap deadlines_;
    struct Deferred {
        void (*fn)(void*);
        void* arg;
    };
    std::vector<Deferred> deferred_;
    std::vector<Deferred> exit_hooks_;
    void run_deferred();
    uint64_t now_ms_ = 0;
    time_t wall_s_ = 0;
    BufferPool pool_;
    std::thread::id owner_;
    struct Grave {
        void* obj;
        void (*destroy)(void*);
    };
    std::vector<Grave> graveyard_;
    void bury();
};

}  // namespace kiln::net
