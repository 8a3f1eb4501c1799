// Server statistics shared by every process of one server, for /metrics.
//
// The supervisor creates one shared-memory segment (memfd) before starting any
// worker. It holds one cell per live worker process (2 x workers cells, so two
// generations fit during a reload), each cell one LoopStats per event loop. A loop
// writes only its own LoopStats, with relaxed atomic adds: no lock, no syscall.
// When a worker exits the supervisor folds its cell's counters into `retired` and
// zeroes the cell, so totals never go down across crashes and reloads, and the
// gauges of a killed worker do not linger. Readers (any worker answering /metrics)
// sum retired + live cells, retrying while a fold is in progress (seqlock).
#pragma once
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::server {

inline constexpr const char* kEnvStatsFd = "KILN_STATS_FD";
inline constexpr const char* kEnvStatsCell = "KILN_STATS_CELL";

// Upper bounds (seconds) of the latency histogram buckets; the last is +Inf.
inline constexpr double kLatencyBounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                            0.1,    0.25,  0.5,    1,     2.5,   5,     10};
inline constexpr size_t kLatencyBuckets = std::size(kLatencyBounds) + 1;

struct alignas(64) LoopStats {
    std::atomic<uint64_t> responses[6];  // by status class: [1] 1xx ... [5] 5xx, [0] other
    std::atomic<uint64_t> latency[kLatencyBuckets];
    std::atomic<uint64_t> latency_sum_us;
    std::atomic<int64_t> open_connections;  // gauge: not folded
    std::atomic<uint64_t> heartbeat_ms;     // gauge: the loop's clock at its last tick

    void record(int status, uint64_t elapsed_us);
};

class SharedStats {
public:
    // Supervisor (or a single process): a new segment for `cells` processes of `loops` loops.
    static SharedStats create(unsigned cells, unsigned loops);
    // Worker: the segment inherited through the environment, or an invalid one.
    static SharedStats attach_from_env();
    SharedStats() = default;
    SharedStats(SharedStats&& o) noexcept;
    SharedStats& operator=(SharedStats&& o) noexcept;
    ~SharedStats();

    bool valid() const { return base_ != nullptr; }
    int fd() const { return fd_; }

    // Supervisor side: a free cell for a new process (-1: none), and its release.
    int claim_cell(pid_t pid);
    void release_cell(int cell);
    void count_restart();

    // Worker side: this process's cell (from the environment) and one loop's block.
    LoopStats* loop(unsigned cell, unsigned index);
    // The oldest heartbeat among a cell's loops (monotonic ms); 0 until every loop beat.
    uint64_t oldest_heartbeat(unsigned cell) const;
    int own_cell() const { return own_cell_; }
    // Worker, before attach_from_env (which takes the environment): its cell and
    // how many the segment has; false when there is no segment.
    static bool peek_env(int* cell, unsigned* cells);

    // Prometheus text exposition of the sums over every process.
    std::string prometheus() const;
    uint64_t uptime_seconds() const;
    // The node is stopping (the health endpoint answers 503): set by the supervisor,
    // or by a lone server, at the stop signal; read by every worker.
    void set_draining();
    bool draining() const;

private:
    struct Header;
    Header* header() const;
    LoopStats* cell_loops(unsigned cell) const;
    int fd_ = -1;
    void* base_ = nullptr;
    size_t size_ = 0;
    int own_cell_ = -1;
};

}  // namespace kiln::server
