#include "http/rate_table.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <new>

#include "util/random.hpp"

namespace kiln::http {
namespace {

constexpr uint64_t kMagic = 0x6b696c6e72617432;  // "klnrat2": with a key
constexpr int kProbes = 8;

// Keyed, so a client cannot choose addresses (a /48 holds 65,536 /64s) whose slots
// fill the probe window of another's, to push it out or make it fail open.
uint64_t hash_of(const util::SipKey& key, const net::PeerAddress& p) {
    unsigned char bytes[17];
    size_t n = p.family == AF_INET ? 4 : 16;
    bytes[0] = static_cast<unsigned char>(p.family);
    std::memcpy(bytes + 1, p.addr, n);
    uint64_t h = util::siphash24(key, bytes, n + 1);
    return h ? h : 1;
}

}  // namespace

size_t RateTable::bytes_for(size_t slots) { return offsetof(RateTable, slot_) + slots * sizeof(Slot); }

void RateTable::format(void* memory, size_t slots) {
    auto* t = new (memory) RateTable();
    t->magic_ = kMagic;
    t->slots_ = slots;
    util::random_bytes(&t->key_, sizeof t->key_);
    t->overflows_.store(0);
    for (size_t i = 0; i < slots; ++i) {
        new (&t->slot_[i].key) std::atomic<uint64_t>(0);
        new (&t->slot_[i].tat) std::atomic<uint64_t>(0);
    }
}

RateTable* RateTable::attach(void* memory, size_t bytes) {
    auto* t = static_cast<RateTable*>(memory);
    if (bytes < offsetof(RateTable, slot_) || t->magic_ != kMagic) return nullptr;
    if (t->slots_ == 0 || (t->slots_ & (t->slots_ - 1)) != 0 || bytes < bytes_for(t->slots_)) return nullptr;
    return t;
}

RateTable::Decision RateTable::take(const net::PeerAddress& peer, uint64_t now_us, double rate_per_s, uint32_t burst) {
    if (peer.family != AF_INET && peer.family != AF_INET6) return {true, 0};
    // us per request, at most a year (a rate near 0 must not overflow the cast), and
    // the burst's allowance, saturated.
    const uint64_t interval = static_cast<uint64_t>(std::clamp(1e6 / rate_per_s, 1.0, 3.2e13));
    uint64_t tolerance = 0;
    if (__builtin_mul_overflow(interval, uint64_t{burst > 0 ? burst - 1 : 0}, &tolerance)) tolerance = UINT64_MAX / 2;
    const uint64_t key = hash_of(key_, peer.counted());  // an IPv6 client by its /64
    const uint64_t mask = slots_ - 1;
    Slot* found = nullptr;
    // The client's own bucket first, wherever it is in the probe window: a slot before
    // it that freed up must not hand the client a second, full bucket.
    for (int i = 0; i < kProbes && !found; ++i) {
        Slot& s = slot_[(key + static_cast<uint64_t>(i)) & mask];
        if (s.key.load(std::memory_order_acquire) == key) found = &s;
    }
    for (int i = 0; i < kProbes && !found; ++i) {
        Slot& s = slot_[(key + static_cast<uint64_t>(i)) & mask];
        uint64_t k = s.key.load(std::memory_order_acquire);
        if (k == key) {
            found = &s;
        } else if (k == 0 || s.tat.load(std::memory_order_relaxed) <= now_us) {
            // Unused, or another address's bucket that has refilled completely: take it.
            if (s.key.compare_exchange_strong(k, key, std::memory_order_acq_rel)) {
                s.tat.store(now_us, std::memory_order_relaxed);
                found = &s;
            } else if (k == key) {
                found = &s;
            }
        }
    }
    if (!found) {
        overflows_.fetch_add(1, std::memory_order_relaxed);
        return {true, 0};
    }
    uint64_t tat = found->tat.load(std::memory_order_relaxed);
    for (;;) {
        uint64_t start = tat > now_us ? tat : now_us;
        if (start - now_us > tolerance) {  // over the rate: wait until it fits again
            uint64_t wait_us = start - now_us - tolerance;
            return {false, static_cast<uint32_t>(std::max<uint64_t>(1, (wait_us + 999'999) / 1'000'000))};
        }
        if (found->tat.compare_exchange_weak(tat, start + interval, std::memory_order_relaxed)) return {true, 0};
    }
}

}  // namespace kiln::http
