// Timeouts without a heap: every timer in a TimerList has the same duration, so
// appending at the tail keeps the list sorted by deadline and arm/disarm/expire are
// O(1) (the idea of h2o's timeout lists). A connection owns one Timer and moves it
// between the lists of its current phase (header, body, keep-alive, write).
// Belongs to one event loop.
#pragma once
#include <cstdint>

namespace kiln::net {

class TimerList;

struct Timer {
    // Called on the loop thread when the deadline passes; the timer is already disarmed.
    void (*fire)(Timer*) = nullptr;
    void* owner = nullptr;

    bool armed() const { return list != nullptr; }
    void disarm();

    Timer* prev = nullptr;
    Timer* next = nullptr;
    TimerList* list = nullptr;
    uint64_t deadline_ms = 0;
};

class TimerList {
public:
    explicit TimerList(uint32_t duration_ms);
    TimerList(const TimerList&) = delete;
    TimerList& operator=(const TimerList&) = delete;
    ~TimerList();

    uint32_t duration_ms() const { return duration_; }
    // (Re)arms t to fire duration_ms after now_ms.
    void arm(Timer& t, uint64_t now_ms);
    // Fires every timer whose deadline <= now_ms; returns the next deadline or UINT64_MAX.
    uint64_t expire(uint64_t now_ms);
    uint64_t next_deadline() const;

private:
    friend struct Timer;
    Timer head_;  // sentinel of a circular list
    uint32_t duration_;
};

}  // namespace kiln::net
