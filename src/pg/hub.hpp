// LISTEN/NOTIFY for one Client: a session of its own (queries never wait behind a
// listener, and a listener never loses its subscriptions to a pool reshuffle), made
// when the first listen() comes. Each channel is LISTENed once however many
// Listeners it has, and UNLISTENed when its last one goes. A lost session tells
// every listener once (its next next() throws db::Error(Io): what was sent meanwhile
// is missed), then reconnects with the pool's back-off and LISTENs again to every
// channel by itself.
//
// A LISTEN session only waits, so the reply timeout, which counts only while answers
// are owed, would never see it go silent (a stopped server, a host gone without a RST).
// So while it is up it sends a SELECT 1 every reply_timeout_ms: a server silent that
// long is noticed within twice that, and the session is lost and made again as above.
#pragma once
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <kiln/pg.hpp>

#include "net/deadline_heap.hpp"
#include "net/loop.hpp"
#include "net/reconnect.hpp"
#include "pg/connection.hpp"

namespace kiln::pg::detail {

class Hub;

// One Listener's side: what arrived and was not read yet.
struct ListenerState {
    static constexpr size_t kMaxQueued = 65536;  // then the oldest go, and next() says so
    static constexpr size_t kMaxQueuedBytes = size_t{64} << 20;  // likewise (payloads reach 8,000 bytes)

    Hub* hub;  // null once the Client is gone
    std::string channel;
    std::deque<Notification> queue;
    size_t queued_bytes = 0;    // of the payloads and channel names in queue
    size_t dropped = 0;         // notifications lost to the bounds since the last next()
    std::exception_ptr error;   // the session was lost since the last next()
    Op* waiter = nullptr;       // the next() suspended on it (a reference held)

    static size_t cost(const Notification& n);  // what it counts against kMaxQueuedBytes
    void push(Notification n);
    void fail(std::exception_ptr e);
    void wake();
};

class Hub final : public Connection::Owner {
public:
    Hub(net::Loop& loop, const ConnectSpec& spec, const Options& options);
    ~Hub();  // listeners' pending next() fail: the client was closed

    // Registers s and sends LISTEN; the Query answers once it took effect (or fails
    // at once while the session is down and waiting to retry).
    Query subscribe(ListenerState* s);
    void unsubscribe(ListenerState* s);
    net::Loop& loop() const { return loop_; }

    void up(Connection& c) override;
    void down(Connection& c, const std::string& message) override;
    void notified(Connection& c, const char* channel, const char* payload, int pid) override;

private:
    void open();
    void probe();  // SELECT 1, its answer owed within the reply timeout
    // LISTEN or UNLISTEN `channel` (its answer not awaited when the Query is dropped).
    Query send(const char* verb, const std::string& channel);
    Query submit(std::string sql, bool keep = true);  // keep: see Connection::submit

    net::Loop& loop_;
    const ConnectSpec& spec_;
    const Options& options_;
    std::unique_ptr<Connection> conn_;  // null while waiting to retry
    net::Reconnect reconnect_;
    net::Deadline probe_;  // armed while the session is up, when there is a reply timeout
    bool was_up_ = false;  // the session was up since the last loss was reported
    std::map<std::string, std::vector<ListenerState*>, std::less<>> channels_;
};

}  // namespace kiln::pg::detail
