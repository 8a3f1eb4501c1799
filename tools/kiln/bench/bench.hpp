// `kiln bench`: the subcommand's entry point. Parses the options (usage errors:
// message on stderr, status 2), prints help (status 0) or runs the benchmark
// (status 0 if every request succeeded, 1 otherwise).
#pragma once
#include <string_view>
#include <vector>

namespace kiln::bench {

int bench_main(const std::vector<std::string_view>& args);

}  // namespace kiln::bench
