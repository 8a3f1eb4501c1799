// Counters and latency histogram of a benchmark run. Each loop thread owns one
// Stats and is its only writer; the totals are merged after the threads joined.
// The progress counters are the exception: relaxed atomics the main thread reads
// once a second for the progress line.
// The histogram is log-linear (HDR-like): exact below 64 ns, then 64 buckets per
// power of two, so a percentile is within 1.6% of the true sample.
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace kiln::bench {

// Why a request failed. A failure of kind Status* had a complete response.
enum class Failure : uint8_t {
    Connect,     // socket/connect failed (refused, unreachable, out of ports)
    Reset,       // ECONNRESET/EPIPE or another socket error while sending or reading
    Closed,      // the server closed the connection before any byte of the response
    Truncated,   // the server closed the connection inside the response
    Timeout,     // no complete response within --timeout
    Parse,       // malformed response, or bytes the client did not ask for
    Status3xx,   // redirects are not followed: the page was not served
    Status4xx,
    Status5xx,
    Count
};
inline constexpr size_t kFailureKinds = static_cast<size_t>(Failure::Count);
std::string_view failure_name(Failure f);  // "connect", "status_4xx", ...

class Histogram {
public:
    Histogram();
    void record(uint64_t value);
    void merge(const Histogram& other);
    uint64_t count() const { return count_; }
    uint64_t max() const { return max_; }
    double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
    // Smallest bucket bound with at least p% of the samples at or below it (0 if empty).
    uint64_t percentile(double p) const;

private:
    static size_t index(uint64_t v);
    static uint64_t upper_bound(size_t index);
    std::vector<uint64_t> buckets_;
    uint64_t count_ = 0, max_ = 0, sum_ = 0;
};

struct Stats {
    uint64_t ok = 0;
    std::array<uint64_t, kFailureKinds> failed{};
    uint64_t pages = 0, assets = 0, uploads = 0;   // attempts, by what was asked for
    uint64_t connections = 0;                       // connections established
    uint64_t new_cookies = 0;                       // Set-Cookie with a new name or value
    uint64_t abandoned = 0;                         // in flight when -d or SIGINT ended the run
    uint64_t bytes_received = 0, bytes_sent = 0;
    Histogram latency_ns;                           // successful requests only

    std::atomic<uint64_t> progress_ok{0}, progress_failed{0};

    uint64_t failed_total() const;
    uint64_t requests() const { return ok + failed_total(); }
    void merge(const Stats& other);
};

}  // namespace kiln::bench
