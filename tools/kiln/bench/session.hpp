// One batch of the study: a browser-like session with its own connection and
// cookie jar, sending its requests one after another (no pipelining):
//   page, then (once per session, -g/-f) each asset of the page, then (-u) an
//   upload, then the page again, ... until its request budget (-r), the deadline
//   (-d) or a stop. Cookies are kept across reconnects, so a server finds the
//   session again on a new connection. -c decides when the client drops the
//   connection: after every request, never, or after 40-167 requests (uniform).
// A request that fails is counted by kind; the next request opens a new
// connection. Owned by one loop thread; every entry point runs on that thread.
#pragma once
#include <netinet/in.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/connection.hpp"
#include "bench/cookies.hpp"
#include "bench/options.hpp"
#include "bench/request.hpp"
#include "bench/response_parser.hpp"
#include "bench/stats.hpp"

namespace kiln::bench {

using Clock = std::chrono::steady_clock;

// What every session of a run shares, read-only.
struct RunPlan {
    const BenchOptions* options = nullptr;
    const RequestTemplates* templates = nullptr;
    sockaddr_in addr{};
    bool has_deadline = false;
    Clock::time_point deadline{};
    std::vector<std::string> fixed_targets;   // -f
    std::vector<std::string> fixed_prefixes;  // their request lines + common lines
};

// What the sessions of one loop thread share.
struct LoopContext {
    int epfd = -1;
    Stats* stats = nullptr;
    const std::atomic<bool>* stop = nullptr;  // SIGINT
    int active = 0;                           // sessions not yet finished
};

class Session {
public:
    Session(const RunPlan& plan, LoopContext& loop, int index);
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    void start(Clock::time_point now);
    void on_event(uint32_t epoll_events);
    // Timeouts, connect retries, deadline and stop. Called every few milliseconds.
    void on_tick(Clock::time_point now);
    bool finished() const { return state_ == State::Finished; }

private:
    enum class Kind : uint8_t { Page, Asset, Upload };
    enum class State : uint8_t { Idle, Connecting, Writing, Reading, WaitRetry, Finished };

    void advance(Clock::time_point now);
    void begin_request(Clock::time_point now);
    void send();
    void on_readable();
    bool process();
    void on_head();
    void complete();
    void fail(Failure f, const char* detail);
    void finish();
    void next_kind();
    const char* target() const;
    uint64_t random();

    const RunPlan& plan_;
    LoopContext& loop_;
    Stats& stats_;
    const int index_;
    Connection conn_;
    ResponseParser parser_;
    CookieJar jar_;
    State state_ = State::Idle;
    Kind kind_ = Kind::Page;
    Clock::time_point started_{}, now_{}, retry_at_{};
    uint64_t sent_ = 0;              // requests started (the -r budget)
    uint64_t reqs_on_conn_ = 0;
    uint64_t disconnect_after_ = 0;  // -c 2: requests on this connection before dropping it
    uint64_t response_bytes_ = 0;    // bytes received for the current request
    bool close_after_ = false;       // the current request carries Connection: close
    bool collect_body_ = false;      // keep the page body to find its assets
    bool assets_known_ = false;
    size_t asset_next_ = 0;
    const std::vector<std::string>* asset_targets_ = nullptr;
    const std::vector<std::string>* asset_prefixes_ = nullptr;
    std::vector<std::string> own_targets_, own_prefixes_;
    std::string page_body_;
    uint64_t rng_;
};

}  // namespace kiln::bench
