// Benchmark threads, progress line and result (see the header).
#include "bench/runner.hpp"

#include <arpa/inet.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/assets.hpp"
#include "bench/report.hpp"
#include "bench/request.hpp"
#include "bench/session.hpp"

namespace kiln::bench {
namespace {

constexpr auto kTick = std::chrono::milliseconds(10);  // timeouts, retries, deadline
constexpr int kMaxEvents = 256;

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void on_sigint(int) { g_stop.store(true, std::memory_order_relaxed); }

struct LoopThread {
    LoopContext ctx;
    Stats stats;
    std::vector<std::unique_ptr<Session>> sessions;
    Clock::time_point ended{};
    std::atomic<bool> done{false};
};

void run_loop(LoopThread& t) {
    Clock::time_point now = Clock::now();
    for (auto& s : t.sessions) s->start(now);
    epoll_event events[kMaxEvents];
    Clock::time_point next_tick = now + kTick;
    while (t.ctx.active > 0) {
        now = Clock::now();
        auto wait = std::chrono::ceil<std::chrono::milliseconds>(next_tick - now).count();
        int n = ::epoll_wait(t.ctx.epfd, events, kMaxEvents, wait > 0 ? static_cast<int>(wait) : 0);
        for (int i = 0; i < n; ++i) static_cast<Session*>(events[i].data.ptr)->on_event(events[i].events);
        now = Clock::now();
        if (now >= next_tick) {
            for (auto& s : t.sessions) s->on_tick(now);
            next_tick = now + kTick;
        }
    }
    t.ended = Clock::now();
    t.done.store(true, std::memory_order_release);
}

void raise_fd_limit(int batches) {
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
    rlim_t want = static_cast<rlim_t>(batches) + 64;
    if (lim.rlim_cur >= want) return;
    lim.rlim_cur = lim.rlim_max == RLIM_INFINITY || lim.rlim_max > want ? want : lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
}

// "\r[  3 s] 123,456 ok, 0 failed, 41,152 req/s" on stderr, overwritten each second.
void progress(std::vector<std::unique_ptr<LoopThread>>& threads, Clock::time_point start) {
    uint64_t last_ok = 0;
    Clock::time_point last = start;
    for (;;) {
        for (int i = 0; i < 20; ++i) {  // wake every 50 ms to notice the end
            bool all = true;
            for (auto& t : threads) all = all && t->done.load(std::memory_order_acquire);
            if (all) {
                std::fputs("\r\033[K", stderr);
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        uint64_t ok = 0, failed = 0;
        for (auto& t : threads) {
            ok += t->stats.progress_ok.load(std::memory_order_relaxed);
            failed += t->stats.progress_failed.load(std::memory_order_relaxed);
        }
        Clock::time_point now = Clock::now();
        double secs = std::chrono::duration<double>(now - last).count();
        double rate = secs > 0 ? static_cast<double>(ok - last_ok) / secs : 0;
        std::fprintf(stderr, "\r\033[K[%4.0f s] %s ok, %s failed, %s req/s",
                     std::chrono::duration<double>(now - start).count(), format_count(ok).c_str(),
                     format_count(failed).c_str(), format_fixed(rate, 0).c_str());
        std::fflush(stderr);
        last_ok = ok;
        last = now;
    }
}

}  // namespace

int run_bench(const BenchOptions& o) {
    RequestTemplates templates(o.target);
    RunPlan plan;
    plan.options = &o;
    plan.templates = &templates;
    plan.addr.sin_family = AF_INET;
    plan.addr.sin_port = htons(o.target.port);
    plan.addr.sin_addr.s_addr = o.target.ipv4;
    if (o.fixed_assets) {
        plan.fixed_targets = fixed_assets();
        for (const std::string& t : plan.fixed_targets) plan.fixed_prefixes.push_back(templates.get_prefix(t));
    }
    raise_fd_limit(o.batches);

    int nthreads = o.threads > 0 ? (o.threads < o.batches ? o.threads : o.batches) : default_threads(o.batches);
    std::vector<std::unique_ptr<LoopThread>> threads;
    for (int i = 0; i < nthreads; ++i) {
        auto t = std::make_unique<LoopThread>();
        t->ctx.epfd = ::epoll_create1(EPOLL_CLOEXEC);
        if (t->ctx.epfd < 0) {
            std::fprintf(stderr, "kiln bench: epoll_create1: %s\n", std::strerror(errno));
            return 1;
        }
        t->ctx.stats = &t->stats;
        t->ctx.stop = &g_stop;
        threads.push_back(std::move(t));
    }
    for (int b = 0; b < o.batches; ++b) {
        LoopThread& t = *threads[static_cast<size_t>(b % nthreads)];
        t.sessions.push_back(std::make_unique<Session>(plan, t.ctx, b));
    }

    g_stop.store(false);
    struct sigaction sa{}, old_sa{};
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESETHAND;  // a second Ctrl-C ends the process at once
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_sa);

    Clock::time_point start = Clock::now();
    if (o.duration_s > 0) {
        plan.has_deadline = true;
        plan.deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration_s));
    }
    std::vector<std::thread> workers;
    for (auto& t : threads) workers.emplace_back(run_loop, std::ref(*t));
    if (isatty(STDERR_FILENO) && !o.verbose) progress(threads, start);
    for (auto& w : workers) w.join();
    ::sigaction(SIGINT, &old_sa, nullptr);

    Stats total;
    Clock::time_point end = start;
    for (auto& t : threads) {
        total.merge(t->stats);
        if (t->ended > end) end = t->ended;
        ::close(t->ctx.epfd);
    }
    RunResult result;
    result.stats = &total;
    result.elapsed_ms = std::chrono::duration<double, std::milli>(end - start).count();
    result.threads = nthreads;
    std::string out = o.json ? json_report(o, result) + "\n" : text_report(o, result);
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
    return total.failed_total() == 0 ? 0 : 1;
}

}  // namespace kiln::bench
