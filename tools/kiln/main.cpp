// kiln: the command-line tool. One table maps each subcommand to its entry point;
// a new subcommand (new, generate, run, routes) adds one row.
// Exit status: what the subcommand returns; 2 for an unknown subcommand.
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "bench/bench.hpp"
#include "generate/commands.hpp"

namespace {

using Entry = int (*)(const std::vector<std::string_view>& args);  // args after the name

int help_main(const std::vector<std::string_view>& args);

struct Command {
    std::string_view name;
    Entry entry;
    std::string_view summary;
};

constexpr Command kCommands[] = {
    {"bench", kiln::bench::bench_main, "load a server like the session study's client (kiln bench --help)"},
    {"new", kiln::gen::new_main, "create a project: kiln new NAME [--dir PARENT]"},
    {"generate", kiln::gen::generate_main, "write code: kiln generate scaffold|model|controller NAME ..., kiln generate auth"},
    {"routes", kiln::gen::routes_main, "list the app's routes (builds it first; or --bin PATH)"},
    {"run", kiln::gen::run_main, "build and serve the app; --watch rebuilds and reloads on changes"},
    {"help", help_main, "list the commands"},
};

int help_main(const std::vector<std::string_view>&) {
    std::puts("usage: kiln COMMAND [arguments]\ncommands:");
    for (const Command& c : kCommands)
        std::printf("  %-10.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                    static_cast<int>(c.summary.size()), c.summary.data());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        help_main({});
        return 2;
    }
    std::string_view name = argv[1];
    if (name == "--help" || name == "-h") name = "help";
    std::vector<std::string_view> args(argv + 2, argv + argc);
    for (const Command& c : kCommands)
        if (c.name == name) return c.entry(args);
    std::fprintf(stderr, "kiln: unknown command '%s' (see kiln help)\n", argv[1]);
    return 2;
}
