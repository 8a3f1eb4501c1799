#include "app/session_table.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <vector>

#include "util/log.hpp"

namespace kiln::app {
namespace {
constexpr uint64_t kMagic = 0x6b696c6e53455332;  // "kilnSES2": the layout with the two LRU lists
constexpr uint32_t kNone = UINT32_MAX;  // "no slot" in the API; links store index + 1, 0 for none
constexpr uint32_t kMaxStripes = 64;
constexpr uint32_t kMinSlotsPerStripe = 4;
constexpr uint32_t kSweepPerInsert = 8;

enum SlotState : uint8_t { kFree = 0, kLive = 1, kWriting = 2 };
// The two recency lists of a stripe. A session starts on probation and is
// promoted the first time a later request loads it; room is made from the
// probation list first, so sessions nobody came back for (a flood of cookie-less
// visitors) are evicted before any returning user's.
enum Segment : uint8_t { kProbation = 0, kProtected = 1 };

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

uint32_t word(const SessionId& id, size_t at) {
    uint32_t v;
    std::memcpy(&v, id.data() + at, sizeof v);
    return v;
}
}  // namespace

struct SharedSessionTable::Header {
    uint64_t magic;
    uint32_t stripes;
    uint32_t slots_per_stripe;
    uint32_t max_bytes;
    uint32_t slot_size;
    uint64_t stripe_size;
    uint64_t memory_bytes;
    int64_t idle_timeout_s;
    int64_t max_age_s;
    std::atomic<int64_t> full_logged_at;  // rate-limits the "store full" log line
};

struct alignas(64) SharedSessionTable::Stripe {
    pthread_mutex_t mu;
    uint32_t free_head;
    uint32_t live;
    uint32_t cursor;  // next slot the incremental sweep looks at
    uint32_t fresh;   // slots [fresh, slots_per_stripe) were never used: untouched memory
    uint32_t lru_head[2];  // per Segment: most recently used
    uint32_t lru_tail[2];  // per Segment: least recently used, evicted first
    std::atomic<uint64_t> evictions;  // live sessions dropped to make room (read without the lock)
    // Followed by slots_per_stripe bucket heads, then the slots. Links (bucket
    // heads, `next`, free_head, the LRU links) hold a slot index + 1, so
    // zero-filled memory is an empty stripe and a new table touches only its heads.
};

struct SharedSessionTable::Slot {
    SessionId id;
    uint32_t next;  // bucket chain when live, free list when free
    uint32_t lru_prev, lru_next;  // the slot's Segment list, when live
    uint8_t state;
    uint8_t segment;
    uint32_t len;
    int64_t created;
    int64_t last_used;
    // Followed by max_bytes of data.
    char* data() { return reinterpret_cast<char*>(this + 1); }
};

namespace {
size_t header_size() { return align_up(sizeof(SharedSessionTable::Header), 64); }
uint32_t* buckets(SharedSessionTable::Stripe& s) {
    return reinterpret_cast<uint32_t*>(reinterpret_cast<char*>(&s) + sizeof(SharedSessionTable::Stripe));
}

struct Geometry {
    uint32_t stripes = 0, slots_per_stripe = 0, slot_size = 0;
    size_t stripe_size = 0;
};

Geometry geometry(const SessionTableParams& p) {
    Geometry g;
    g.slot_size = static_cast<uint32_t>(align_up(sizeof(SharedSessionTable::Slot) + p.max_bytes, 8));
    size_t header = header_size();
    if (p.memory_bytes <= header) return {};
    size_t room = p.memory_bytes - header;
    for (uint32_t stripes = kMaxStripes; stripes >= 1; stripes /= 2) {
        size_t per_stripe_room = room / stripes;
        size_t fixed = sizeof(SharedSessionTable::Stripe) + 128;  // head and alignment slack
        if (per_stripe_room <= fixed) continue;
        size_t sps = (per_stripe_room - fixed) / (g.slot_size + sizeof(uint32_t));
        if (sps < kMinSlotsPerStripe) continue;
        if (sps > kNone - 2) sps = kNone - 2;
        g.stripes = stripes;
        g.slots_per_stripe = static_cast<uint32_t>(sps);
        g.stripe_size = align_up(align_up(sizeof(SharedSessionTable::Stripe) + sps * sizeof(uint32_t), 64) +
                                     sps * g.slot_size, 64);
        return g;
    }
    return {};
}
}  // namespace

size_t SharedSessionTable::capacity(const SessionTableParams& p) {
    Geometry g = geometry(p);
    return static_cast<size_t>(g.stripes) * g.slots_per_stripe;
}

void SharedSessionTable::format(void* region, const SessionTableParams& p) {
    Geometry g = geometry(p);
    auto* h = new (region) Header{};
    h->stripes = g.stripes;
    h->slots_per_stripe = g.slots_per_stripe;
    h->max_bytes = static_cast<uint32_t>(p.max_bytes);
    h->slot_size = g.slot_size;
    h->stripe_size = g.stripe_size;
    h->memory_bytes = p.memory_bytes;
    h->idle_timeout_s = p.idle_timeout_s;
    h->max_age_s = p.max_age_s;
    SharedSessionTable t(region, p.memory_bytes);
    for (uint32_t i = 0; i < g.stripes; ++i) {
        auto* s = new (t.base_ + header_size() + i * g.stripe_size) Stripe{};
        pthread_mutexattr_t a;
        pthread_mutexattr_init(&a);
        pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
        pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
        pthread_mutex_init(&s->mu, &a);
        pthread_mutexattr_destroy(&a);
    }
    h->magic = kMagic;  // last: a region without it is not a table
}

std::unique_ptr<SharedSessionTable> SharedSessionTable::attach(void* region, size_t size) {
    auto* h = static_cast<Header*>(region);
    if (size < sizeof(Header) || h->magic != kMagic || h->memory_bytes > size) return nullptr;
    return std::unique_ptr<SharedSessionTable>(new SharedSessionTable(region, size));
}

SharedSessionTable::SharedSessionTable(void* region, size_t size) : base_(static_cast<char*>(region)), size_(size) {}

size_t SharedSessionTable::max_bytes() const { return reinterpret_cast<const Header*>(base_)->max_bytes; }

SharedSessionTable::Stripe& SharedSessionTable::stripe_for(const SessionId& id, uint32_t* bucket) const {
    const auto* h = reinterpret_cast<const Header*>(base_);
    // Ids come from the CSPRNG, so their bytes are already uniform. A client can
    // send any id, but only look it up: it can never choose where one is stored.
    uint32_t si = word(id, 0) % h->stripes;
    *bucket = word(id, 4) % h->slots_per_stripe;
    return *reinterpret_cast<Stripe*>(base_ + header_size() + si * h->stripe_size);
}

SharedSessionTable::Slot& SharedSessionTable::slot(const Stripe& s, uint32_t index) const {
    const auto* h = reinterpret_cast<const Header*>(base_);
    size_t slots_at = align_up(sizeof(Stripe) + h->slots_per_stripe * sizeof(uint32_t), 64);
    return *reinterpret_cast<Slot*>(const_cast<char*>(reinterpret_cast<const char*>(&s)) + slots_at +
                                    static_cast<size_t>(index) * h->slot_size);
}

void SharedSessionTable::lock(Stripe& s) {
    int rc = pthread_mutex_lock(&s.mu);
    if (rc == EOWNERDEAD) {
        // The holder died inside: its half-done change is undone from the slots' state.
        util::log(util::LogLevel::Warn, "session store: a process died holding a lock; repairing its stripe");
        repair(s);
        pthread_mutex_consistent(&s.mu);
    } else if (rc != 0) {
        util::log(util::LogLevel::Error, "session store: lock failed: %s", std::strerror(rc));
        std::abort();  // a broken invariant: the table can no longer be trusted
    }
}

void SharedSessionTable::repair(Stripe& s) {
    const auto* h = reinterpret_cast<const Header*>(base_);
    uint32_t* heads = buckets(s);
    std::memset(heads, 0, h->slots_per_stripe * sizeof(uint32_t));
    if (s.fresh > h->slots_per_stripe) s.fresh = h->slots_per_stripe;
    s.free_head = 0;
    s.live = 0;
    s.lru_head[0] = s.lru_head[1] = s.lru_tail[0] = s.lru_tail[1] = 0;
    std::vector<uint32_t> live;
    for (uint32_t i = s.fresh; i-- > 0;) {
        Slot& sl = slot(s, i);
        if (sl.state == kLive) {
            uint32_t b = word(sl.id, 4) % h->slots_per_stripe;
            sl.next = heads[b];
            heads[b] = i + 1;
            ++s.live;
            live.push_back(i);
        } else {
            sl.state = kFree;  // a slot caught mid-write is lost, not half-read later
            sl.next = s.free_head;
            s.free_head = i + 1;
        }
    }
    // The recency lists again, from each slot's own last use: oldest pushed first.
    std::sort(live.begin(), live.end(), [&](uint32_t a, uint32_t b) { return slot(s, a).last_used < slot(s, b).last_used; });
    for (uint32_t i : live) lru_push(s, i, slot(s, i).segment == kProtected ? kProtected : kProbation);
}

void SharedSessionTable::lru_remove(Stripe& s, uint32_t index) {
    Slot& sl = slot(s, index);
    uint8_t seg = sl.segment;
    if (sl.lru_prev) slot(s, sl.lru_prev - 1).lru_next = sl.lru_next;
    else s.lru_head[seg] = sl.lru_next;
    if (sl.lru_next) slot(s, sl.lru_next - 1).lru_prev = sl.lru_prev;
    else s.lru_tail[seg] = sl.lru_prev;
    sl.lru_prev = sl.lru_next = 0;
}

void SharedSessionTable::lru_push(Stripe& s, uint32_t index, uint8_t segment) {
    Slot& sl = slot(s, index);
    sl.segment = segment;
    sl.lru_prev = 0;
    sl.lru_next = s.lru_head[segment];
    if (sl.lru_next) slot(s, sl.lru_next - 1).lru_prev = index + 1;
    else s.lru_tail[segment] = index + 1;
    s.lru_head[segment] = index + 1;
}

uint32_t SharedSessionTable::find(Stripe& s, uint32_t bucket, const SessionId& id, uint32_t* prev) const {
    *prev = kNone;
    for (uint32_t link = buckets(s)[bucket]; link != 0; link = slot(s, link - 1).next) {
        if (slot(s, link - 1).id == id) return link - 1;
        *prev = link - 1;
    }
    return kNone;
}

void SharedSessionTable::unlink(Stripe& s, uint32_t bucket, uint32_t index, uint32_t prev) {
    // Free first: a death from here on leaves a free slot, which repair() leaves out
    // of the chains it rebuilds (marked last, a removal could come back as live).
    Slot& sl = slot(s, index);
    sl.state = kFree;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    lru_remove(s, index);
    if (prev == kNone) buckets(s)[bucket] = sl.next;
    else slot(s, prev).next = sl.next;
    sl.next = s.free_head;
    s.free_head = index + 1;
    --s.live;
}

bool SharedSessionTable::expired(const Slot& sl, int64_t now) const {
    const auto* h = reinterpret_cast<const Header*>(base_);
    return now - sl.last_used >= h->idle_timeout_s || now - sl.created >= h->max_age_s;
}

void SharedSessionTable::sweep(Stripe& s, uint32_t count, int64_t now) {
    const auto* h = reinterpret_cast<const Header*>(base_);
    if (s.fresh == 0) return;
    count = std::min(count, s.fresh);
    for (uint32_t n = 0; n < count; ++n) {
        uint32_t i = s.cursor % s.fresh;
        s.cursor = i + 1;
        Slot& sl = slot(s, i);
        if (sl.state != kLive || !expired(sl, now)) continue;
        uint32_t b = word(sl.id, 4) % h->slots_per_stripe, prev;
        if (find(s, b, sl.id, &prev) == i) unlink(s, b, i, prev);
    }
}

uint32_t SharedSessionTable::take_slot(Stripe& s, int64_t now) {
    const auto* h = reinterpret_cast<const Header*>(base_);
    sweep(s, kSweepPerInsert, now);
    if (s.free_head == 0 && s.fresh < h->slots_per_stripe) return s.fresh++;
    if (s.free_head == 0) evict(s, now);
    uint32_t i = s.free_head - 1;
    s.free_head = slot(s, i).next;
    return i;
}

void SharedSessionTable::evict(Stripe& s, int64_t now) {
    const auto* h = reinterpret_cast<const Header*>(base_);
    uint32_t link = s.lru_tail[kProbation] ? s.lru_tail[kProbation] : s.lru_tail[kProtected];
    if (link == 0) {  // no free slot and none live: the stripe's bookkeeping is broken
        util::log(util::LogLevel::Error, "session store: a full stripe has no session to evict");
        std::abort();
    }
    uint32_t victim = link - 1;
    Slot& sl = slot(s, victim);
    bool was_live = !expired(sl, now);
    uint32_t b = word(sl.id, 4) % h->slots_per_stripe, prev;
    find(s, b, sl.id, &prev);
    unlink(s, b, victim, prev);
    if (was_live) note_eviction(s);
}

void SharedSessionTable::note_eviction(Stripe& s) {
    s.evictions.fetch_add(1, std::memory_order_relaxed);
    auto* h = reinterpret_cast<Header*>(base_);
    int64_t now = static_cast<int64_t>(time(nullptr));
    int64_t last = h->full_logged_at.load(std::memory_order_relaxed);
    if (now - last >= 60 && h->full_logged_at.compare_exchange_strong(last, now))
        util::log(util::LogLevel::Warn,
                  "session store full: evicting the least recently used sessions (those never returned to first); "
                  "%zu sessions of up to %u bytes fit in session.memory = %llu bytes: raise it, or lower "
                  "session.idle_timeout_s",
                  capacity(SessionTableParams{h->memory_bytes, h->max_bytes, 0, 0}), h->max_bytes,
                  static_cast<unsigned long long>(h->memory_bytes));
}

void SharedSessionTable::write(Slot& sl, std::string_view data, int64_t now) {
    // A death from here to kLive drops this session, nothing else. The fences keep
    // the compiler from moving the copy outside the marks (x86 keeps store order).
    sl.state = kWriting;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    std::memcpy(sl.data(), data.data(), data.size());
    sl.len = static_cast<uint32_t>(data.size());
    // A request that began earlier than the last use (a long handler saving at its
    // end) does not move the idle deadline back.
    sl.last_used = std::max(sl.last_used, now);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    sl.state = kLive;
}

uint32_t SharedSessionTable::insert(Stripe& s, uint32_t bucket, const SessionId& id, int64_t created, int64_t now,
                                    uint8_t segment) {
    uint32_t i = take_slot(s, now);
    Slot& sl = slot(s, i);
    sl.id = id;
    sl.created = created;
    sl.last_used = now;
    sl.next = buckets(s)[bucket];
    buckets(s)[bucket] = i + 1;
    ++s.live;
    lru_push(s, i, segment);
    return i;
}

bool SharedSessionTable::load(const SessionId& id, int64_t now, std::string& data) {
    uint32_t b, prev;
    Stripe& s = stripe_for(id, &b);
    lock(s);
    uint32_t i = find(s, b, id, &prev);
    bool ok = i != kNone;
    if (ok && expired(slot(s, i), now)) {
        unlink(s, b, i, prev);
        ok = false;
    }
    if (ok) {
        Slot& sl = slot(s, i);
        sl.last_used = std::max(sl.last_used, now);
        if (s.lru_head[kProtected] != i + 1) {  // already the most recent: nothing to move
            lru_remove(s, i);
            lru_push(s, i, kProtected);  // someone came back for it
        }
        data.assign(sl.data(), sl.len);
    }
    pthread_mutex_unlock(&s.mu);
    return ok;
}

void SharedSessionTable::check_size(std::string_view data) const {
    if (data.size() > max_bytes())
        throw std::length_error("session data of " + std::to_string(data.size()) + " bytes exceeds session.max_bytes");
}

bool SharedSessionTable::save(const SessionId& id, int64_t now, std::string_view data, SaveMode mode) {
    check_size(data);
    uint32_t b, prev;
    Stripe& s = stripe_for(id, &b);
    lock(s);
    uint32_t i = find(s, b, id, &prev);
    if (i == kNone && mode == SaveMode::Update) {  // destroyed (or expired) since it was loaded
        pthread_mutex_unlock(&s.mu);
        return false;
    }
    if (i == kNone) {
        i = insert(s, b, id, now, now, kProbation);
    } else if (s.lru_head[slot(s, i).segment] != i + 1) {
        lru_remove(s, i);
        lru_push(s, i, slot(s, i).segment);
    }
    write(slot(s, i), data, now);
    pthread_mutex_unlock(&s.mu);
    return true;
}

bool SharedSessionTable::rename(const SessionId& from, const SessionId& to, int64_t now, std::string_view data) {
    check_size(data);
    uint32_t fb, tb, prev;
    Stripe& fs = stripe_for(from, &fb);
    Stripe& ts = stripe_for(to, &tb);
    // Two stripes are always locked in address order, so two renames cannot deadlock.
    Stripe& first = &fs < &ts ? fs : ts;
    Stripe& second = &fs < &ts ? ts : fs;
    lock(first);
    if (&second != &first) lock(second);
    uint32_t i = find(fs, fb, from, &prev);
    bool ok = i != kNone && !expired(slot(fs, i), now);
    if (i != kNone) {
        int64_t created = slot(fs, i).created;  // the absolute lifetime carries over
        unlink(fs, fb, i, prev);  // first: in the same stripe its slot is the one reused
        if (ok) write(slot(ts, insert(ts, tb, to, created, now, kProtected)), data, now);
    }
    if (&second != &first) pthread_mutex_unlock(&second.mu);
    pthread_mutex_unlock(&first.mu);
    return ok;
}

void SharedSessionTable::remove(const SessionId& id) {
    uint32_t b, prev;
    Stripe& s = stripe_for(id, &b);
    lock(s);
    uint32_t i = find(s, b, id, &prev);
    if (i != kNone) unlink(s, b, i, prev);
    pthread_mutex_unlock(&s.mu);
}

uint64_t SharedSessionTable::evictions() const {
    const auto* h = reinterpret_cast<const Header*>(base_);
    uint64_t n = 0;
    for (uint32_t i = 0; i < h->stripes; ++i)
        n += reinterpret_cast<const Stripe*>(base_ + header_size() + i * h->stripe_size)->evictions.load(std::memory_order_relaxed);
    return n;
}

size_t SharedSessionTable::live() {
    const auto* h = reinterpret_cast<const Header*>(base_);
    size_t n = 0;
    for (uint32_t i = 0; i < h->stripes; ++i) {
        auto& s = *reinterpret_cast<Stripe*>(base_ + header_size() + i * h->stripe_size);
        lock(s);
        n += s.live;
        pthread_mutex_unlock(&s.mu);
    }
    return n;
}

void SharedSessionTable::lock_and_abandon(const SessionId& id) {
    uint32_t b;
    lock(stripe_for(id, &b));
}

}  // namespace kiln::app
