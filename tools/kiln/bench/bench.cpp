// `kiln bench` entry point (see the header).
#include "bench/bench.hpp"

#include <cstdio>
#include <string>

#include "bench/options.hpp"
#include "bench/runner.hpp"

namespace kiln::bench {

int bench_main(const std::vector<std::string_view>& args) {
    BenchOptions options;
    ParseOutcome parsed = parse_bench_options(args, &options);
    if (!parsed.ok) {
        std::fprintf(stderr, "kiln bench: %s (see kiln bench --help)\n", parsed.error.c_str());
        return 2;
    }
    if (options.help) {
        std::fputs(std::string(bench_usage()).c_str(), stdout);
        return 0;
    }
    return run_bench(options);
}

}  // namespace kiln::bench
