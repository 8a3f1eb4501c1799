#include "pg/hub.hpp"

#include <algorithm>

#include "pg/errors.hpp"
#include "pg/op.hpp"

namespace kiln::pg::detail {

// ------------------------------------------------------------------ ListenerState

void ListenerState::push(Notification n) {
    if (queue.size() >= kMaxQueued) {
        queue.pop_front();
        ++dropped;
    }
    queue.push_back(std::move(n));
    wake();
}

void ListenerState::fail(std::exception_ptr e) {
    if (!error) error = std::move(e);  // the first loss is the one to report
    wake();
}

void ListenerState::wake() {
    if (!waiter) return;
    Op* w = std::exchange(waiter, nullptr);
    w->finish();
    w->release();
}

// ------------------------------------------------------------------ Hub

Hub::Hub(net::Loop& loop, const ConnectSpec& spec, const Options& options)
    : loop_(loop), spec_(spec), options_(options) {
    retry_.owner = this;
    retry_.fire = [](net::Deadline* d) { static_cast<Hub*>(d->owner)->open(); };
    open();
}

Hub::~Hub() {
    loop_.deadlines().disarm(retry_);
    conn_.reset();
    for (auto& [channel, states] : channels_) {
        for (ListenerState* s : states) {
            s->hub = nullptr;
            s->fail(io_error("the PostgreSQL client was closed"));
        }
    }
}

void Hub::open() {
    conn_ = std::make_unique<Connection>(loop_, *this, spec_);
    conn_->start();  // may report down() at once, which arms the retry
}

Query Hub::send(const char* verb, const std::string& channel) {
    std::string sql = std::string(verb) + " \"";
    for (char c : channel) sql += c == '"' ? std::string("\"\"") : std::string(1, c);
    sql += '"';
    Op* op = new Op(loop_);
    Query q(op);
    if (conn_ && !conn_->dead()) {
        conn_->submit(op, sql);
    } else {
        std::string message = "no connection to PostgreSQL for LISTEN";
        if (!last_error_.empty()) message += " (last: " + last_error_ + ")";
        op->fail(io_error(std::move(message), sql));
    }
    return q;
}

Query Hub::subscribe(ListenerState* s) {
    channels_[s->channel].push_back(s);
    return send("LISTEN", s->channel);  // again for a known channel: its answer is the wait
}

void Hub::unsubscribe(ListenerState* s) {
    auto it = channels_.find(s->channel);
    if (it == channels_.end()) return;
    std::erase(it->second, s);
    if (!it->second.empty()) return;
    channels_.erase(it);
    Query dropped = send("UNLISTEN", s->channel);
}

void Hub::up(Connection&) {
    was_up_ = true;
    backoff_ms_ = 0;
    last_error_.clear();
    for (const auto& [channel, states] : channels_) Query again = send("LISTEN", channel);
}

void Hub::down(Connection& c, const std::string& message) {
    if (&c != conn_.get()) return;
    loop_.destroy_later(conn_.release());
    last_error_ = message;
    if (std::exchange(was_up_, false)) {  // once per outage, not per failed retry
        for (auto& [channel, states] : channels_)
            for (ListenerState* s : states)
                s->fail(io_error(message + "; notifications sent until it is back are missed (it listens again by itself)"));
    }
    uint64_t min = static_cast<uint64_t>(std::max<int64_t>(options_.reconnect_min.count(), 1));
    uint64_t max = static_cast<uint64_t>(std::max<int64_t>(options_.reconnect_max.count(), 1));
    backoff_ms_ = backoff_ms_ == 0 ? min : std::min(backoff_ms_ * 2, max);
    loop_.deadlines().arm(retry_, loop_.now_ms() + backoff_ms_);
}

void Hub::notified(Connection&, const char* channel, const char* payload, int pid) {
    auto it = channels_.find(std::string_view(channel));
    if (it == channels_.end()) return;  // UNLISTENed meanwhile
    for (ListenerState* s : it->second) s->push(Notification{channel, payload, pid});
}

}  // namespace kiln::pg::detail
