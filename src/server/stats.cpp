#include "server/stats.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>

namespace kiln::server {
namespace {
constexpr uint32_t kMagic = 0x6b696c6f;  // "kilo": the layout with `draining`
constexpr unsigned kMaxCells = 2 * 1024;

uint64_t wall_seconds() { return static_cast<uint64_t>(std::time(nullptr)); }

template <class T>
void add(std::atomic<T>& to, const std::atomic<T>& from) {
    to.fetch_add(from.load(std::memory_order_relaxed), std::memory_order_relaxed);
}
}  // namespace

struct SharedStats::Header {
    uint32_t magic;
    uint32_t cells;
    uint32_t loops;
    uint64_t started_unix;
    std::atomic<uint64_t> restarts;
    std::atomic<uint64_t> fold_seq;  // odd while the supervisor folds a cell
    std::atomic<uint32_t> draining;  // the node is stopping
    std::atomic<int32_t> owner[kMaxCells];  // pid per cell, 0: free
    LoopStats retired;
};

void LoopStats::record(int status, uint64_t elapsed_us) {
    int cls = status / 100;
    responses[cls >= 1 && cls <= 5 ? cls : 0].fetch_add(1, std::memory_order_relaxed);
    double s = static_cast<double>(elapsed_us) / 1e6;
    size_t b = 0;
    while (b < std::size(kLatencyBounds) && s > kLatencyBounds[b]) ++b;
    latency[b].fetch_add(1, std::memory_order_relaxed);
    latency_sum_us.fetch_add(elapsed_us, std::memory_order_relaxed);
}

SharedStats SharedStats::create(unsigned cells, unsigned loops) {
    SharedStats s;
    if (cells > kMaxCells) cells = kMaxCells;
    s.size_ = sizeof(Header) + static_cast<size_t>(cells) * loops * sizeof(LoopStats);
    s.fd_ = memfd_create("kiln-stats", MFD_CLOEXEC);
    if (s.fd_ < 0 || ftruncate(s.fd_, static_cast<off_t>(s.size_)) != 0) return SharedStats();
    s.base_ = mmap(nullptr, s.size_, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd_, 0);
    if (s.base_ == MAP_FAILED) {
        s.base_ = nullptr;
        return SharedStats();
    }
    // The memory is zero-filled; atomics of zero are valid objects of these types.
    Header* h = new (s.base_) Header();
    h->magic = kMagic;
    h->cells = cells;
    h->loops = loops;
    h->started_unix = wall_seconds();
    return s;
}

bool SharedStats::peek_env(int* cell, unsigned* cells) {
    const char* fd = std::getenv(kEnvStatsFd);
    const char* c = std::getenv(kEnvStatsCell);
    if (!fd || !c) return false;
    uint32_t head[2];  // magic, cells
    if (::pread(std::atoi(fd), head, sizeof head, 0) != static_cast<ssize_t>(sizeof head) || head[0] != kMagic) return false;
    *cell = std::atoi(c);
    *cells = head[1];
    return true;
}

SharedStats SharedStats::attach_from_env() {
    SharedStats s;
    const char* fd = std::getenv(kEnvStatsFd);
    const char* cell = std::getenv(kEnvStatsCell);
    if (!fd || !cell) return s;
    s.fd_ = std::atoi(fd);
    s.own_cell_ = std::atoi(cell);
    unsetenv(kEnvStatsFd);
    unsetenv(kEnvStatsCell);
    fcntl(s.fd_, F_SETFD, FD_CLOEXEC);  // not for a handler's children
    off_t size = lseek(s.fd_, 0, SEEK_END);
    if (size < static_cast<off_t>(sizeof(Header))) return SharedStats();
    s.size_ = static_cast<size_t>(size);
    s.base_ = mmap(nullptr, s.size_, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd_, 0);
    if (s.base_ == MAP_FAILED || s.header()->magic != kMagic ||
        s.own_cell_ < 0 || static_cast<unsigned>(s.own_cell_) >= s.header()->cells) {
        if (s.base_ != MAP_FAILED) munmap(s.base_, s.size_);
        s.base_ = nullptr;
        return SharedStats();
    }
    return s;
}

SharedStats::SharedStats(SharedStats&& o) noexcept { *this = std::move(o); }

SharedStats& SharedStats::operator=(SharedStats&& o) noexcept {
    std::swap(fd_, o.fd_);
    std::swap(base_, o.base_);
    std::swap(size_, o.size_);
    std::swap(own_cell_, o.own_cell_);
    return *this;
}

SharedStats::~SharedStats() {
    if (base_) munmap(base_, size_);
    if (fd_ >= 0) ::close(fd_);
}

SharedStats::Header* SharedStats::header() const { return static_cast<Header*>(base_); }

LoopStats* SharedStats::cell_loops(unsigned cell) const {
    auto* first = reinterpret_cast<LoopStats*>(static_cast<char*>(base_) + sizeof(Header));
    return first + static_cast<size_t>(cell) * header()->loops;
}

LoopStats* SharedStats::loop(unsigned cell, unsigned index) {
    if (!base_ || cell >= header()->cells || index >= header()->loops) return nullptr;
    return cell_loops(cell) + index;
}

uint64_t SharedStats::oldest_heartbeat(unsigned cell) const {
    if (!base_ || cell >= header()->cells) return 0;
    uint64_t oldest = UINT64_MAX;
    for (unsigned i = 0; i < header()->loops; ++i) {
        uint64_t hb = cell_loops(cell)[i].heartbeat_ms.load(std::memory_order_relaxed);
        if (hb == 0) return 0;
        oldest = std::min(oldest, hb);
    }
    return oldest == UINT64_MAX ? 0 : oldest;
}

int SharedStats::claim_cell(pid_t pid) {
    if (!base_) return -1;
    Header* h = header();
    for (unsigned c = 0; c < h->cells; ++c) {
        int32_t free = 0;
        if (h->owner[c].compare_exchange_strong(free, static_cast<int32_t>(pid))) return static_cast<int>(c);
    }
    return -1;
}

void SharedStats::release_cell(int cell) {
    if (!base_ || cell < 0 || static_cast<unsigned>(cell) >= header()->cells) return;
    Header* h = header();
    h->fold_seq.fetch_add(1, std::memory_order_acq_rel);  // odd: readers retry
    LoopStats& r = h->retired;
    for (unsigned i = 0; i < h->loops; ++i) {
        LoopStats& l = cell_loops(static_cast<unsigned>(cell))[i];
        for (size_t k = 0; k < std::size(l.responses); ++k) add(r.responses[k], l.responses[k]);
        for (size_t k = 0; k < kLatencyBuckets; ++k) add(r.latency[k], l.latency[k]);
        add(r.latency_sum_us, l.latency_sum_us);
        std::memset(static_cast<void*>(&l), 0, sizeof l);
    }
    h->owner[cell].store(0, std::memory_order_release);
    h->fold_seq.fetch_add(1, std::memory_order_acq_rel);
}

void SharedStats::count_restart() {
    if (base_) header()->restarts.fetch_add(1, std::memory_order_relaxed);
}

void SharedStats::set_draining() {
    if (base_) header()->draining.store(1, std::memory_order_relaxed);
}

bool SharedStats::draining() const { return base_ && header()->draining.load(std::memory_order_relaxed) != 0; }

uint64_t SharedStats::uptime_seconds() const {
    if (!base_) return 0;
    uint64_t now = wall_seconds(), started = header()->started_unix;
    return now > started ? now - started : 0;  // (a clock set back: not 1.8e19)
}

std::string SharedStats::prometheus() const {
    if (!base_) return {};
    const Header* h = header();
    uint64_t responses[6], latency[kLatencyBuckets], sum_us;
    int64_t open = 0;
    unsigned live = 0;
    for (int attempt = 0;; ++attempt) {
        uint64_t seq = h->fold_seq.load(std::memory_order_acquire);
        const LoopStats& r = h->retired;
        for (size_t k = 0; k < 6; ++k) responses[k] = r.responses[k].load(std::memory_order_relaxed);
        for (size_t k = 0; k < kLatencyBuckets; ++k) latency[k] = r.latency[k].load(std::memory_order_relaxed);
        sum_us = r.latency_sum_us.load(std::memory_order_relaxed);
        open = 0;
        live = 0;
        for (unsigned c = 0; c < h->cells; ++c) {
            if (h->owner[c].load(std::memory_order_acquire) == 0) continue;
            ++live;
            for (unsigned i = 0; i < h->loops; ++i) {
                const LoopStats& l = cell_loops(c)[i];
                for (size_t k = 0; k < 6; ++k) responses[k] += l.responses[k].load(std::memory_order_relaxed);
                for (size_t k = 0; k < kLatencyBuckets; ++k) latency[k] += l.latency[k].load(std::memory_order_relaxed);
                sum_us += l.latency_sum_us.load(std::memory_order_relaxed);
                open += l.open_connections.load(std::memory_order_relaxed);
            }
        }
        // The fence keeps the relaxed loads above before the re-check (an acquire load
        // alone does not order earlier loads; x86 does, weaker CPUs need it).
        std::atomic_thread_fence(std::memory_order_acquire);
        if ((seq & 1) == 0 && seq == h->fold_seq.load(std::memory_order_relaxed)) break;
        if (attempt > 1000) break;  // a supervisor killed mid-fold: report what we have
    }

    std::string out;
    out.reserve(2048);
    char line[160];
    auto emit = [&](const char* fmt, auto... args) {
        int n = std::snprintf(line, sizeof line, fmt, args...);
        out.append(line, static_cast<size_t>(n));
    };
    out += "# HELP kiln_responses_total Responses sent, by status class.\n# TYPE kiln_responses_total counter\n";
    static constexpr const char* kClasses[] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};
    for (size_t k = 1; k <= 5; ++k) emit("kiln_responses_total{class=\"%s\"} %llu\n", kClasses[k], static_cast<unsigned long long>(responses[k]));
    uint64_t count = 0;
    out += "# HELP kiln_request_duration_seconds From the parsed request head to the queued response.\n"
           "# TYPE kiln_request_duration_seconds histogram\n";
    for (size_t k = 0; k < kLatencyBuckets; ++k) {
        count += latency[k];
        if (k < std::size(kLatencyBounds)) emit("kiln_request_duration_seconds_bucket{le=\"%g\"} %llu\n", kLatencyBounds[k], static_cast<unsigned long long>(count));
        else emit("kiln_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n", static_cast<unsigned long long>(count));
    }
    emit("kiln_request_duration_seconds_sum %.6f\n", static_cast<double>(sum_us) / 1e6);
    emit("kiln_request_duration_seconds_count %llu\n", static_cast<unsigned long long>(count));
    out += "# HELP kiln_open_connections Client connections open now.\n# TYPE kiln_open_connections gauge\n";
    emit("kiln_open_connections %lld\n", static_cast<long long>(open));
    out += "# HELP kiln_workers Worker processes running now.\n# TYPE kiln_workers gauge\n";
    emit("kiln_workers %u\n", live);
    out += "# HELP kiln_worker_restarts_total Workers replaced after dying unexpectedly.\n# TYPE kiln_worker_restarts_total counter\n";
    emit("kiln_worker_restarts_total %llu\n", static_cast<unsigned long long>(h->restarts.load(std::memory_order_relaxed)));
    out += "# HELP kiln_uptime_seconds Seconds since the server started.\n# TYPE kiln_uptime_seconds gauge\n";
    emit("kiln_uptime_seconds %llu\n", static_cast<unsigned long long>(uptime_seconds()));
    return out;
}

}  // namespace kiln::server
