// Serving: one thread per event loop, each with its http::Server, its listeners,
// its access-log writer and its statistics recorder; the main thread takes the
// signals (blocked everywhere else) and drains.
#include "server/serve.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "app/blocking_jobs.hpp"
#include "app/ws_bus.hpp"
#include "http/server.hpp"
#include "net/listener.hpp"
#include "net/loop.hpp"
#include "server/access_log.hpp"
#include "server/app_service.hpp"
#include "server/config.hpp"
#include "server/listeners.hpp"
#include "server/tls_setup.hpp"
#include "server/loop_recorder.hpp"
#include "server/process_logs.hpp"
#include "server/sd_notify.hpp"
#include "server/stats.hpp"
#include "net/thread_pool.hpp"
#include "util/log.hpp"

namespace kiln::server {
namespace {

std::atomic<bool> g_recycled{false};  // this worker spent its request budget

// The hybrid model's handler threads, as the engine's Executor.
class PoolExecutor final : public http::Executor {
public:
    PoolExecutor(unsigned threads, size_t queue) : pool_(threads, queue) {}
    bool submit(std::function<void()> job) override { return pool_.submit(std::move(job)); }
    size_t busy() const { return pool_.busy(); }

private:
    net::ThreadPool pool_;
};

// One event-loop thread, as the main thread sees it. Its loop and server live on
// that thread's stack: the main thread reaches them only through if_serving(), under
// the mutex the loop thread takes to say they are gone, so a stop or a wake never
// lands on a loop being destroyed (or on a closed, maybe reused, descriptor).
struct LoopThread {
    std::thread thread;
    std::atomic<bool> drain{false};
    std::atomic<bool> done{false};

    template <class F>
    void if_serving(F fn) {
        std::lock_guard<std::mutex> g(mu);
        if (loop) fn(*loop, *server);
    }
    void serving(net::Loop* l, http::Server* s) {
        std::lock_guard<std::mutex> g(mu);
        loop = l;
        server = s;
    }

private:
    std::mutex mu;
    net::Loop* loop = nullptr;
    http::Server* server = nullptr;
};

// What every loop thread of the process shares (read-only while they run).
struct Shared {
    const http::EngineConfig config;
    AppService& service;
    const LogFile* access_file;
    AccessLogFormat access_format;
    http::Executor* executor;  // hybrid: the pool; else null
    bool count;                // a /metrics reader exists: count per request
    uint32_t beat_ms;          // the watchdog's heartbeat
    std::vector<ListenFlags> listeners;  // per listening socket of a group (the addresses' order)
    const net::TlsContext* tls;          // the certificates, for the listeners that speak TLS
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
    c.max_requests_per_connection = o.max_requests_per_connection;
    c.http2 = o.http2;
    c.h2_max_streams = o.http2_max_streams;
    c.max_process_connections = o.max_connections;  // open_connections: set by serve()
    c.max_connections_per_address = o.max_connections_per_address;  // address_counts: set by serve()
    c.rate = o.rate;  // rate_table: set by serve()
    c.rate_burst = o.rate_burst ? o.rate_burst : std::max<uint32_t>(1, static_cast<uint32_t>(o.rate));
    for (const std::string& text : o.trusted_proxies) {
        net::AddressRange r;
        if (net::AddressRange::parse(text, &r)) c.trusted_proxies.push_back(r);  // validated by the config
    }
    c.forwarded_field = o.forwarded_header == "forwarded" ? http::ForwardedField::Forwarded
                                                           : http::ForwardedField::XForwardedFor;
    if (o.mpm == Mpm::Prefork) {
        c.max_connections = 1;
        c.max_requests = o.max_requests_per_worker;
    }
    return c;
}

// How the loops start: each says it is set up, then waits for the main thread to have
// written its ready byte. So no request is answered before that byte is in the pipe, and
// the supervisor reads a dead worker's pipe before it reaps it: a worker killed after its
// first answer is never taken for one that never started (its replacement would have
// been taken for a first start, which has no ready deadline).
struct LoopStart {
    explicit LoopStart(std::ptrdiff_t loops) : up(loops) {}
    std::latch up;
    std::latch go{1};
};

// The body of one loop thread: serve `group`'s sockets until drained or stopped.
void run_loop(LoopThread& self, const Shared& shared, const std::vector<int>& group, LoopStats* loop_stats,
              LoopStart& start) {
    net::Loop loop;
    app::loop_serves(loop);  // a publish() off the loops may go through this one
    // Both outlive the server's connections, which report to them.
    std::optional<AccessLog> access_log;
    if (shared.access_file) access_log.emplace(loop, *shared.access_file, shared.access_format);
    bool count = shared.count && loop_stats;
    LoopRecorder recorder(loop, access_log ? &*access_log : nullptr, loop_stats, count, shared.beat_ms);
    http::Server server(loop, shared.service, shared.config);
    if (access_log || count) server.set_observer(&recorder);
    if (shared.executor) server.set_executor(shared.executor);
    std::vector<std::unique_ptr<net::Listener>> listeners;
    for (size_t i = 0; i < group.size(); ++i) {
        ListenFlags f = i < shared.listeners.size() ? shared.listeners[i] : ListenFlags{};
        const net::TlsContext* tls = f.tls ? shared.tls : nullptr;
        listeners.push_back(std::make_unique<net::Listener>(
            loop, group[i], [&server, f, tls](int cfd, const net::PeerAddress& peer) {
                server.accept(cfd, peer, f.proxy_protocol, tls);
            }));
    }
    server.set_capacity_handler([&listeners](bool room) {
        for (auto& l : listeners) room ? l->resume() : l->pause();
    });
    server.set_budget_handler([] {
        g_recycled.store(true);
        kill(getpid(), SIGTERM);  // the main thread drains us like any stop
    });
    bool draining = false;
    loop.add_wake_hook([&] {
        if (self.drain.load() && !draining) {
            draining = true;
            for (auto& l : listeners) l->close();
            server.drain([&loop] { loop.stop(); });
        }
    });
    self.serving(&loop, &server);
    start.up.count_down();
    start.go.wait();
    try {
        loop.run();
    } catch (const std::exception& e) {
        util::log(util::LogLevel::Error, "event loop failed: %s", e.what());
    }
    self.serving(nullptr, nullptr);  // from here the server and the loop go away
    self.done.store(true);
}

// A lone server after its stop signal: serving on, the health check failing, until
// the time is up or a second signal comes. (A supervisor does this for its workers.)
void lame_duck(SharedStats& stats, const sigset_t& signals, uint32_t ms, LogFile* access) {
    stats.set_draining();
    util::log(util::LogLevel::Info, "lame duck: serving %u ms more with the health check failing", ms);
    const auto ends = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    for (;;) {  // SIGUSR1 (reopen logs) and SIGHUP do not end it, nor restart its time
        auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(ends - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        timespec wait{static_cast<time_t>(left.count() / 1'000'000'000), static_cast<long>(left.count() % 1'000'000'000)};
        int s = sigtimedwait(&signals, nullptr, &wait);
        if (s == SIGUSR1) reopen_logs(access);
        else if (s >= 0 && s != SIGHUP) break;  // a second stop signal
        else if (s < 0 && errno == EAGAIN) break;
    }
}

// After the first stop signal: every loop drains; a second signal (in a lone
// server) or the drain timeout stops them where they are.
void drain(std::vector<std::unique_ptr<LoopThread>>& loops, const sigset_t& signals, uint32_t timeout_ms, bool worker,
           LogFile* access) {
    for (auto& l : loops) {
        l->drain.store(true);
        l->if_serving([](net::Loop& loop, http::Server& server) {
            server.request_stop();
            loop.wake();
        });
    }
    timespec slice{0, 50'000'000};
    for (uint32_t waited = 0;; waited += 50) {
        bool all_done = std::all_of(loops.begin(), loops.end(), [](const auto& l) { return l->done.load(); });
        if (all_done) break;
        int s = sigtimedwait(&signals, nullptr, &slice);
        if (s == SIGUSR1) reopen_logs(access);  // a drain may be long (WebSockets): logrotate runs on
        // In a worker a repeated SIGTERM is no reason to cut requests short: it is
        // `pkill` reaching us as well as the supervisor, which escalates by itself
        // (SIGKILL after drain_timeout) when it means to.
        bool again = !worker && (s == SIGTERM || s == SIGINT);
        if (again || waited >= timeout_ms) {
            util::log(util::LogLevel::Warn, again ? "second signal: stopping now" : "drain timeout: stopping now");
            for (auto& l : loops) l->if_serving([](net::Loop& loop, http::Server&) { loop.stop(); });
            break;
        }
    }
    for (auto& l : loops) l->thread.join();
}

}  // namespace

// Blocked in every thread (the loop threads inherit the mask) and taken
// synchronously by the main thread, so no work happens in a signal handler.
sigset_t block_stop_signals(bool worker) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);  // not a stop: reopen the log files
    if (worker) {
        std::signal(SIGINT, SIG_IGN);
        std::signal(SIGHUP, SIG_IGN);  // a reload is the supervisor's; `pkill -HUP app` must not cut requests
    } else {
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGHUP);  // a lone server cannot reload: it stops gracefully (it was killed by it)
    }
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    return set;
}

int serve(const App& app, const SessionStore* sessions, const ServerOptions& opts, const FdGroups& fds, int ready_fd,
          bool worker, http::RateTable* rate, TicketSegment* tickets) {
    sigset_t stop_signals = block_stop_signals(worker);

    std::unique_ptr<LogFile> access;
    if (opts.access_log != "off") {
        access = std::make_unique<LogFile>();
        if (std::string err = access->open(opts.access_log, "access log"); !err.empty()) {
            util::log(util::LogLevel::Error, "%s", err.c_str());
            return 2;
        }
    }

    // Statistics: the supervisor's segment, or one of our own when serving alone.
    SharedStats stats = SharedStats::attach_from_env();
    int cell = stats.own_cell();
    if (!stats.valid() && !worker) {
        stats = SharedStats::create(1, static_cast<unsigned>(fds.size()));
        cell = stats.claim_cell(1);
    }

    // Hybrid: one pool per process, shared by its loops; destroyed after them.
    std::unique_ptr<PoolExecutor> pool;
    if (opts.mpm == Mpm::Hybrid) pool = std::make_unique<PoolExecutor>(opts.pool_threads, opts.pool_queue);

    std::unique_ptr<net::TlsContext> tls;
    if (std::string e = check_tls_listeners(opts); !e.empty()) {  // a reload that lost its certificate
        util::log(util::LogLevel::Error, "%s", e.c_str());
        return 2;
    }
    if (tls_configured(opts)) {
        std::string err;
        tls = make_tls_context(opts, &err);
        if (!tls) {
            util::log(util::LogLevel::Error, "%s", err.c_str());
            return 2;
        }
        if (tickets) tls->use_ticket_keys(tickets, static_cast<long>(opts.tls_ticket_rotate_s));
    }
    std::atomic<bool> draining{false};
    AppService service(app, opts, stats, sessions, opts.rate > 0 ? rate : nullptr, draining);
    std::atomic<size_t> open_connections{0};  // limits.max_connections: every loop of this process
    http::EngineConfig config = engine_config(opts);
    config.open_connections = &open_connections;
    http::AddressCounts address_counts;  // limits.max_connections_per_address: every loop of this process
    config.address_counts = &address_counts;
    config.rate_table = rate;  // limits.rate: every worker of the node
    // Counting costs two clock reads and a few atomic adds per request: only when
    // something reads the counts. The heartbeat (for the watchdog) is always on.
    const Shared shared{config, service, access.get(),
                        opts.access_log_format == "json" ? AccessLogFormat::Json : AccessLogFormat::Combined,
                        pool.get(), !opts.metrics_path.empty(),
                        opts.watchdog_timeout_ms ? std::clamp(opts.watchdog_timeout_ms / 4, 50u, 1000u) : 1000u,
                        listener_flags(opts), tls.get()};
    // Each loop's listeners close their descriptors when it drains. A socket in more
    // than one group (a unix listener: every loop accepts on it) gets a descriptor
    // per loop; closed by two loops at once, the one number was closed twice (TSan).
    FdGroups own = fds;
    std::vector<int> seen;
    for (auto& group : own)
        for (int& fd : group) {
            if (std::find(seen.begin(), seen.end(), fd) == seen.end()) seen.push_back(fd);
            else if (int own_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0); own_fd >= 0) fd = own_fd;
        }
    std::vector<std::unique_ptr<LoopThread>> loops;
    LoopStart start(static_cast<std::ptrdiff_t>(own.size()));
    for (size_t i = 0; i < own.size(); ++i) {
        LoopStats* loop_stats = cell >= 0 ? stats.loop(static_cast<unsigned>(cell), static_cast<unsigned>(i)) : nullptr;
        auto& l = *loops.emplace_back(std::make_unique<LoopThread>());
        l.thread = std::thread([&l, &shared, &group = own[i], loop_stats, &start] {
            run_loop(l, shared, group, loop_stats, start);
        });
    }
    start.up.wait();
    if (!worker) sd_notify("READY=1");  // a lone server; a supervisor says it for its workers
    if (ready_fd >= 0) {  // tell the supervisor we serve
        ssize_t ignored = ::write(ready_fd, "R", 1);
        (void)ignored;
        ::close(ready_fd);
    }
    start.go.count_down();

    int sig;
    bool rotating = !worker && tickets && tls;  // a lone server keeps its own ticket keys fresh
    const auto period = std::chrono::seconds(opts.tls_ticket_rotate_s);
    auto rotate_at = std::chrono::steady_clock::now() + period;  // fixed times: a signal does not restart it
    for (;;) {
        if (rotating) {
            auto now = std::chrono::steady_clock::now();
            if (now >= rotate_at) {
                tickets->rotate();
                rotate_at += period;
                if (rotate_at <= now) rotate_at = now + period;  // (a clock that jumped: no burst)
                continue;
            }
            auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(rotate_at - now);
            timespec wait{static_cast<time_t>(left.count() / 1'000'000'000), static_cast<long>(left.count() % 1'000'000'000)};
            sig = sigtimedwait(&stop_signals, nullptr, &wait);
            if (sig < 0) continue;  // the time came (EAGAIN), or EINTR
        } else {
            sig = sigwaitinfo(&stop_signals, nullptr);
        }
        if (sig == SIGUSR1) {
            reopen_logs(access.get());
        } else if (sig >= 0) {
            break;
        }
    }
    if (sig == SIGHUP)  // (a lone server's: a worker ignores it)
        util::log(util::LogLevel::Warn,
                  "SIGHUP: a lone server (workers = 0) cannot reload: stopping gracefully, with exit status %d, for "
                  "whatever started it to start it again (with workers = 1 or more, SIGHUP reloads)",
                  128 + SIGHUP);
    else if (!worker)
        util::log(util::LogLevel::Info, "received %s, stopping gracefully", strsignal(sig));
    draining.store(true);
    if (!worker) sd_notify("STOPPING=1");
    if (!worker && opts.lame_duck_ms) lame_duck(stats, stop_signals, opts.lame_duck_ms, access.get());
    const auto drain_ends = std::chrono::steady_clock::now() + std::chrono::milliseconds(opts.drain_timeout_ms);
    drain(loops, stop_signals, opts.drain_timeout_ms, worker, access.get());
    // Handlers on the pool (hybrid) and kiln::blocking jobs may run on after the loops
    // ended: their clients left, or the drain ran out. They may use by reference what
    // main() owns, so no return to it before they end, nor past the drain's time:
    // then the process exits without them (joining them could hang the stop). The
    // logs were flushed by the loops.
    auto idle_by_drain_end = [&](auto busy) {
        while (busy() > 0 && std::chrono::steady_clock::now() < drain_ends)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return busy() == 0;
    };
    // A lone server's SIGHUP: the status its default action gave, but after a drain.
    const int status = sig == SIGHUP ? 128 + SIGHUP : g_recycled.load() ? kExitRecycled : 0;
    if (pool && !idle_by_drain_end([&] { return pool->busy(); })) {
        util::log(util::LogLevel::Warn, "abandoning %zu handlers still running", pool->busy());
        _exit(status);
    }
    if (!idle_by_drain_end(&app::blocking_jobs)) {
        util::log(util::LogLevel::Warn, "abandoning %zu blocking jobs still running", app::blocking_jobs());
        _exit(status);
    }
    return status;
}

}  // namespace kiln::server
