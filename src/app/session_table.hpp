// SharedSessionTable: the default SessionStore, a fixed-size hash table laid out in
// one shared memory region that every worker process maps (the supervisor creates
// it, so sessions survive a worker crash and a graceful reload).
//
// Layout: a header, then `stripes` independent stripes. Each stripe has a
// process-shared robust mutex, a bucket array and its own slots (fixed size: a
// small record head plus `max_bytes` of data), chained per bucket by index. An id
// picks its stripe and bucket from its own random bytes: look-up is O(1), and
// contention is spread over the stripes.
//
// Room: memory is fixed at creation. A full stripe evicts its least recently used
// session, from a segmented LRU: new sessions start on probation and are promoted
// when a later request loads them, and probation is evicted first, so a flood of
// visitors who never come back cannot push out a returning user. Evictions are
// counted (/metrics). Expired sessions are freed when met and a few slots further
// at every insert: no sweep ever stops the world.
//
// Crash safety: a process killed while holding a stripe's lock leaves the mutex
// "owner dead"; the next locker rebuilds that stripe's chains, free list and LRU
// lists from the slots' own state (a slot caught mid-write is dropped), then marks
// the mutex consistent.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include <kiln/session.hpp>

namespace kiln::app {

struct SessionTableParams {
    size_t memory_bytes = 64 << 20;  // whole region
    size_t max_bytes = 1024;         // serialized data per session
    int64_t idle_timeout_s = 30 * 60;
    int64_t max_age_s = 24 * 60 * 60;
};

class SharedSessionTable final : public SessionStore {
public:
    // Bytes of data slots a region of `p.memory_bytes` holds: at least one stripe of
    // a few slots, or 0 if the region is too small (the caller reports it).
    static size_t capacity(const SessionTableParams& p);
    // Lays out a new table in `region` (zero-filled, `p.memory_bytes` long, shared).
    static void format(void* region, const SessionTableParams& p);
    // Uses a region laid out by format() (possibly in another process); nullptr if
    // the region does not hold one. The region must outlive the table.
    static std::unique_ptr<SharedSessionTable> attach(void* region, size_t size);

    bool load(const SessionId& id, int64_t now, std::string& data) override;
    bool save(const SessionId& id, int64_t now, std::string_view data, SaveMode mode) override;
    bool rename(const SessionId& from, const SessionId& to, int64_t now, std::string_view data) override;
    void remove(const SessionId& id) override;
    size_t max_bytes() const override;
    uint64_t evictions() const override;

    size_t live();  // sessions held (expired ones not yet freed included)
    // Test hook: the stripe lock for `id`, taken and never released (a process that
    // calls this and exits plays a worker killed inside the store).
    void lock_and_abandon(const SessionId& id);

    struct Header;
    struct Stripe;
    struct Slot;

private:
    SharedSessionTable(void* region, size_t size);
    Stripe& stripe_for(const SessionId& id, uint32_t* bucket) const;
    void lock(Stripe& s);
    Slot& slot(const Stripe& s, uint32_t index) const;
    uint32_t find(Stripe& s, uint32_t bucket, const SessionId& id, uint32_t* prev) const;
    void unlink(Stripe& s, uint32_t bucket, uint32_t index, uint32_t prev);
    void lru_remove(Stripe& s, uint32_t index);
    void lru_push(Stripe& s, uint32_t index, uint8_t segment);  // as the most recent of its list
    bool expired(const Slot& sl, int64_t now) const;
    void sweep(Stripe& s, uint32_t count, int64_t now);
    uint32_t take_slot(Stripe& s, int64_t now);  // evicts when the stripe is full
    void evict(Stripe& s, int64_t now);
    void note_eviction(Stripe& s);
    uint32_t insert(Stripe& s, uint32_t bucket, const SessionId& id, int64_t created, int64_t now, uint8_t segment);
    void write(Slot& sl, std::string_view data, int64_t now);
    void check_size(std::string_view data) const;
    void repair(Stripe& s);

    char* base_;
    size_t size_;
};

}  // namespace kiln::app
