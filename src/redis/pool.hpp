// A Client's connections on its loop thread: `pool` slots, each holding one
// Connection or waiting to retry. A command goes to the ready connection carrying
// the fewest commands, else to one still connecting (it waits for that attempt),
// else fails at once with Error(Io) naming the last failure: a request never hangs
// on a Redis that is down. A lost connection is retried after a back-off
// (reconnect_min, doubling to reconnect_max, reset by a success) on the loop's
// deadline heap, whether or not commands are waiting.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <kiln/redis.hpp>

#include "net/deadline_heap.hpp"
#include "net/loop.hpp"
#include "net/reconnect.hpp"
#include "redis/connection.hpp"

namespace kiln::redis::detail {

class Hub;

// A reconnecting connection: what a pool slot and the subscription hub share.
struct Link : net::Reconnect {
    std::unique_ptr<Connection> conn;  // null while waiting to retry

    // The connection ended: it goes at the end of this iteration, and a retry is armed.
    void lost(net::Loop& loop, const Options& options, const std::string& message) {
        loop.destroy_later(conn.release());  // reported from inside its own calls
        net::Reconnect::lost(loop, message, options.reconnect_min, options.reconnect_max);
    }
    std::string unavailable(const net::Loop& loop) const { return net::Reconnect::unavailable(loop, "no connection to Redis"); }
};

class Pool final : public Connection::Owner {
public:
    explicit Pool(Options options);  // throws Error(Misuse) for a bad URL
    ~Pool();

    // REQUIRES: on a loop thread; binds the pool to it on first use.
    Command send(Args& args);
    Hub& hub();
    size_t connected() const;
    const Options& options() const { return options_; }
    const Endpoint& endpoint() const { return endpoint_; }

    void up(Connection& c) override;
    void down(Connection& c, const std::string& message) override;

private:
    struct Slot : Link {
        Pool* pool;
    };
    void bind();
    void open(Slot& s);
    Slot* slot_of(Connection& c);
    // The lightest usable connection; with `ordered`, the first usable one in slot
    // order (the same while it stays up), so what keeps order takes one path.
    Connection* pick(bool ordered = false);

    Options options_;
    Endpoint endpoint_;
    net::Loop* loop_ = nullptr;
    std::vector<std::unique_ptr<Slot>> slots_;
    std::unique_ptr<Hub> hub_;
};

}  // namespace kiln::redis::detail
