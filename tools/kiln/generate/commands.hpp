// The generator subcommands of `kiln` (tools/kiln/main.cpp maps names to these).
// Each takes the arguments after its name and returns the exit status: 0 done,
// 1 failed while working (I/O, a failed build), 2 refused before doing anything
// (bad usage, bad name, unknown field type, outside a project, files in the way).
#pragma once
#include <string_view>
#include <vector>

namespace kiln::gen {

using Args = std::vector<std::string_view>;

int new_main(const Args& args);       // kiln new NAME [--dir PARENT] [--kiln-source DIR]
int generate_main(const Args& args);  // kiln generate scaffold|model|controller ...
int routes_main(const Args& args);    // kiln routes [--bin PATH]
int run_main(const Args& args);       // kiln run [--watch] [-- APP FLAGS...]

}  // namespace kiln::gen
