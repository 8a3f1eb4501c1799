// App::run: binds the listeners, starts one event loop per thread, and stops
// gracefully on SIGINT/SIGTERM (stop accepting, let in-flight requests finish for
// up to drain_timeout, then exit; a second signal stops at once). Signals are
// blocked in every thread and taken synchronously by the main thread with
// sigtimedwait, so no work happens in a signal handler.
// With workers (the default) this process becomes the supervisor (supervisor.hpp)
// and each worker, started by exec, lands here again and serves its inherited fds.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <latch>
#include <stdexcept>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <kiln/app.hpp>
#include <kiln/server.hpp>

#include "http/server.hpp"
#include "net/listener.hpp"
#include "net/loop.hpp"
#include "server/access_log.hpp"
#include "server/app_service.hpp"
#include "server/config.hpp"
#include "server/loop_recorder.hpp"
#include "server/privileges.hpp"
#include "server/secret_handoff.hpp"
#include "app/app_impl.hpp"
#include "server/session_segment.hpp"
#include "server/stats.hpp"
#include "server/supervisor.hpp"
#include "server/thread_pool.hpp"
#include "util/log.hpp"
#include "util/random.hpp"

namespace kiln {
namespace {

std::atomic<bool> g_recycled{false};  // this worker spent its request budget

struct Worker {
    std::thread thread;
    net::Loop* loop = nullptr;          // set by the thread before the start latch
    http::Server* server = nullptr;     // likewise
    std::atomic<bool> drain{false};
    std::atomic<bool> done{false};
};

http::EngineConfig engine_config(const ServerOptions& o) {
    http::EngineConfig c;
    c.limits.max_request_line = o.max_request_line;
    c.limits.max_header_bytes = o.max_header_bytes;
    c.limits.max_header_count = std::min(o.max_header_count, http::kMaxHeaderCount);
    c.header_timeout_ms = o.header_timeout_ms;
    c.body_timeout_ms = o.body_timeout_ms;
    c.keepalive_timeout_ms = o.keepalive_timeout_ms;
    c.write_timeout_ms = o.write_timeout_ms;
    c.server_name = o.server_name;
    for (const std::string& text : o.trusted_proxies) {
        net::AddressRange r;
        if (net::AddressRange::parse(text, &r)) c.trusted_proxies.push_back(r);  // validated by the config
    }
    if (o.mpm == "prefork") {
        c.max_connections = 1;
        c.max_requests = o.max_requests_per_worker;
    }
    return c;
}

uint16_t bound_port(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
    if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
    return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

// SO_REUSEPORT would let us silently share a port with another server already on
// it; a plain bind first proves the port is free.
bool port_is_free(const ServerOptions& o, std::string* err) {
    net::ListenResult probe = net::listen_tcp(o.host, o.port, 1, false);
    if (probe.fd < 0) {
        *err = probe.error;
        return false;
    }
    ::close(probe.fd);
    return true;
}

// The error log's destination, for the life of the process.
server::LogFile& error_log() {
    static server::LogFile file;
    return file;
}

std::string open_error_log(const ServerOptions& o, server::LogOwner owner) {
    if (o.error_log == "stderr") return {};
    if (std::string e = error_log().open(o.error_log, "error log", owner); !e.empty()) return e;
    util::set_log_fd(error_log().fd());
    return {};
}

// SIGUSR1: logrotate moved the files; start new ones under the same names.
void reopen_logs(server::LogFile* access) {
    for (server::LogFile* f : {access, &error_log()}) {
        if (!f) continue;
        if (std::string e = f->reopen(); !e.empty()) util::log(util::LogLevel::Error, "%s", e.c_str());
    }
}

// Listening sockets a supervisor passed to this worker process, if it is one.
server::FdGroups inherited_fds(int* ready_fd) {
    const char* list = std::getenv(server::kEnvWorkerFds);
    if (!list) return {};
    server::FdGroups groups = server::parse_fd_groups(list);
    const char* ready = std::getenv(server::kEnvReadyFd);
    *ready_fd = ready ? std::atoi(ready) : -1;
    // Ours alone: a process a handler starts must not inherit a listening socket.
    for (const auto& g : groups)
        for (int fd : g) fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (*ready_fd >= 0) fcntl(*ready_fd, F_SETFD, FD_CLOEXEC);
    unsetenv(server::kEnvWorkerFds);  // not for the app's own child processes
    unsetenv(server::kEnvReadyFd);
    return groups;
}

// Runs one event loop per fd group (its listening sockets) until a stop signal,
// then drains. In a worker only
// SIGTERM (from the supervisor) stops; Ctrl-C in a terminal reaches the whole
// process group, and the supervisor turns it into that SIGTERM.
int serve(const App& app, const SessionStore* sessions, const ServerOptions& opts, const server::FdGroups& fds,
          int ready_fd, bool worker) {
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGUSR1);  // not a stop: reopen the log file
    if (worker) std::signal(SIGINT, SIG_IGN);
    else sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);  // inherited by the loop threads

    std::unique_ptr<server::LogFile> access;
    if (opts.access_log != "off") {
        access = std::make_unique<server::LogFile>();
        if (std::string err = access->open(opts.access_log, "access log"); !err.empty()) {
            util::log(util::LogLevel::Error, "%s", err.c_str());
            return 2;
        }
    }
    const server::LogFile* access_file = access.get();
    auto access_format = opts.access_log_format == "json" ? server::AccessLogFormat::Json : server::AccessLogFormat::Combined;

    // Statistics: the supervisor's segment, or one of our own when serving alone.
    server::SharedStats stats = server::SharedStats::attach_from_env();
    int cell = stats.own_cell();
    if (!stats.valid() && !worker) {
        stats = server::SharedStats::create(1, static_cast<unsigned>(fds.size()));
        cell = stats.claim_cell(1);
    }

    // Hybrid: one pool per process, shared by its loops; destroyed after them.
    std::unique_ptr<server::ThreadPool> pool;
    if (opts.mpm == "hybrid") pool = std::make_unique<server::ThreadPool>(opts.pool_threads, opts.pool_queue);
    server::ThreadPool* executor = pool.get();

    const http::EngineConfig config = engine_config(opts);
    server::AppService service(app, opts, stats, sessions);
    std::vector<std::unique_ptr<Worker>> workers;
    std::latch started(static_cast<std::ptrdiff_t>(fds.size()));
    for (size_t i = 0; i < fds.size(); ++i) {
        auto w = std::make_unique<Worker>();
        Worker* wp = w.get();
        const std::vector<int>& group = fds[i];
        server::LoopStats* loop_stats = cell >= 0 ? stats.loop(static_cast<unsigned>(cell), static_cast<unsigned>(i)) : nullptr;
        // Counting costs two clock reads and a few atomic adds per request: only
        // when something reads the counts. The heartbeat (for the watchdog) is always on.
        bool count = loop_stats && !opts.metrics_path.empty();
        uint32_t beat_ms = opts.watchdog_timeout_ms ? std::clamp(opts.watchdog_timeout_ms / 4, 50u, 1000u) : 1000;
        w->thread = std::thread([wp, &group, &config, &service, &started, access_file, access_format, loop_stats, count, beat_ms, executor] {
            net::Loop loop;
            // Both outlive the server's connections, which report to them.
            std::optional<server::AccessLog> access_log;
            if (access_file) access_log.emplace(loop, *access_file, access_format);
            server::LoopRecorder recorder(loop, access_log ? &*access_log : nullptr, loop_stats, count, beat_ms);
            http::Server server(loop, service, config);
            if (access_log || count) server.set_observer(&recorder);
            if (executor) server.set_executor(executor);
            std::vector<std::unique_ptr<net::Listener>> listeners;
            for (int fd : group)
                listeners.push_back(std::make_unique<net::Listener>(
                    loop, fd, [&server](int cfd, const net::PeerAddress& peer) { server.accept(cfd, peer); }));
            server.set_capacity_handler([&listeners](bool room) {
                for (auto& l : listeners) room ? l->resume() : l->pause();
            });
            server.set_budget_handler([] {
                g_recycled.store(true);
                kill(getpid(), SIGTERM);  // the main thread drains us like any stop
            });
            bool draining = false;
            loop.add_wake_hook([&] {
                if (wp->drain.load() && !draining) {
                    draining = true;
                    for (auto& l : listeners) l->close();
                    server.drain([&loop] { loop.stop(); });
                }
            });
            wp->loop = &loop;
            wp->server = &server;
            started.count_down();
            try {
                loop.run();
            } catch (const std::exception& e) {
                util::log(util::LogLevel::Error, "event loop failed: %s", e.what());
            }
            wp->done.store(true);
        });
        workers.push_back(std::move(w));
    }
    started.wait();
    if (ready_fd >= 0) {  // tell the supervisor we serve
        ssize_t ignored = ::write(ready_fd, "R", 1);
        (void)ignored;
        ::close(ready_fd);
    }

    // Wait for the first stop signal, then drain; a second signal or the drain
    // timeout stops the loops where they are.
    int sig;
    while ((sig = sigwaitinfo(&stop_signals, nullptr)) == SIGUSR1 || sig < 0) {
        if (sig == SIGUSR1) reopen_logs(access.get());
    }
    if (!worker) util::log(util::LogLevel::Info, "received %s, stopping gracefully", strsignal(sig));
    for (auto& w : workers) {
        w->drain.store(true);
        w->server->request_stop();
        w->loop->wake();
    }
    timespec slice{0, 50'000'000};
    for (uint32_t waited = 0;; waited += 50) {
        bool all_done = true;
        for (auto& w : workers) all_done = all_done && w->done.load();
        if (all_done) break;
        int s = sigtimedwait(&stop_signals, nullptr, &slice);
        // In a worker a repeated SIGTERM is no reason to cut requests short: it is
        // `pkill` reaching us as well as the supervisor, which escalates by itself
        // (SIGKILL after drain_timeout) when it means to.
        bool again = !worker && (s == SIGTERM || s == SIGINT);
        if (again || waited >= opts.drain_timeout_ms) {
            util::log(util::LogLevel::Warn, again ? "second signal: stopping now" : "drain timeout: stopping now");
            for (auto& w : workers) w->loop->stop();
            break;
        }
    }
    for (auto& w : workers) w->thread.join();
    if (pool && pool->busy()) {
        // A forced stop with handlers still running: they may never return, and
        // joining them would hang the stop. The logs were flushed by the loops.
        util::log(util::LogLevel::Warn, "abandoning %zu handlers still running", pool->busy());
        _exit(0);
    }
    return g_recycled.load() ? server::kExitRecycled : 0;
}

}  // namespace

namespace {
// `--routes`: one line per route, "METHOD  PATTERN", an App::files mount as
// "GET  /prefix/*path (files: DIR)"; the app exits 0 without serving.
void print_routes(const std::vector<RouteInfo>& routes) {
    size_t width = 0;
    for (const RouteInfo& r : routes) width = std::max(width, r.method.size());
    for (const RouteInfo& r : routes) {
        std::printf("%-*s  %s", static_cast<int>(width), r.method.c_str(), r.pattern.c_str());
        if (!r.files_dir.empty()) std::printf(" (files: %s)", r.files_dir.c_str());
        std::putchar('\n');
    }
}
}  // namespace

int App::run(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--routes") == 0) {
            print_routes(route_list());
            return 0;
        }
    }
    ServerOptions options;
    int status = 0;
    if (!parse_server_flags(argc, argv, &options, &status)) return status;
    return run(options);
}

int App::run(const ServerOptions& options) {
    util::set_log_enabled(options.log_errors);
    util::LogLevel level = util::LogLevel::Info;
    util::parse_log_level(options.log_level, &level);
    util::set_log_level(level);
    std::signal(SIGPIPE, SIG_IGN);
    if (std::string e = server::check_options(options); !e.empty()) {
        std::fprintf(stderr, "kiln: %s\n", e.c_str());
        return 2;
    }
    bool force_secure = server::cookie_needs_secure(options.session_cookie);
    impl_->session_options = {options.session_cookie,
                              force_secure ? SessionOptions::Secure::Always : options.session_secure};
    impl_->secret = options.secret;
    server::SessionSegment sessions;  // the default session store's memory
    int ready_fd = -1;
    if (server::FdGroups fds = inherited_fds(&ready_fd); !fds.empty()) {
        if (std::string e = open_error_log(options, {}); !e.empty()) {
            std::fprintf(stderr, "kiln: %s\n", e.c_str());
            return 2;
        }
        if (!impl_->user_store) {
            if (!sessions.adopt_from_env()) util::log(util::LogLevel::Error, "no session store from the supervisor");
            impl_->store = sessions.store();
        }
        if (impl_->secret.empty()) impl_->secret = server::take_env_secrets().generated;
        return serve(*this, impl_->store, options, fds, ready_fd, true);
    }

    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    bool prefork = options.mpm == "prefork";
    // Prefork processes each hold one connection, so there are more of them.
    unsigned processes = options.workers >= 0 ? static_cast<unsigned>(options.workers) : prefork ? 4 * cores : cores;
    if (prefork && processes == 0) {
        std::fprintf(stderr, "kiln: --mpm prefork needs worker processes (--workers >= 1)\n");
        return 2;
    }
    unsigned threads = prefork ? 1 : options.threads ? options.threads : std::max(1u, cores / std::max(1u, processes));
    ServerOptions opts = options;
    opts.workers = static_cast<int>(processes);
    opts.threads = threads;
    // Prefork: a handler past request_timeout stops its loop; the watchdog ends it.
    if (prefork) opts.watchdog_timeout_ms = opts.request_timeout_ms;
    std::string err;
    server::Identity identity;
    if (opts.group.size() && opts.user.empty()) {
        std::fprintf(stderr, "kiln: group '%s' given without a user\n", opts.group.c_str());
        return 2;
    }
    if (!opts.user.empty()) {
        if (std::string e = server::resolve_identity(opts.user, opts.group, &identity); !e.empty()) {
            std::fprintf(stderr, "kiln: %s\n", e.c_str());
            return 2;
        }
        if (geteuid() != 0) {
            std::fprintf(stderr, "kiln: switching to user '%s' needs root\n", opts.user.c_str());
            return 2;
        }
    }
    // Log files created as root go to the user the workers run as (they reopen
    // them): handed over by descriptor, never by path, so no link can redirect it.
    server::LogOwner owner{identity.uid, identity.gid};
    server::LogFile access_probe;  // fail now, not in every worker
    std::string log_error = open_error_log(opts, owner);
    if (log_error.empty() && opts.access_log != "off") log_error = access_probe.open(opts.access_log, "access log", owner);
    if (log_error.empty() && !opts.user.empty()) log_error = error_log().hand_to(owner);
    if (log_error.empty() && !opts.user.empty()) log_error = access_probe.hand_to(owner);
    if (!log_error.empty()) {
        std::fprintf(stderr, "kiln: %s\n", log_error.c_str());
        return 2;
    }
    if (!impl_->user_store) {  // before binding: a bad session.* setting fails fast
        if (std::string e = sessions.create(opts); !e.empty()) {
            std::fprintf(stderr, "kiln: %s\n", e.c_str());
            return 2;
        }
        impl_->store = sessions.store();
    }
    // Every address, bound here once; workers inherit the sockets. A TCP address
    // gets one SO_REUSEPORT socket per event loop; a unix socket is one socket all
    // loops share. Prefork: one socket per address that every worker accepts from,
    // so any free worker takes the next connection.
    struct Address {
        bool is_unix;
        std::string host;
        uint16_t port;
    };
    std::vector<Address> addresses{{false, opts.host, opts.port}};
    for (const std::string& text : opts.also_listen) {
        Address a{text.starts_with("unix:"), {}, 0};
        server::parse_listen(text, &a.host, &a.port);  // validated by the flag/config parser
        addresses.push_back(a);
    }
    size_t loops = prefork ? 1 : static_cast<size_t>(std::max(1u, processes)) * threads;
    server::FdGroups fds(loops);
    std::string where;
    for (Address& a : addresses) {
        if (a.is_unix) {
            net::ListenResult l = net::listen_unix(a.host, opts.backlog);
            if (l.fd < 0) err = l.error;
            else for (auto& g : fds) g.push_back(l.fd);
            where += (where.empty() ? "" : ", ") + std::string("unix:") + a.host;
        } else {
            ServerOptions probe = opts;
            probe.host = a.host;
            probe.port = a.port;
            if (a.port != 0) port_is_free(probe, &err);
            for (size_t i = 0; i < loops && err.empty(); ++i) {
                net::ListenResult l = net::listen_tcp(a.host, a.port, opts.backlog, !prefork);
                if (l.fd < 0) {
                    err = l.error;
                    break;
                }
                if (a.port == 0) a.port = bound_port(l.fd);  // the others join the picked port
                fds[i].push_back(l.fd);
            }
            bool v6 = a.host.find(':') != std::string::npos;
            where += (where.empty() ? "http://" : ", http://") + (v6 ? "[" + a.host + "]" : a.host) + ":" + std::to_string(a.port);
        }
        if (!err.empty()) {
            std::fprintf(stderr, "kiln: %s\n", err.c_str());
            server::close_fd_groups(fds);
            return 2;
        }
    }
    opts.port = addresses.front().port;
    std::fprintf(stderr, "kiln: listening on %s with %u worker%s of %u thread%s (%s)\n", where.c_str(), processes,
                 processes == 1 ? "" : "s", threads, threads == 1 ? "" : "s", opts.mpm.c_str());
    auto remove_unix_files = [&] {
        for (const Address& a : addresses)
            if (a.is_unix) ::unlink(a.host.c_str());
    };
    if (!opts.user.empty()) {
        if (std::string e = server::drop_privileges(identity); !e.empty()) {
            std::fprintf(stderr, "kiln: %s\n", e.c_str());
            server::close_fd_groups(fds);
            remove_unix_files();
            return 2;
        }
    }
    server::EnvSecrets handoff{server::take_env_secrets().from_env, {}};
    if (impl_->secret.empty()) {  // one random key for every worker, handed down with the others
        impl_->secret = handoff.generated = util::random_hex(32);
        util::log(util::LogLevel::Info, "no `secret` configured: using a random one; signed cookies will not "
                  "survive a restart");
    }
    int status;
    if (processes == 0) {
        status = serve(*this, impl_->store, opts, fds, -1, false);
        server::close_fd_groups(fds);
    } else {
        server::Supervisor supervisor(opts, std::move(fds));
        int secret_fd = server::make_secret_memfd(handoff, &err);
        if (secret_fd < 0) {
            std::fprintf(stderr, "kiln: %s\n", err.c_str());
            remove_unix_files();
            return 2;
        }
        supervisor.inherit(secret_fd, server::kEnvSecretFd);
        if (sessions.fd() >= 0) supervisor.inherit(sessions.fd(), server::kEnvSessionFd);
        supervisor.set_reopen_logs([] { reopen_logs(nullptr); });
        status = supervisor.run();
        ::close(secret_fd);
    }
    remove_unix_files();
    return status;
}

}  // namespace kiln
