// The supervisor: the process that owns the listening sockets and keeps worker
// processes serving on them. It serves no requests itself.
//
// Workers are always started by fork + exec of the supervisor's own binary, with
// their sockets and a readiness pipe passed in the environment (KILN_WORKER_FDS,
// KILN_READY_FD). So a worker starts clean, and a reload (SIGHUP) picks up a new
// binary and config: the new generation is started, and only once every new worker
// reports ready are the old ones told to drain (SIGTERM). A worker that dies is
// logged and replaced; one that keeps dying soon after start is replaced with a
// growing back-off (capped). SIGTERM/SIGINT stop gracefully (workers drain, up to
// drain_timeout); a second one stops at once (SIGKILL). A worker whose event loop
// has not turned for watchdog_timeout (a handler stuck in a loop or a deadlock;
// each loop beats into the shared statistics segment) is killed and replaced.
// While a slot has no worker that serves, new TCP connections go to the slots that
// have one (net/reuseport_steer.hpp), not into a queue nobody accepts from.
//
// Signals are taken synchronously (signalfd in the main loop): no work happens in
// a signal handler. Single-threaded.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <kiln/server.hpp>

#include "server/stats.hpp"

namespace kiln::net {
class ProcessBusDir;
}

namespace kiln::server {

// Environment variables of the supervisor/worker handshake.
inline constexpr const char* kEnvWorkerFds = "KILN_WORKER_FDS";   // "3,4;5,6": per event loop,
                                                                  // its listening sockets
inline constexpr const char* kEnvReadyFd = "KILN_READY_FD";       // write one byte when serving
inline constexpr const char* kEnvWorkerSlot = "KILN_WORKER_SLOT"; // for log lines
inline constexpr const char* kEnvBusDir = "KILN_BUS_DIR";         // the node's process bus directory
// A worker that spent its request budget (prefork) exits with this status: it is
// replaced at once, and it is not a failure.
inline constexpr int kExitRecycled = 75;

// The listening sockets of each event loop (one per address; a shared socket may
// appear in several groups).
using FdGroups = std::vector<std::vector<int>>;
std::string format_fd_groups(const FdGroups& groups);
FdGroups parse_fd_groups(const char* text);
void close_fd_groups(const FdGroups& groups);

class Supervisor {
public:
    // groups: workers * threads loops' sockets; slot i serves groups[i*threads, (i+1)*threads),
    // or, with fewer groups than workers (prefork), every worker serves all of them.
    Supervisor(const ServerOptions& options, FdGroups groups);
    ~Supervisor();
    int run();  // until stopped; returns the exit status
    // Called on SIGUSR1 (before the workers are told): reopen our own log files.
    void set_reopen_logs(std::function<void()> fn) { reopen_logs_ = std::move(fn); }
    // Runs fn every period_ms while the node serves (TLS ticket keys' rotation).
    void set_periodic(uint64_t period_ms, std::function<void()> fn) {
        periodic_ms_ = period_ms;
        periodic_ = std::move(fn);
    }
    // Passes `fd` to every worker, its number in the environment variable `env`.
    void inherit(int fd, std::string env) { inherited_.push_back({fd, std::move(env), std::to_string(fd)}); }

private:
    enum class State { Starting, Running, Draining };
    struct Process {
        pid_t pid = -1;
        unsigned slot = 0;
        unsigned generation = 0;
        State state = State::Starting;
        int ready_fd = -1;          // read end of the readiness pipe while Starting
        uint64_t started_ms = 0;
        uint64_t draining_ms = 0;   // when it was told to go
        int stats_cell = -1;
        bool watchdog_killed = false;
        bool reopen_owed = false;  // a SIGUSR1 came while it started: sent once it is ready
    };
    struct Slot {
        unsigned failures = 0;       // consecutive early deaths
        uint64_t respawn_at_ms = 0;  // 0: nothing scheduled
    };

    pid_t spawn(unsigned slot);
    void on_child_exit(pid_t pid, int status);
    void on_ready(Process& p);
    void begin_reload();
    void abandon_reload(int signal);
    void drain(Process& p, int signal);  // told to go: Draining from now
    void begin_stop(bool immediate);
    void signal_stop_if_due();
    void respawn_due();
    void check_stuck();  // the watchdog; workers past their ready or drain deadline
    int poll_timeout_ms() const;
    bool has_current(unsigned slot) const;
    // New TCP connections go to the slots with a worker that serves, while at least
    // one has one and another has none (dead, backing off, starting after a death).
    void steer_connections();

    ServerOptions options_;
    FdGroups groups_;
    std::vector<std::string> argv_;  // our own command line, to exec workers
    std::string exe_;
    std::vector<Process> procs_;
    std::vector<Slot> slots_;
    std::vector<bool> serving_;  // per slot, as steer_connections() last told the kernel
    bool steered_said_ = false;  // the log said new connections go to some slots only
    bool steer_failed_said_ = false;
    unsigned generation_ = 0;
    bool stopping_ = false;
    uint64_t stop_deadline_ms_ = 0;
    uint64_t stop_signal_at_ms_ = 0;  // the workers get SIGTERM then (after the lame duck); 0: sent
    bool ready_told_ = false;         // READY=1 went to systemd (sd_notify)
    uint64_t reload_deadline_ms_ = 0;
    bool reload_again_ = false;  // a SIGHUP came during the reload
    int signal_fd_ = -1;
    SharedStats stats_;
    std::unique_ptr<net::ProcessBusDir> bus_dir_;  // where the workers' bus sockets are (publish())
    struct Inherited {
        int fd;
        std::string env, value;
    };
    std::vector<Inherited> inherited_;
    std::function<void()> reopen_logs_;
    std::function<void()> periodic_;
    uint64_t periodic_ms_ = 0;
    uint64_t next_periodic_ms_ = 0;
};

}  // namespace kiln::server
