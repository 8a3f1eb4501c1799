#include "server/supervisor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <utility>

#include "net/process_bus.hpp"
#include "net/reuseport_steer.hpp"
#include "server/rate_segment.hpp"
#include "server/secret_handoff.hpp"
#include "server/sd_notify.hpp"
#include "server/session_segment.hpp"
#include "util/log.hpp"

extern char** environ;

namespace kiln::server {
namespace {

using util::log;
using util::LogLevel;

constexpr uint64_t kEarlyDeathMs = 5'000;     // dying sooner than this after start counts as a failure
constexpr uint64_t kBackoffBaseMs = 100;
constexpr uint64_t kBackoffCapMs = 10'000;
constexpr uint64_t kStopGraceMs = 2'000;      // beyond drain_timeout before SIGKILL

uint64_t now_ms() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1'000'000;
}

std::vector<std::string> own_argv() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> args;
    for (size_t i = 0; i < all.size();) {
        size_t end = all.find('\0', i);
        if (end == std::string::npos) end = all.size();
        args.emplace_back(all, i, end - i);
        i = end + 1;
    }
    return args;
}

// The path of our binary, so a reload execs whatever is there now (a rebuilt binary).
std::string own_exe() {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "/proc/self/exe";
    std::string path(buf, static_cast<size_t>(n));
    constexpr std::string_view kDeleted = " (deleted)";
    if (path.ends_with(kDeleted)) path.resize(path.size() - kDeleted.size());
    return path;
}

// Our environment for a worker, without the handshake variables of an earlier
// generation (a worker's are set anew) or a secret (handed over by memfd).
std::vector<std::string> worker_environment() {
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        std::string_view var(*e);
        std::string_view name = var.substr(0, var.find('='));
        if (name == kEnvWorkerFds || name == kEnvReadyFd || name == kEnvWorkerSlot || name == kEnvStatsFd ||
            name == kEnvStatsCell || name == kEnvSecret || name == kEnvSecretFd || name == kEnvSessionFd ||
            name == kEnvRateFd || name == kEnvBusDir)
            continue;
        env.emplace_back(var);
    }
    return env;
}

std::string describe_exit(int status) {
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")" +
               (WCOREDUMP(status) ? ", core dumped" : "");
    }
    return "stopped with status " + std::to_string(status);
}

}  // namespace

std::string format_fd_groups(const FdGroups& groups) {
    std::string out;
    for (size_t g = 0; g < groups.size(); ++g) {
        if (g) out += ';';
        for (size_t i = 0; i < groups[g].size(); ++i) {
            if (i) out += ',';
            out += std::to_string(groups[g][i]);
        }
    }
    return out;
}

FdGroups parse_fd_groups(const char* text) {
    FdGroups groups(1);
    for (const char* p = text; *p;) {
        char* end;
        long fd = std::strtol(p, &end, 10);
        if (end == p || fd < 0) return {};
        groups.back().push_back(static_cast<int>(fd));
        if (*end == ';') groups.emplace_back();
        p = (*end == ',' || *end == ';') ? end + 1 : end;
    }
    return groups.front().empty() ? FdGroups() : groups;
}

void close_fd_groups(const FdGroups& groups) {
    std::vector<int> all;
    for (const auto& g : groups) all.insert(all.end(), g.begin(), g.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    for (int fd : all) ::close(fd);
}

Supervisor::Supervisor(const ServerOptions& options, FdGroups groups)
    : options_(options),
      groups_(std::move(groups)),
      argv_(own_argv()),
      exe_(own_exe()),
      slots_(options.workers),
      stats_(SharedStats::create(2 * options.workers,
                                 std::max(1u, static_cast<unsigned>(groups_.size() / options.workers)))) {
    if (!stats_.valid()) log(LogLevel::Warn, "no shared memory for statistics: /metrics will be empty");
    // The process bus, for publish(): its slots are the statistics cells. Made with
    // topics.store = "redis" too, which a reload may change.
    if (stats_.valid()) {
        std::string err;
        bus_dir_ = net::ProcessBusDir::create(&err);
        if (!bus_dir_) log(LogLevel::Error, "%s: publish() will not reach the other worker processes", err.c_str());
    }
}

Supervisor::~Supervisor() {
    close_fd_groups(groups_);
    for (Process& p : procs_)
        if (p.ready_fd >= 0) ::close(p.ready_fd);
    if (signal_fd_ >= 0) ::close(signal_fd_);
}

pid_t Supervisor::spawn(unsigned slot) {
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) != 0) {
        log(LogLevel::Error, "cannot start worker for slot %u: pipe: %s", slot, std::strerror(errno));
        return -1;
    }
    // Each slot's loops: its own share, or all of them when they are shared.
    bool shared = groups_.size() < slots_.size();
    size_t loops = shared ? groups_.size() : groups_.size() / slots_.size();
    FdGroups mine(groups_.begin() + static_cast<ptrdiff_t>(shared ? 0 : slot * loops),
                  groups_.begin() + static_cast<ptrdiff_t>((shared ? 0 : slot * loops) + loops));
    std::string fd_list = format_fd_groups(mine);
    int cell = stats_.claim_cell(1);  // the worker counts into this cell (-1: none)
    if (cell < 0 && stats_.valid())
        log(LogLevel::Warn, "no free statistics cell for slot %u (reloads faster than old workers drain): "
            "this worker has no metrics and no watchdog", slot);
    // Everything the child needs is built here: between fork() and exec() it may only
    // make async-signal-safe calls (no allocation, no setenv).
    std::vector<std::string> env = worker_environment();
    if (cell >= 0) {
        env.push_back(std::string(kEnvStatsFd) + "=" + std::to_string(stats_.fd()));
        env.push_back(std::string(kEnvStatsCell) + "=" + std::to_string(cell));
        env.push_back(std::string(kEnvBusDir) + "=" + (bus_dir_ ? bus_dir_->path() : ""));  // "": none (said above)
    }
    for (const Inherited& i : inherited_) env.push_back(i.env + "=" + i.value);
    env.push_back(std::string(kEnvWorkerFds) + "=" + format_fd_groups(mine));
    env.push_back(std::string(kEnvReadyFd) + "=" + std::to_string(ready[1]));
    env.push_back(std::string(kEnvWorkerSlot) + "=" + std::to_string(slot));
    std::vector<char*> envp, args;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    for (std::string& a : argv_) args.push_back(a.data());
    args.push_back(nullptr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        log(LogLevel::Error, "cannot start worker for slot %u: fork: %s", slot, std::strerror(errno));
        ::close(ready[0]);
        ::close(ready[1]);
        stats_.release_cell(cell);
        return -1;
    }
    if (pid == 0) {
        // Child: only async-signal-safe work until exec.
        prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the supervisor
        if (getppid() != parent) _exit(1);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        for (const auto& g : mine)
            for (int fd : g) fcntl(fd, F_SETFD, 0);
        fcntl(ready[1], F_SETFD, 0);
        if (cell >= 0) fcntl(stats_.fd(), F_SETFD, 0);
        for (const Inherited& i : inherited_) fcntl(i.fd, F_SETFD, 0);
        execve(exe_.c_str(), args.data(), envp.data());
        const char msg[] = "kiln worker: exec failed\n";
        ssize_t ignored = ::write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)ignored;
        _exit(127);
    }
    ::close(ready[1]);
    Process p;
    p.pid = pid;
    p.slot = slot;
    p.generation = generation_;
    p.ready_fd = ready[0];
    p.started_ms = now_ms();
    p.stats_cell = cell;
    procs_.push_back(p);
    return pid;
}

bool Supervisor::has_current(unsigned slot) const {
    return std::any_of(procs_.begin(), procs_.end(), [&](const Process& p) {
        return p.slot == slot && p.generation == generation_ && p.state != State::Draining;
    });
}

void Supervisor::steer_connections() {
    bool shared = groups_.size() < slots_.size() || groups_.size() < 2;  // prefork, or one socket per address
    if (shared) return;
    std::vector<bool> serving(slots_.size());
    for (const Process& p : procs_)
        if (p.state == State::Running) serving[p.slot] = true;
    if (serving == serving_) return;
    serving_ = serving;
    const size_t loops = groups_.size() / slots_.size();
    std::vector<unsigned> accepting;  // the sockets' indices in each address's group: loop order
    std::string which;
    for (unsigned s = 0; s < slots_.size(); ++s) {
        if (!serving[s]) continue;
        for (size_t l = 0; l < loops; ++l) accepting.push_back(static_cast<unsigned>(s * loops + l));
        which += (which.empty() ? "" : ", ") + std::to_string(s);
    }
    std::string err;
    for (size_t a = 0; a < groups_[0].size() && err.empty(); ++a)
        if (groups_[0][a] != groups_[1][a])  // (a unix socket is one for every loop)
            err = net::steer_reuseport(groups_[0][a], accepting, groups_.size());
    if (!err.empty()) {
        // No address keeps an older choice (it could send everything to a slot that
        // died since): the kernel's own spread on all of them, said once.
        for (size_t a = 0; a < groups_[0].size(); ++a)
            if (groups_[0][a] != groups_[1][a]) net::steer_reuseport(groups_[0][a], {}, groups_.size());
        if (!std::exchange(steer_failed_said_, true))
            log(LogLevel::Warn, "%s: new connections are spread over every worker, serving or not", err.c_str());
        return;
    }
    if (!ready_told_) return;  // the first start: slots get ready one after the other
    if (!accepting.empty() && accepting.size() < groups_.size()) {  // some slots serve, not all
        log(LogLevel::Info, "new connections go to the workers that serve (slot %s) until every slot serves again",
            which.c_str());
        steered_said_ = true;
    } else if (std::exchange(steered_said_, false) && !stopping_) {
        log(LogLevel::Info, "every slot serves again: new connections are spread over all of them");
    }
}

void Supervisor::respawn_due() {
    if (stopping_) return;
    uint64_t now = now_ms();
    for (unsigned s = 0; s < slots_.size(); ++s) {
        if (has_current(s)) {
            slots_[s].respawn_at_ms = 0;  // nothing to wait for (poll_timeout_ms would say "now" forever)
            continue;
        }
        if (slots_[s].respawn_at_ms > now) continue;
        slots_[s].respawn_at_ms = 0;
        if (spawn(s) < 0) slots_[s].respawn_at_ms = now + 1000;  // fork/pipe failed: retry, don't spin
    }
}

void Supervisor::on_ready(Process& p) {
    ::close(p.ready_fd);
    p.ready_fd = -1;
    // Told to go already (an abandoned reload's worker, or a stop): it stays going.
    if (p.state == State::Draining) return;
    p.state = State::Running;
    if (std::exchange(p.reopen_owed, false)) kill(p.pid, SIGUSR1);  // a SIGUSR1 that came while it started
    if (stopping_) return;
    if (reload_deadline_ms_ == 0) {
        if (!ready_told_ &&
            std::count_if(procs_.begin(), procs_.end(), [](const Process& q) { return q.state == State::Running; }) ==
                static_cast<std::ptrdiff_t>(slots_.size())) {
            ready_told_ = true;  // the first start: every slot serves
            log(LogLevel::Info, "ready: every worker serves (%zu)", slots_.size());
            sd_notify("READY=1");
        }
        return;
    }
    // Reloading: once every slot has a ready worker of the new generation, the old
    // generation stops accepting and drains.
    for (unsigned s = 0; s < slots_.size(); ++s) {
        bool ready = std::any_of(procs_.begin(), procs_.end(), [&](const Process& q) {
            return q.slot == s && q.generation == generation_ && q.state == State::Running;
        });
        if (!ready) return;
    }
    for (Process& q : procs_) {
        if (q.generation < generation_ && q.state != State::Draining) drain(q, SIGTERM);
    }
    reload_deadline_ms_ = 0;
    log(LogLevel::Info, "reload complete: generation %u serving, the old workers drain", generation_);
    sd_notify("READY=1");
}

void Supervisor::abandon_reload(int signal) {
    // The new generation goes; the old one, still serving, is current again. Those
    // of the new already serving drain what they accepted (only a worker not ready
    // may be stuck).
    for (Process& p : procs_)
        if (p.generation == generation_ && p.state != State::Draining)
            drain(p, p.state == State::Running ? SIGTERM : signal);
    --generation_;
    reload_deadline_ms_ = 0;
    if (ready_told_) sd_notify("READY=1");  // the reload is over (failed): systemctl reload must not wait on
}

void Supervisor::begin_reload() {
    if (stopping_) return;
    if (reload_deadline_ms_ != 0) {  // (a deploy right after another: the files may have changed again)
        log(LogLevel::Info, "SIGHUP during a reload: another reload follows this one");
        reload_again_ = true;
        return;
    }
    ++generation_;
    reload_deadline_ms_ = now_ms() + options_.ready_timeout_ms;
    sd_notify("RELOADING=1");
    for (Slot& s : slots_) s = Slot{};
    log(LogLevel::Info, "SIGHUP: reloading, starting generation %u", generation_);
    respawn_due();
}

void Supervisor::begin_stop(bool immediate) {
    if (immediate) {
        log(LogLevel::Warn, "second stop signal: killing workers now");
        for (Process& p : procs_) kill(p.pid, SIGKILL);
        return;
    }
    stopping_ = true;
    reload_deadline_ms_ = 0;  // a reload under way ends with the stop: its new workers drain too
    reload_again_ = false;
    sd_notify("STOPPING=1");
    stats_.set_draining();  // every worker's health endpoint answers 503 from now
    stop_signal_at_ms_ = now_ms() + options_.lame_duck_ms;
    stop_deadline_ms_ = stop_signal_at_ms_ + options_.drain_timeout_ms + kStopGraceMs;
    if (options_.lame_duck_ms)
        log(LogLevel::Info, "lame duck: serving %u ms more with the health check failing", options_.lame_duck_ms);
    signal_stop_if_due();
}

void Supervisor::signal_stop_if_due() {
    if (!stopping_ || stop_signal_at_ms_ == 0 || now_ms() < stop_signal_at_ms_) return;
    stop_signal_at_ms_ = 0;
    for (Process& p : procs_)
        if (p.state != State::Draining) drain(p, SIGTERM);
}

void Supervisor::drain(Process& p, int signal) {
    p.state = State::Draining;
    p.draining_ms = now_ms();
    kill(p.pid, signal);
}

void Supervisor::on_child_exit(pid_t pid, int status) {
    auto it = std::find_if(procs_.begin(), procs_.end(), [&](const Process& p) { return p.pid == pid; });
    if (it == procs_.end()) return;
    if (it->ready_fd >= 0) {
        // Its ready byte may be unread: it can be written, a request answered and the
        // worker killed between one poll and this reap. It was ready (it served): say so
        // first, or its replacement is taken for a first start, which has no deadline.
        pollfd pfd{it->ready_fd, POLLIN, 0};
        char byte;
        if (::poll(&pfd, 1, 0) == 1 && ::read(it->ready_fd, &byte, 1) == 1) {
            it->reopen_owed = false;  // no signal to a pid already reaped
            on_ready(*it);
        }
    }
    Process p = *it;
    if (p.ready_fd >= 0) ::close(p.ready_fd);
    procs_.erase(it);
    stats_.release_cell(p.stats_cell);
    std::string how = describe_exit(status);
    if (stopping_ || p.state == State::Draining) {
        bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        log(clean ? LogLevel::Info : LogLevel::Warn, "worker %d (slot %u) %s", pid, p.slot, how.c_str());
        return;
    }
    if (p.generation < generation_) return;  // an old worker that had not been told to drain yet
    if (WIFEXITED(status) && WEXITSTATUS(status) == kExitRecycled) {  // (during a reload too: not a failure)
        log(LogLevel::Info, "worker %d (slot %u) served its %llu requests; replacing it", pid, p.slot,
            static_cast<unsigned long long>(options_.max_requests_per_worker));
        slots_[p.slot].failures = 0;
        slots_[p.slot].respawn_at_ms = 0;
        return;
    }
    if (reload_deadline_ms_ != 0) {
        // A new worker died during a reload: keep the old generation serving.
        log(LogLevel::Error, "reload failed: new worker %d (slot %u) %s; the old workers keep serving", pid,
            p.slot, how.c_str());
        abandon_reload(SIGTERM);
        return;
    }
    stats_.count_restart();
    Slot& slot = slots_[p.slot];
    uint64_t lived = now_ms() - p.started_ms;
    slot.failures = lived < kEarlyDeathMs ? slot.failures + 1 : 0;
    uint64_t delay = 0;
    if (slot.failures > 1) delay = std::min(kBackoffCapMs, kBackoffBaseMs << std::min(slot.failures - 2, 16u));
    slot.respawn_at_ms = now_ms() + delay;
    if (delay == 0) {
        log(LogLevel::Error, "worker %d (slot %u) %s; replacing it", pid, p.slot, how.c_str());
    } else {
        log(LogLevel::Error, "worker %d (slot %u) %s; it died %u times in a row within %llu ms of starting: "
            "replacing it in %llu ms", pid, p.slot, how.c_str(), slot.failures,
            static_cast<unsigned long long>(kEarlyDeathMs), static_cast<unsigned long long>(delay));
    }
}

void Supervisor::check_stuck() {
    uint64_t now = now_ms();
    for (Process& p : procs_) {
        if (p.watchdog_killed) continue;
        const char* why = nullptr;
        uint64_t waited = 0;
        if (p.state == State::Draining) {
            // Its loops stop beating as each finishes, the last beat left behind: a
            // draining worker has its drain timeout (and the grace after it) instead.
            waited = now - p.draining_ms;
            if (waited > uint64_t{options_.drain_timeout_ms} + kStopGraceMs) why = "still draining";
        } else if (p.state == State::Starting) {
            // A replacement, once the node has served (a reload has its own deadline;
            // a first start waits as long as its hooks take): one that never gets
            // ready would leave its share of the connections waiting.
            waited = now - p.started_ms;
            if (ready_told_ && reload_deadline_ms_ == 0 && options_.ready_timeout_ms && waited > options_.ready_timeout_ms)
                why = "not ready";
        } else if (options_.watchdog_timeout_ms && p.stats_cell >= 0) {
            uint64_t beat = stats_.oldest_heartbeat(static_cast<unsigned>(p.stats_cell));
            if (beat != 0 && now > beat && now - beat > options_.watchdog_timeout_ms) {
                log(LogLevel::Error, "worker %d (slot %u): an event loop has not run for %llu ms (watchdog timeout %u ms); killing it",
                    p.pid, p.slot, static_cast<unsigned long long>(now - beat), options_.watchdog_timeout_ms);
                p.watchdog_killed = true;
                kill(p.pid, SIGKILL);
            }
            continue;
        }
        if (!why) continue;
        if (p.state == State::Draining)
            log(LogLevel::Error, "worker %d (slot %u) %s %llu ms after it was told to stop (timeouts.drain_ms %u); killing it",
                p.pid, p.slot, why, static_cast<unsigned long long>(waited), options_.drain_timeout_ms);
        else
            log(LogLevel::Error, "worker %d (slot %u) %s within %u ms of its start (timeouts.ready_ms); killing it",
                p.pid, p.slot, why, options_.ready_timeout_ms);
        p.watchdog_killed = true;
        kill(p.pid, SIGKILL);
    }
}

int Supervisor::poll_timeout_ms() const {
    uint64_t now = now_ms(), next = UINT64_MAX;
    // The watchdog's beats; workers starting or draining against their deadlines.
    if (options_.watchdog_timeout_ms) next = now + std::clamp(options_.watchdog_timeout_ms / 4, 50u, 1000u);
    if (!procs_.empty()) next = std::min(next, now + 1000);
    if (!stopping_)  // (stopping, no slot is filled again)
        for (const Slot& s : slots_)
            if (s.respawn_at_ms) next = std::min(next, s.respawn_at_ms);
    if (reload_deadline_ms_) next = std::min(next, reload_deadline_ms_);
    if (stopping_) next = std::min(next, stop_signal_at_ms_ ? stop_signal_at_ms_ : stop_deadline_ms_);
    if (periodic_ && next_periodic_ms_) next = std::min(next, next_periodic_ms_);
    if (next == UINT64_MAX) return -1;
    return next <= now ? 0 : static_cast<int>(std::min<uint64_t>(next - now, 60'000));
}

int Supervisor::run() {
    // Ignored by whoever started us (a shell, a wrapper), SIGCHLD would have the kernel
    // reap the workers itself: their deaths never reported, nobody replaced.
    std::signal(SIGCHLD, SIG_DFL);
    sigset_t mask;
    sigemptyset(&mask);
    for (int s : {SIGCHLD, SIGHUP, SIGTERM, SIGINT, SIGUSR1}) sigaddset(&mask, s);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    signal_fd_ = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (signal_fd_ < 0) {
        log(LogLevel::Error, "signalfd: %s", std::strerror(errno));
        return 1;
    }
    log(LogLevel::Info, "supervisor %d: %zu workers, %zu threads each", getpid(), slots_.size(),
        std::max<size_t>(1, groups_.size() / slots_.size()));
    respawn_due();
    if (periodic_) next_periodic_ms_ = now_ms() + periodic_ms_;

    while (!(stopping_ && procs_.empty())) {
        std::vector<pollfd> pfds{{signal_fd_, POLLIN, 0}};
        for (const Process& p : procs_)
            if (p.ready_fd >= 0) pfds.push_back({p.ready_fd, POLLIN, 0});
        int n = poll(pfds.data(), pfds.size(), poll_timeout_ms());
        if (n < 0 && errno != EINTR) {
            log(LogLevel::Error, "poll: %s", std::strerror(errno));
            return 1;
        }
        for (size_t i = 1; i < pfds.size(); ++i) {
            if (!pfds[i].revents) continue;
            auto it = std::find_if(procs_.begin(), procs_.end(), [&](const Process& p) { return p.ready_fd == pfds[i].fd; });
            if (it == procs_.end()) continue;
            char byte;
            if (::read(it->ready_fd, &byte, 1) == 1) {
                on_ready(*it);
            } else {  // the worker died before it was ready: its SIGCHLD tells how
                ::close(it->ready_fd);
                it->ready_fd = -1;
            }
        }
        signalfd_siginfo si;
        while (::read(signal_fd_, &si, sizeof si) == sizeof si) {
            switch (si.ssi_signo) {
                case SIGCHLD: break;  // reaped below
                case SIGHUP: begin_reload(); break;
                case SIGUSR1:  // reopen log files: ours, then each worker its own
                    if (reopen_logs_) reopen_logs_();
                    for (Process& p : procs_) {  // a starting worker may have opened them before
                        if (p.state == State::Starting) p.reopen_owed = true;  // (SIGUSR1 would kill it yet)
                        else kill(p.pid, SIGUSR1);
                    }
                    break;
                default:
                    if (!stopping_) log(LogLevel::Info, "received %s, stopping gracefully", strsignal(static_cast<int>(si.ssi_signo)));
                    begin_stop(stopping_);
            }
        }
        int status;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) on_child_exit(pid, status);

        signal_stop_if_due();
        uint64_t now = now_ms();
        if (periodic_ && next_periodic_ms_ && now >= next_periodic_ms_) {
            periodic_();
            next_periodic_ms_ = now + periodic_ms_;
        }
        if (stopping_ && now >= stop_deadline_ms_) {
            log(LogLevel::Warn, "drain timeout: killing %zu remaining workers", procs_.size());
            for (Process& p : procs_) kill(p.pid, SIGKILL);
            stop_deadline_ms_ = UINT64_MAX;
        }
        if (reload_deadline_ms_ && now >= reload_deadline_ms_) {
            log(LogLevel::Error,
                "reload failed: new workers not ready within %u ms (timeouts.ready_ms); the old workers keep serving",
                options_.ready_timeout_ms);
            abandon_reload(SIGKILL);  // not ready in time: they may be stuck
        }
        check_stuck();
        respawn_due();
        steer_connections();
        if (reload_again_ && reload_deadline_ms_ == 0 && !stopping_) {  // the reload ended (or failed)
            reload_again_ = false;
            log(LogLevel::Info, "reloading again, for the SIGHUP that came during the last reload");
            begin_reload();
        }
    }
    log(LogLevel::Info, "supervisor stopped");
    return 0;
}

}  // namespace kiln::server
