// App::run: binds the listeners, starts one event loop per thread, and stops
// gracefully on SIGINT/SIGTERM (stop accepting, let in-flight requests finish for
// up to drain_timeout, then exit; a second signal stops at once). Signals are
// blocked in every thread and taken synchronously by the main thread with
// sigtimedwait, so no work happens in a signal handler.
// (The multi-process supervisor is a later layer; this runs one process.)
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

#include <kiln/app.hpp>
#include <kiln/server.hpp>

#include "http/server.hpp"
#include "net/listener.hpp"
#include "net/loop.hpp"
#include "util/log.hpp"

namespace kiln {
namespace {

class AppService final : public http::Service {
public:
    explicit AppService(const App& app) : app_(app) {}
    size_t prepare(Request& req) override { return app_.prepare(req); }
    void handle(Request& req, Response& res) override { app_.handle(req, res); }
private:
    const App& app_;
};

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

}  // namespace

int App::run(int argc, char** argv) {
    ServerOptions options;
    int status = 0;
    if (!parse_server_flags(argc, argv, &options, &status)) return status;
    return run(options);
}

int App::run(const ServerOptions& options) {
    util::set_log_enabled(options.log_errors);
    std::signal(SIGPIPE, SIG_IGN);
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);  // inherited by the loop threads

    unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    ServerOptions opts = options;
    std::string err;
    if (opts.port != 0 && !port_is_free(opts, &err)) {
        std::fprintf(stderr, "kiln: %s\n", err.c_str());
        return 2;
    }
    std::vector<int> fds;
    for (unsigned i = 0; i < threads; ++i) {
        net::ListenResult l = net::listen_tcp(opts.host, opts.port, opts.backlog, true);
        if (l.fd < 0) {
            std::fprintf(stderr, "kiln: %s\n", l.error.c_str());
            for (int fd : fds) ::close(fd);
            return 2;
        }
        if (opts.port == 0) opts.port = bound_port(l.fd);  // the others join the picked port
        fds.push_back(l.fd);
    }
    std::fprintf(stderr, "kiln: listening on http://%s:%u with %u thread%s\n",
                 opts.host.find(':') != std::string::npos ? ("[" + opts.host + "]").c_str() : opts.host.c_str(),
                 opts.port, threads, threads == 1 ? "" : "s");

    const http::EngineConfig config = engine_config(opts);
    AppService service(*this);
    std::vector<std::unique_ptr<Worker>> workers;
    std::latch started(threads);
    for (unsigned i = 0; i < threads; ++i) {
        auto w = std::make_unique<Worker>();
        Worker* wp = w.get();
        int fd = fds[i];
        w->thread = std::thread([wp, fd, &config, &service, &started] {
            net::Loop loop;
            http::Server server(loop, service, config);
            net::Listener listener(loop, fd, [&server](int cfd) { server.accept(cfd); });
            loop.set_on_wake([&] {
                if (wp->drain.load() && listener.open()) {
                    listener.close();
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

    // Wait for the first stop signal, then drain; a second signal or the drain
    // timeout stops the loops where they are.
    int sig = sigwaitinfo(&stop_signals, nullptr);
    util::log(util::LogLevel::Info, "received %s, stopping gracefully", strsignal(sig));
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
        bool again = sigtimedwait(&stop_signals, nullptr, &slice) > 0;
        if (again || waited >= opts.drain_timeout_ms) {
            util::log(util::LogLevel::Warn, again ? "second signal: stopping now" : "drain timeout: stopping now");
            for (auto& w : workers) w->loop->stop();
            break;
        }
    }
    for (auto& w : workers) w->thread.join();
    return 0;
}

}  // namespace kiln
