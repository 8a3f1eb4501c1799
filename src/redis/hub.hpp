// Pub/sub for one Client: a connection of its own (a subscribed connection takes no
// other commands), made when the first subscribe() comes. Each channel is
// SUBSCRIBEd once however many Subscriptions it has, and UNSUBSCRIBEd when its last
// one goes. A lost connection tells every subscription once (its next next()
// throws Error(Io): what was published meanwhile is missed), then reconnects with
// the pool's back-off and subscribes again to every channel by itself.
#pragma once
#include <deque>
#include <exception>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <kiln/redis.hpp>

#include "redis/pool.hpp"

namespace kiln::redis::detail {

struct SubscriptionState {
    static constexpr size_t kMaxQueued = 65536;  // then the oldest go, and next() says so
    static constexpr size_t kMaxQueuedBytes = size_t{64} << 20;  // the same past 64 MiB of payloads

    Hub* hub;  // null once the Client is gone
    std::string channel;
    std::deque<Message> queue;
    size_t queued_bytes = 0;  // channel and payload of each queued message
    size_t dropped = 0;
    std::exception_ptr error;  // the connection was lost since the last next()
    size_t error_after = 0;    // messages queued before the loss: next() gives them first
    Op* waiter = nullptr;      // the next() suspended on it (a reference held)

    void push(Message m);
    Message pop();
    void fail(std::exception_ptr e);
    void wake();
};

class Hub final : public Connection::Owner {
public:
    Hub(net::Loop& loop, const Endpoint& endpoint, const Options& options);
    ~Hub();

    // Registers s and sends SUBSCRIBE; the Command answers once Redis confirmed it
    // (or fails at once while the connection is down and waiting to retry).
    Command subscribe(SubscriptionState* s);
    void unsubscribe(SubscriptionState* s);
    net::Loop& loop() const { return loop_; }

    void up(Connection& c) override;
    void down(Connection& c, const std::string& message) override;
    void message(Connection& c, std::string channel, std::string payload) override;
    void subscribed(Connection& c, const std::string& channel) override;

private:
    void open();

    net::Loop& loop_;
    const Endpoint& endpoint_;
    const Options& options_;
    Link link_;
    bool was_up_ = false;  // up since the last loss was reported
    std::map<std::string, std::vector<SubscriptionState*>, std::less<>> channels_;
    std::set<std::string, std::less<>> confirmed_;                 // SUBSCRIBE took effect
    std::map<std::string, std::vector<Op*>, std::less<>> confirms_;  // waiting for it (references held)
};

}  // namespace kiln::redis::detail
