// Building and starting a kiln project's app: `cmake` configures build/ once
// (Ninja), `ninja` builds; both write to this terminal, so a compiler error shows as
// it is. Two environment variables adapt it to a shared machine (not KILN_*: the
// app reads those as its settings and refuses unknown ones):
//   KILNTOOL_BUILD_LOCK=FILE  hold flock(FILE) around every configure and build
//   KILNTOOL_BUILD_JOBS=N     ninja -jN
#pragma once
#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

#include "generate/project.hpp"

namespace kiln::gen {

// Configures if build/build.ninja is missing, then builds. True on success.
bool build_project(const Project& p);
std::filesystem::path app_binary(const Project& p);  // root/build/app/NAME

// Runs argv[0] (searched in PATH) in `cwd` and waits; its exit status, 128+signal if
// killed, 127 if it could not start.
int run_process(const std::vector<std::string>& argv, const std::filesystem::path& cwd);
// Starts it without waiting; the pid, or -1 (message printed). With `own_group` the
// child leads a new process group (so a terminal's Ctrl-C reaches only us, and we
// stop it by PID) and gets SIGTERM if we die first.
pid_t spawn_process(const std::vector<std::string>& argv, const std::filesystem::path& cwd, bool own_group = false);
// Exit status of a waitpid() status word as above.
int exit_status(int wait_status);

}  // namespace kiln::gen
