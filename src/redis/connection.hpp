// One Redis connection on an event loop: hiredis's async context, with kiln's loop
// as its event library. hiredis asks to watch the socket (addRead, addWrite, ...)
// and kiln's loop calls back into it (redisAsyncHandleRead/Write) when it is ready.
//
// Commands are appended to hiredis's output buffer as they are made and written
// when the socket is next reported writable: everything the coroutines of one loop
// iteration sent leaves in one write. Replies come back in order; each one's
// callback finishes its Op. The socket is watched level-triggered: hiredis reads
// and writes one chunk per call, not until EAGAIN.
//
// hiredis 0.14 has no connect timeout for async contexts and frees a context by
// itself when its connection fails: the connect deadline is kiln's, and the
// context's end is learned from the event library's cleanup hook, the one call
// hiredis makes on every path that frees it. When the connection ends, every
// command it carries fails with Error(Io) and the owner is told once; the owner
// destroys it later (destroy_later), as the end is reported from inside hiredis's
// own calls.
//
// A connection either carries commands or subscriptions (Mode::Subscriber: after
// SUBSCRIBE, Redis 6 in RESP2 accepts nothing but (UN)SUBSCRIBE and PING on it).
// A subscriber owes nothing while it waits for messages, so the command timeout
// would never see its server go silent. So while it is up it is subscribed to one
// more channel (Options::probe_channel), and subscribes to it again every command_timeout: Redis
// confirms each time, and a connection that heard nothing at all (no byte) since the
// previous probe is closed. Not PING: hiredis 0.14 keeps the callback of each command
// sent in pub/sub mode for ever (sub.invalid) and drops the PONG unread, and a PING
// in flight while the last channel is unsubscribed gets an answer hiredis asserts
// against. The probe channel also keeps the connection in pub/sub mode for good.
#pragma once
#include <deque>
#include <string>

#include <kiln/redis.hpp>

#include "net/deadline_heap.hpp"
#include "net/loop.hpp"
#include "redis/op.hpp"

struct redisAsyncContext;
struct redisReply;

namespace kiln::redis::detail {

class Connection final : public net::IoHandler {
public:
    class Owner {
    public:
        virtual void up(Connection& c) = 0;
        virtual void down(Connection& c, const std::string& message) = 0;  // already failed its commands
        // A message on a subscribed channel (Mode::Subscriber).
        virtual void message(Connection&, std::string /*channel*/, std::string /*payload*/) {}
        // Redis confirmed a SUBSCRIBE (Mode::Subscriber).
        virtual void subscribed(Connection&, const std::string& /*channel*/) {}

    protected:
        ~Owner() = default;
    };
    enum class Mode : uint8_t { Commands, Subscriber };

    Connection(net::Loop& loop, Owner& owner, const Endpoint& endpoint, const Options& options,
               Mode mode = Mode::Commands);
    // What it still carries fails with Error(Io) "the Redis client was closed".
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    // Starts connecting (and sends AUTH/SELECT first, as the URL asks). A failure
    // at once is reported to the owner (down) before this returns.
    void start();
    // Sends op's command (queued in hiredis until connected). REQUIRES: !dead().
    void submit(Op* op, std::string_view wire);
    // SUBSCRIBE or UNSUBSCRIBE one channel (Mode::Subscriber); confirmations and
    // messages reach the owner. REQUIRES: !dead().
    void subscription(const char* verb, const std::string& channel);
    // Connected, and Redis answered (its set-up in Mode::Commands, a confirmation in
    // Mode::Subscriber): a stopped server still accepts connections.
    bool ready() const { return state_ == State::Ready && answered_; }
    bool dead() const { return state_ == State::Dead; }
    size_t load() const { return in_flight_.size(); }

    void on_io(uint32_t events) override;

private:
    enum class State : uint8_t { Idle, Connecting, Ready, Dead };
    struct Sent {
        Op* op;  // null: an internal command (AUTH, SELECT), its error ends the connection
        uint64_t at_ms;
    };
    static void on_reply(redisAsyncContext* ac, void* reply, void* privdata);
    static void on_connect(const redisAsyncContext* ac, int status);
    static void ev_add_read(void* self);
    static void ev_del_read(void* self);
    static void ev_add_write(void* self);
    static void ev_del_write(void* self);
    static void ev_cleanup(void* self);

    void reply(redisReply* r, void* privdata);
    void answered();  // the first answer: up for the owner
    void deliver_message(redisReply* r);
    void send_internal(const std::string& wire);  // AUTH, SELECT: an error closes the connection
    void arm_timeout();
    void timed_out();
    void probe();  // Mode::Subscriber: see the top of this file
    void update_watch();
    void flush_soon();  // once per loop iteration, whatever was sent in it
    void close_soon();  // outside hiredis's stack
    void close(const std::string& why);
    std::string hiredis_error() const;
    void die(const std::string& why);

    net::Loop& loop_;
    Owner& owner_;
    const Endpoint& endpoint_;
    const Options& options_;
    Mode mode_;
    State state_ = State::Idle;
    redisAsyncContext* ac_ = nullptr;  // null once hiredis freed it
    int fd_ = -1;          // registered with the loop while >= 0
    uint32_t events_ = 0;  // as registered
    bool want_read_ = false;   // hiredis asked to read
    bool want_write_ = false;  // hiredis asked to write and the send buffer was full
    bool flushing_ = false;    // inside flush(): an addWrite means the buffer filled
    bool closing_ = false;     // the destructor runs: the owner is not told
    std::deque<Sent> in_flight_;  // commands sent, in order; their replies come in this order
    net::Deadline deadline_;      // connect timeout, then the oldest reply's
    net::Deadline probe_;         // Mode::Subscriber, while ready: the next probe
    bool heard_ = false;          // Mode::Subscriber: the server sent something since the last probe
    uint64_t pinged_ms_ = 0;      // Mode::Subscriber: when the last probe went (0: none yet)
    bool answered_ = false;       // see ready()
    size_t setup_left_ = 0;       // internal commands (AUTH, SELECT, PING) not yet answered
    std::string error_;           // why kiln closed it, once it did
    // The deferred flush or close, while one is due; it outlives the Connection if
    // need be (the loop's deferred work may run after the owner destroyed it).
    struct Ticket {
        Connection* conn;
        bool flush = false;
        bool close = false;
    };
    Ticket* ticket_ = nullptr;
    Ticket& ticket();
};

}  // namespace kiln::redis::detail
