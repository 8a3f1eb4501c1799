// limits.rate: requests per second per client address (an IPv6 client by its /64:
// net::PeerAddress::counted), with bursts, counted together by every worker of a
// node in a table in shared memory (the supervisor makes it, the workers inherit it,
// as the session store). Each address's bucket is one word, its "theoretical arrival
// time" (GCRA, the leaky bucket as a meter): a request at `now` is allowed when that
// time is no more than (burst - 1) intervals ahead of now, and pushes it one
// interval (1/rate s) further. Updated with compare-and-swap: no lock, any process.
//
// The table is a fixed array of slots, addressed by a hash of the address (keyed
// with a random key the table holds) and probed linearly for 8 slots. A slot whose bucket has refilled completely is free
// for another address. When all 8 are busy with other active addresses, the request
// is allowed (the limiter fails open rather than refusing an innocent client) and
// counted in overflows(). Two addresses racing for one slot may share a bucket for
// a moment: the limit is approximate at that edge, never unbounded.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "net/peer.hpp"
#include "util/siphash.hpp"

namespace kiln::http {

class RateTable {
public:
    struct Decision {
        bool allowed;
        uint32_t retry_after_s;  // when refused: seconds until one more request fits (>= 1)
    };

    // Bytes for `slots` buckets (a power of two).
    static size_t bytes_for(size_t slots);
    // Lays a table out in zeroed memory of bytes_for(slots) bytes, with a new random
    // key; then attach().
    static void format(void* memory, size_t slots);
    // The table in memory another process formatted; null if it is not one.
    static RateTable* attach(void* memory, size_t bytes);

    // One request from peer at now_us (CLOCK_MONOTONIC, the same in every process).
    Decision take(const net::PeerAddress& peer, uint64_t now_us, double rate_per_s, uint32_t burst);
    uint64_t overflows() const { return overflows_.load(std::memory_order_relaxed); }
    size_t slots() const { return slots_; }

private:
    struct Slot {
        std::atomic<uint64_t> key;  // a hash of the address; 0: never used
        std::atomic<uint64_t> tat;  // the bucket's theoretical arrival time, us
    };
    RateTable() = default;
    uint64_t magic_;
    uint64_t slots_;
    util::SipKey key_;  // random, from format(): every process of the node hashes alike
    std::atomic<uint64_t> overflows_;
    Slot slot_[1];  // slots_ of them
};

}  // namespace kiln::http
