// kiln routes: the app's route table, as the app itself prints it (`APP --routes`):
// in a project, after building it; or of any kiln binary given with --bin.
#include <cstdio>
#include <string>
#include <system_error>

#include "generate/build.hpp"
#include "generate/commands.hpp"
#include "generate/project.hpp"

namespace kiln::gen {
namespace fs = std::filesystem;

int routes_main(const Args& args) {
    std::string bin;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--bin") {
            if (i + 1 == args.size()) {
                std::fprintf(stderr, "kiln routes: --bin: missing value (usage: kiln routes [--bin PATH])\n");
                return 2;
            }
            bin = std::string(args[++i]);
        } else if (args[i] == "--help" || args[i] == "-h") {
            std::puts("usage: kiln routes [--bin PATH]   (in a project: builds it, then lists its routes)");
            return 0;
        } else {
            std::fprintf(stderr, "kiln routes: unexpected argument '%.*s' (usage: kiln routes [--bin PATH])\n",
                         static_cast<int>(args[i].size()), args[i].data());
            return 2;
        }
    }
    fs::path cwd;
    if (bin.empty()) {
        std::error_code ec;
        auto project = find_project(fs::current_path(ec));
        if (!project) {
            std::fprintf(stderr, "kiln routes: not inside a kiln project; give the app with --bin PATH\n");
            return 2;
        }
        if (!build_project(*project)) {
            std::fprintf(stderr, "kiln routes: the build failed\n");
            return 1;
        }
        bin = app_binary(*project).string();
        cwd = project->root;
    } else if (bin.find('/') == std::string::npos) {
        bin = "./" + bin;  // a file here, not a command in PATH
    }
    std::fflush(stdout);
    int status = run_process({bin, "--routes"}, cwd);
    if (status != 0) std::fprintf(stderr, "kiln routes: %s --routes exited with status %d\n", bin.c_str(), status);
    return status == 0 ? 0 : 1;
}

}  // namespace kiln::gen
