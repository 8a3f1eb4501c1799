// kiln run [--watch]: builds the project, starts its app and, with --watch, polls
// the sources (watch.hpp) every --poll-ms (300 ms); on a change it rebuilds and, if
// the build succeeds, sends SIGHUP to the server, whose supervisor re-execs the
// binary on disk into new workers while the old ones drain (no downtime). A failed
// build leaves the old server running; the compiler's message is on the terminal.
// SIGINT/SIGTERM (Ctrl-C) only set a flag; the loop then stops the server by PID.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <string>
#include <system_error>
#include <thread>

#include "generate/build.hpp"
#include "generate/commands.hpp"
#include "generate/project.hpp"
#include "generate/watch.hpp"

namespace kiln::gen {
namespace fs = std::filesystem;

namespace {

constexpr const char* kUsage = "usage: kiln run [--watch] [--poll-ms N] [-- APP FLAGS...]\n";
constexpr auto kStopGrace = std::chrono::seconds(20);  // above the server's default 10 s drain

volatile sig_atomic_t g_stop = 0;
void on_stop(int) { g_stop = 1; }

void install_stop_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a sleep or wait returns early
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

// The server's exit status if it has exited (reaped), else -1.
int reap(pid_t pid) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    return r == pid ? exit_status(status) : -1;
}

// SIGTERM (graceful stop), then SIGKILL if it is still there after kStopGrace.
int stop_server(pid_t pid) {
    std::printf("kiln run: stopping the server (pid %d)\n", static_cast<int>(pid));
    std::fflush(stdout);
    ::kill(pid, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + kStopGrace;
    while (std::chrono::steady_clock::now() < deadline) {
        if (int s = reap(pid); s >= 0) return s;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return exit_status(status);
}

pid_t start_server(const Project& p, const std::vector<std::string>& app_args) {
    std::vector<std::string> argv = {app_binary(p).string()};
    argv.insert(argv.end(), app_args.begin(), app_args.end());
    pid_t pid = spawn_process(argv, p.root, /*own_group=*/true);
    if (pid > 0) std::printf("kiln run: serving %s (pid %d)\n", p.name.c_str(), static_cast<int>(pid));
    std::fflush(stdout);
    return pid;
}

}  // namespace

int run_main(const Args& args) {
    bool watch = false;
    int poll_ms = 300;
    std::vector<std::string> app_args;
    for (size_t i = 0; i < args.size(); ++i) {
        std::string_view a = args[i];
        if (a == "--") {
            for (++i; i < args.size(); ++i) app_args.emplace_back(args[i]);
        } else if (a == "--watch" || a == "-w") {
            watch = true;
        } else if (a == "--poll-ms") {
            if (i + 1 == args.size()) {
                std::fprintf(stderr, "kiln run: --poll-ms: missing value\n%s", kUsage);
                return 2;
            }
            std::string_view v = args[++i];
            auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), poll_ms);
            if (ec != std::errc() || end != v.data() + v.size()) poll_ms = 0;  // "100ms" is not a number
            if (poll_ms < 10 || poll_ms > 60'000) {
                std::fprintf(stderr, "kiln run: --poll-ms must be a number from 10 to 60000\n");
                return 2;
            }
        } else if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        } else {
            std::fprintf(stderr, "kiln run: unexpected argument '%.*s'\n%s", static_cast<int>(a.size()), a.data(), kUsage);
            return 2;
        }
    }
    std::error_code ec;
    auto project = find_project(fs::current_path(ec));
    if (!project) {
        std::fprintf(stderr, "kiln run: not inside a kiln project (create one with kiln new NAME)\n");
        return 2;
    }
    install_stop_handlers();

    Snapshot seen = snapshot_sources(project->root);
    pid_t server = -1;
    if (build_project(*project)) server = start_server(*project, app_args);
    else if (!watch) return 1;
    else std::printf("kiln run: the build failed; watching for a fix\n");
    if (!watch && server < 0) return 1;

    bool reloading = false;  // a SIGHUP was sent: a server without a supervisor stops (status 129)
    while (!g_stop) {
        if (server > 0) {
            if (int status = reap(server); status >= 0) {
                server = -1;
                if (reloading && status == 128 + SIGHUP) {
                    // --workers 0 (one process, no supervisor): no reload, so a new start.
                    std::printf("kiln run: the server has no supervisor (workers = 0): starting the new build\n");
                    server = start_server(*project, app_args);
                } else {
                    std::printf("kiln run: the server exited with status %d\n", status);
                }
                std::fflush(stdout);
                reloading = false;
                if (!watch && server < 0) return status;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(watch ? poll_ms : 100));
        if (!watch || g_stop) continue;
        Snapshot now = snapshot_sources(project->root);
        std::string changed = first_change(seen, now);
        if (changed.empty()) continue;
        seen = std::move(now);  // taken before the build: an edit during it is seen next time
        std::printf("kiln run: %s changed, rebuilding\n", changed.c_str());
        std::fflush(stdout);
        if (!build_project(*project)) {
            std::printf("kiln run: the build failed; %s\n",
                        server > 0 ? "the server keeps running the previous build" : "no server is running");
        } else if (server > 0) {
            std::printf("kiln run: built; reloading the server (SIGHUP to pid %d)\n", static_cast<int>(server));
            ::kill(server, SIGHUP);
            reloading = true;
        } else {
            server = start_server(*project, app_args);
        }
        std::fflush(stdout);
    }
    return server > 0 ? (stop_server(server), 0) : 0;
}

}  // namespace kiln::gen
