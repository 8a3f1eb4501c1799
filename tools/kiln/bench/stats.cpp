// Benchmark counters and the latency histogram (see the header).
#include "bench/stats.hpp"

#include <bit>

namespace kiln::bench {
namespace {
constexpr unsigned kSubBits = 6;                      // 64 buckets per power of two
constexpr uint64_t kSub = uint64_t{1} << kSubBits;
constexpr size_t kBuckets = kSub + (64 - kSubBits) * kSub;
}  // namespace

std::string_view failure_name(Failure f) {
    switch (f) {
        case Failure::Connect: return "connect";
        case Failure::Reset: return "reset";
        case Failure::Closed: return "closed";
        case Failure::Truncated: return "truncated";
        case Failure::Timeout: return "timeout";
        case Failure::Parse: return "parse";
        case Failure::Status3xx: return "status_3xx";
        case Failure::Status4xx: return "status_4xx";
        case Failure::Status5xx: return "status_5xx";
        case Failure::Count: break;
    }
    return "unknown";
}

Histogram::Histogram() : buckets_(kBuckets, 0) {}

size_t Histogram::index(uint64_t v) {
    if (v < kSub) return static_cast<size_t>(v);
    unsigned msb = 63u - static_cast<unsigned>(std::countl_zero(v));
    unsigned shift = msb - kSubBits;                  // v >> shift is in [64, 128)
    return static_cast<size_t>(kSub + shift * kSub + ((v >> shift) - kSub));
}

uint64_t Histogram::upper_bound(size_t i) {
    if (i < kSub) return i;
    uint64_t shift = (i - kSub) / kSub;
    uint64_t m = kSub + (i - kSub) % kSub;
    return ((m + 1) << shift) - 1;
}

void Histogram::record(uint64_t v) {
    ++buckets_[index(v)];
    ++count_;
    sum_ += v;
    if (v > max_) max_ = v;
}

void Histogram::merge(const Histogram& o) {
    for (size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += o.buckets_[i];
    count_ += o.count_;
    sum_ += o.sum_;
    if (o.max_ > max_) max_ = o.max_;
}

uint64_t Histogram::percentile(double p) const {
    if (count_ == 0) return 0;
    double want = p / 100.0 * static_cast<double>(count_);
    uint64_t target = static_cast<uint64_t>(want);
    if (static_cast<double>(target) < want) ++target;
    if (target == 0) target = 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < buckets_.size(); ++i) {
        seen += buckets_[i];
        if (seen >= target) {
            uint64_t b = upper_bound(i);
            return b < max_ ? b : max_;
        }
    }
    return max_;
}

uint64_t Stats::failed_total() const {
    uint64_t n = 0;
    for (uint64_t f : failed) n += f;
    return n;
}

void Stats::merge(const Stats& o) {
    ok += o.ok;
    for (size_t i = 0; i < kFailureKinds; ++i) failed[i] += o.failed[i];
    pages += o.pages;
    assets += o.assets;
    uploads += o.uploads;
    connections += o.connections;
    new_cookies += o.new_cookies;
    abandoned += o.abandoned;
    bytes_received += o.bytes_received;
    bytes_sent += o.bytes_sent;
    latency_ns.merge(o.latency_ns);
}

}  // namespace kiln::bench
