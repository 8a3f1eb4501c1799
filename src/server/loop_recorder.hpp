// One event loop's observer of the engine: feeds its access-log writer and its
// block of the shared statistics, and beats the loop's heartbeat (read by the
// supervisor's watchdog) from a timer, which stops when the loop is stuck.
// Lives on its loop's thread.
#pragma once
#include <atomic>
#include <cstdint>

#include "http/server.hpp"
#include "net/loop.hpp"
#include "server/access_log.hpp"
#include "server/stats.hpp"

namespace kiln::server {

class LoopRecorder final : public http::Observer {
public:
    LoopRecorder(net::Loop& loop, AccessLog* log, LoopStats* stats, bool count, uint32_t beat_ms)
        : loop_(loop), log_(log), stats_(stats), count_(count), beat_ms_(beat_ms) {
        beat_.owner = this;
        beat_.fire = [](net::Timer* t) { static_cast<LoopRecorder*>(t->owner)->beat(); };
        beat();
    }
    ~LoopRecorder() { beat_.disarm(); }
    void on_response(const Record& r) override {
        if (count_) stats_->record(r.status, r.elapsed_us);
        if (log_) log_->on_response(r);
    }
    void on_open() override {
        if (count_) stats_->open_connections.fetch_add(1, std::memory_order_relaxed);
    }
    void on_close() override {
        if (count_) stats_->open_connections.fetch_sub(1, std::memory_order_relaxed);
    }
private:
    void beat() {
        if (stats_) stats_->heartbeat_ms.store(loop_.now_ms(), std::memory_order_relaxed);
        loop_.timers(beat_ms_).arm(beat_, loop_.now_ms());
    }
    net::Loop& loop_;
    AccessLog* log_;
    LoopStats* stats_;
    bool count_;
    uint32_t beat_ms_;
    net::Timer beat_;
};

}  // namespace kiln::server
