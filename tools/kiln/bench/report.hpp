// The result of a run, printed the way the session study printed it
// ("elapsed: X ms => Y request(s) per second", thousands separated), followed by
// the counts, bytes and latency percentiles; or as one JSON object (--json).
// Pure formatting: strings in, strings out.
#pragma once
#include <cstdint>
#include <string>

#include "bench/options.hpp"
#include "bench/stats.hpp"

namespace kiln::bench {

struct RunResult {
    const Stats* stats = nullptr;  // merged over all threads
    double elapsed_ms = 0;         // from the start to the last completed request
    int threads = 1;
};

// Requests per second as the study counts them: successful requests / elapsed.
double requests_per_second(const RunResult& r);

std::string format_count(uint64_t n);           // 1234567 -> "1,234,567"
std::string format_fixed(double v, int decimals);  // 3725.186 -> "3,725.19"

std::string text_report(const BenchOptions& o, const RunResult& r);
std::string json_report(const BenchOptions& o, const RunResult& r);  // one line, no newline

}  // namespace kiln::bench
