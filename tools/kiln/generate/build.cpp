#include "generate/build.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kiln::gen {
namespace fs = std::filesystem;

namespace {

// flock() on KILNTOOL_BUILD_LOCK for the lifetime of the object, if the variable is set.
class BuildLock {
public:
    BuildLock() {
        const char* path = std::getenv("KILNTOOL_BUILD_LOCK");
        if (!path || !*path) return;
        fd_ = ::open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd_ < 0) {
            std::fprintf(stderr, "kiln: cannot open KILNTOOL_BUILD_LOCK %s: %s\n", path, std::strerror(errno));
            return;
        }
        while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
        }
    }
    ~BuildLock() {
        if (fd_ >= 0) ::close(fd_);  // releases the lock
    }
    BuildLock(const BuildLock&) = delete;
    BuildLock& operator=(const BuildLock&) = delete;

private:
    int fd_ = -1;
};

}  // namespace

int exit_status(int wait_status) {
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
    return 1;
}

pid_t spawn_process(const std::vector<std::string>& argv, const fs::path& cwd, bool own_group) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) {
        std::fprintf(stderr, "kiln: fork: %s\n", std::strerror(errno));
        return -1;
    }
    if (pid == 0) {
        if (own_group) {
            ::setpgid(0, 0);
            ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        }
        if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
            std::fprintf(stderr, "kiln: cannot enter %s: %s\n", cwd.c_str(), std::strerror(errno));
            ::_exit(127);
        }
        ::execvp(args[0], args.data());
        std::fprintf(stderr, "kiln: cannot run %s: %s\n", args[0], std::strerror(errno));
        ::_exit(127);
    }
    return pid;
}

int run_process(const std::vector<std::string>& argv, const fs::path& cwd) {
    pid_t pid = spawn_process(argv, cwd);
    if (pid < 0) return 127;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return 127;
    }
    return exit_status(status);
}

fs::path app_binary(const Project& p) { return p.root / "build" / "app" / p.name; }

bool build_project(const Project& p) {
    BuildLock lock;
    fs::path build = p.root / "build";
    std::error_code ec;
    if (!fs::exists(build / "build.ninja", ec)) {
        std::printf("kiln: configuring %s\n", build.c_str());
        std::fflush(stdout);
        if (run_process({"cmake", "-S", p.root.string(), "-B", build.string(), "-G", "Ninja"}, {}) != 0) return false;
    }
    std::vector<std::string> ninja = {"ninja", "-C", build.string()};
    if (const char* jobs = std::getenv("KILNTOOL_BUILD_JOBS"); jobs && *jobs) ninja.push_back(std::string("-j") + jobs);
    std::fflush(stdout);
    return run_process(ninja, {}) == 0;
}

}  // namespace kiln::gen
