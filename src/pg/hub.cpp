#include "pg/hub.hpp"

#include <algorithm>

#include "pg/errors.hpp"
#include "pg/op.hpp"

namespace kiln::pg::detail {

// ------------------------------------------------------------------ ListenerState

size_t ListenerState::cost(const Notification& n) { return n.channel.size() + n.payload.size() + 64; }

void ListenerState::push(Notification n) {
    queued_bytes += cost(n);
    queue.push_back(std::move(n));
    while (queue.size() > kMaxQueued || queued_bytes > kMaxQueuedBytes) {
        queued_bytes -= cost(queue.front());
        queue.pop_front();
        ++dropped;
    }
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
    reconnect_.retry.owner = this;
    reconnect_.retry.fire = [](net::Deadline* d) { static_cast<Hub*>(d->owner)->open(); };
    probe_.owner = this;
    probe_.fire = [](net::Deadline* d) { static_cast<Hub*>(d->owner)->probe(); };
    open();
}

Hub::~Hub() {
    loop_.deadlines().disarm(reconnect_.retry);
    loop_.deadlines().disarm(probe_);
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

void Hub::probe() {
    if (!conn_ || conn_->dead()) return;  // down: up() arms it again
    loop_.deadlines().arm(probe_, loop_.now_ms() + spec_.reply_timeout_ms);
    Query dropped = submit("SELECT 1");  // a loss inside it (down) disarms the probe again
}

Query Hub::send(const char* verb, const std::string& channel) {
    std::string sql = std::string(verb) + " \"";
    for (char c : channel) sql += c == '"' ? std::string("\"\"") : std::string(1, c);
    sql += '"';
    return submit(std::move(sql), /*keep=*/false);  // one statement per channel would pile up
}

Query Hub::submit(std::string sql, bool keep) {
    Op* op = new Op(loop_);
    Query q(op);
    if (conn_ && !conn_->dead()) {
        conn_->submit(op, sql, keep);
    } else {
        op->fail(io_error(reconnect_.unavailable(loop_, "no connection to PostgreSQL for LISTEN"), sql));
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
    reconnect_.recovered(loop_);
    if (spec_.reply_timeout_ms) loop_.deadlines().arm(probe_, loop_.now_ms() + spec_.reply_timeout_ms);
    for (const auto& [channel, states] : channels_) Query again = send("LISTEN", channel);
}

void Hub::down(Connection& c, const std::string& message) {
    if (&c != conn_.get()) return;
    loop_.destroy_later(conn_.release());
    loop_.deadlines().disarm(probe_);
    if (std::exchange(was_up_, false)) {  // once per outage, not per failed retry
        for (auto& [channel, states] : channels_)
            for (ListenerState* s : states)
                s->fail(io_error(message + "; notifications sent until it is back are missed (it listens again by itself)"));
    }
    reconnect_.lost(loop_, message, options_.reconnect_min, options_.reconnect_max);
}

void Hub::notified(Connection&, const char* channel, const char* payload, int pid) {
    auto it = channels_.find(std::string_view(channel));
    if (it == channels_.end()) return;  // UNLISTENed meanwhile
    for (ListenerState* s : it->second) s->push(Notification{channel, payload, pid});
}

}  // namespace kiln::pg::detail
