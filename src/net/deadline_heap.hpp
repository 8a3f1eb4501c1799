// One-shot timers with any deadline, in a binary heap: kiln::sleep and handler
// deadlines, where durations differ per call (TimerList is for the fixed phases of
// a connection). arm/disarm O(log n); each Deadline knows its heap slot.
// Belongs to one event loop.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::net {

struct Deadline {
    static constexpr size_t kNotArmed = ~size_t{0};
    // Called on the loop thread when the deadline passes; already disarmed.
    void (*fire)(Deadline*) = nullptr;
    void* owner = nullptr;
    uint64_t at_ms = 0;
    uint64_t armed_seq = 0;  // DeadlineHeap's count of arms when this one was armed
    size_t slot = kNotArmed;
    bool armed() const { return slot != kNotArmed; }
};

class DeadlineHeap {
public:
    DeadlineHeap() = default;
    DeadlineHeap(const DeadlineHeap&) = delete;
    DeadlineHeap& operator=(const DeadlineHeap&) = delete;
    ~DeadlineHeap();

    void arm(Deadline& d, uint64_t at_ms);  // (re)arms
    void disarm(Deadline& d);
    uint64_t next_deadline() const { return heap_.empty() ? UINT64_MAX : heap_.front()->at_ms; }
    // Fires every deadline <= now_ms armed before the call, earliest first. One armed
    // by a fire (a zero sleep resumed there and sleeping again) waits for the next
    // call: the loop polls its sockets in between, as a yield promises.
    void expire(uint64_t now_ms);
    size_t size() const { return heap_.size(); }

private:
    void place(size_t i, Deadline* d);
    void sift_up(size_t i);
    void sift_down(size_t i);
    void remove_at(size_t i);
    std::vector<Deadline*> heap_;
    uint64_t arms_ = 0;
};

}  // namespace kiln::net
