#include "net/deadline_heap.hpp"

namespace kiln::net {

DeadlineHeap::~DeadlineHeap() {
    for (Deadline* d : heap_) d->slot = Deadline::kNotArmed;
}

void DeadlineHeap::place(size_t i, Deadline* d) {
    heap_[i] = d;
    d->slot = i;
}

void DeadlineHeap::sift_up(size_t i) {
    Deadline* d = heap_[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (heap_[parent]->at_ms <= d->at_ms) break;
        place(i, heap_[parent]);
        i = parent;
    }
    place(i, d);
}

void DeadlineHeap::sift_down(size_t i) {
    Deadline* d = heap_[i];
    size_t n = heap_.size();
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && heap_[child + 1]->at_ms < heap_[child]->at_ms) ++child;
        if (d->at_ms <= heap_[child]->at_ms) break;
        place(i, heap_[child]);
        i = child;
    }
    place(i, d);
}

void DeadlineHeap::remove_at(size_t i) {
    Deadline* gone = heap_[i];
    Deadline* last = heap_.back();
    heap_.pop_back();
    gone->slot = Deadline::kNotArmed;
    if (last == gone) return;
    place(i, last);
    sift_down(i);
    sift_up(last->slot);
}

void DeadlineHeap::arm(Deadline& d, uint64_t at_ms) {
    if (d.armed()) remove_at(d.slot);
    d.at_ms = at_ms;
    d.armed_seq = ++arms_;
    heap_.push_back(&d);
    d.slot = heap_.size() - 1;
    sift_up(d.slot);
}

void DeadlineHeap::disarm(Deadline& d) {
    if (d.armed()) remove_at(d.slot);
}

void DeadlineHeap::expire(uint64_t now_ms) {
    const uint64_t before = arms_;
    while (!heap_.empty() && heap_.front()->at_ms <= now_ms && heap_.front()->armed_seq <= before) {
        Deadline* d = heap_.front();
        remove_at(0);
        d->fire(d);  // may arm or disarm others, or free d's owner
    }
}

}  // namespace kiln::net
