#include "redis/hub.hpp"

#include <algorithm>

namespace kiln::redis::detail {

// ------------------------------------------------------------------ SubscriptionState

void SubscriptionState::push(Message m) {
    const size_t bytes = m.channel.size() + m.payload.size();
    while (!queue.empty() && (queue.size() >= kMaxQueued || queued_bytes + bytes > kMaxQueuedBytes)) {
        pop();
        ++dropped;
    }
    queued_bytes += bytes;
    queue.push_back(std::move(m));
    wake();
}

Message SubscriptionState::pop() {
    Message m = std::move(queue.front());
    queue.pop_front();
    queued_bytes -= m.channel.size() + m.payload.size();
    if (error_after > 0) --error_after;
    return m;
}

void SubscriptionState::fail(std::exception_ptr e) {
    if (!error) {  // the first loss is the one to report, after what came before it
        error = std::move(e);
        error_after = queue.size();
    }
    wake();
}

void SubscriptionState::wake() {
    if (!waiter) return;
    Op* w = std::exchange(waiter, nullptr);
    w->finish();
    w->release();
}

// ------------------------------------------------------------------ Hub

Hub::Hub(net::Loop& loop, const Endpoint& endpoint, const Options& options)
    : loop_(loop), endpoint_(endpoint), options_(options) {
    link_.retry.owner = this;
    link_.retry.fire = [](net::Deadline* d) { static_cast<Hub*>(d->owner)->open(); };
    open();
}

Hub::~Hub() {
    loop_.deadlines().disarm(link_.retry);
    link_.conn.reset();
    for (auto& [channel, ops] : confirms_) {
        for (Op* op : ops) {
            op->fail(io_error("the Redis client was closed"));
            op->release();
        }
    }
    for (auto& [channel, states] : channels_) {
        for (SubscriptionState* s : states) {
            s->hub = nullptr;
            s->fail(io_error("the Redis client was closed"));
        }
    }
}

void Hub::open() {
    link_.conn = std::make_unique<Connection>(loop_, *this, endpoint_, options_, Connection::Mode::Subscriber);
    link_.conn->start();  // may report down() at once, which arms the retry
    if (link_.conn && !link_.conn->dead())
        for (auto& [channel, states] : channels_) link_.conn->subscription("SUBSCRIBE", channel);
}

Command Hub::subscribe(SubscriptionState* s) {
    Op* op = new Op(loop_);
    Command cmd(op);
    auto& states = channels_[s->channel];
    states.push_back(s);
    if (confirmed_.count(s->channel)) {
        op->finish();
    } else if (!link_.conn || link_.conn->dead()) {
        op->fail(io_error(link_.unavailable(loop_)));  // it stays registered: subscribed again on reconnect
    } else {
        auto& waiting = confirms_[s->channel];
        if (waiting.empty() && states.size() == 1) link_.conn->subscription("SUBSCRIBE", s->channel);
        op->hold();
        waiting.push_back(op);
    }
    return cmd;
}

void Hub::unsubscribe(SubscriptionState* s) {
    auto it = channels_.find(s->channel);
    if (it == channels_.end()) return;
    auto& v = it->second;
    v.erase(std::remove(v.begin(), v.end(), s), v.end());
    if (!v.empty()) return;
    channels_.erase(it);
    confirmed_.erase(s->channel);
    if (auto w = confirms_.find(s->channel); w != confirms_.end()) {  // nobody left to tell
        for (Op* op : w->second) {
            op->fail(io_error("unsubscribed before Redis confirmed"));
            op->release();
        }
        confirms_.erase(w);
    }
    if (link_.conn && !link_.conn->dead()) link_.conn->subscription("UNSUBSCRIBE", s->channel);
}

void Hub::up(Connection&) {
    link_.recovered(loop_);  // connected; up for the listeners once Redis confirms a SUBSCRIBE
}

void Hub::subscribed(Connection&, const std::string& channel) {
    if (!channels_.count(channel)) return;  // unsubscribed meanwhile
    // Up only now: a stopped server still accepts TCP connections, and a loss
    // between a connect and an answer is the same outage, reported once.
    was_up_ = true;
    confirmed_.insert(channel);
    auto it = confirms_.find(channel);
    if (it == confirms_.end()) return;
    for (Op* op : it->second) {
        op->finish();
        op->release();
    }
    confirms_.erase(it);
}

void Hub::down(Connection&, const std::string& message) {
    confirmed_.clear();
    for (auto& [channel, ops] : std::exchange(confirms_, {})) {
        for (Op* op : ops) {
            op->fail(io_error("connection to Redis lost: " + message));
            op->release();
        }
    }
    if (was_up_) {  // once per outage, not once per failed attempt
        was_up_ = false;
        for (auto& [channel, states] : channels_)
            for (SubscriptionState* s : states)
                s->fail(io_error("connection to Redis lost (messages published until it is back are missed): " + message));
    }
    link_.lost(loop_, options_, message);
}

void Hub::message(Connection&, std::string channel, std::string payload) {
    auto it = channels_.find(channel);
    if (it == channels_.end()) return;
    for (size_t i = 0; i < it->second.size(); ++i) {
        SubscriptionState* s = it->second[i];
        bool last = i + 1 == it->second.size();
        s->push(Message{last ? std::move(channel) : channel, last ? std::move(payload) : payload});
    }
}

}  // namespace kiln::redis::detail
