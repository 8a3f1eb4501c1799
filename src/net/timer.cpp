#include "net/timer.hpp"

namespace kiln::net {

void Timer::disarm() {
    if (!list) return;
    prev->next = next;
    next->prev = prev;
    prev = next = nullptr;
    list = nullptr;
}

TimerList::TimerList(uint32_t duration_ms) : duration_(duration_ms) { head_.prev = head_.next = &head_; }

TimerList::~TimerList() {
    while (head_.next != &head_) head_.next->disarm();
}

void TimerList::arm(Timer& t, uint64_t now_ms) {
    t.disarm();
    t.deadline_ms = now_ms + duration_;
    t.list = this;
    t.prev = head_.prev;
    t.next = &head_;
    head_.prev->next = &t;
    head_.prev = &t;
}

uint64_t TimerList::next_deadline() const {
    return head_.next == &head_ ? UINT64_MAX : head_.next->deadline_ms;
}

uint64_t TimerList::expire(uint64_t now_ms) {
    while (head_.next != &head_ && head_.next->deadline_ms <= now_ms) {
        Timer* t = head_.next;
        t->disarm();
        t->fire(t);  // may re-arm t or others, or destroy t's owner
    }
    return next_deadline();
}

}  // namespace kiln::net
