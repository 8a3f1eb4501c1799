// Runs a benchmark: spreads the batches over the loop threads (batch i on thread
// i mod T), runs one epoll loop per thread until every session has spent its
// budget or the deadline passed, shows a progress line on a terminal, merges the
// threads' statistics and prints the report. SIGINT stops the run early; the
// report covers what was done. Returns the process exit status (0 or 1).
#pragma once
#include "bench/options.hpp"

namespace kiln::bench {

int run_bench(const BenchOptions& options);

}  // namespace kiln::bench
