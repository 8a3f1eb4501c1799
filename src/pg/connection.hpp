// One libpq session on an event loop: a non-blocking connect (PQconnectPoll), then
// pipeline mode. Queries from any number of coroutines go out at once, each followed
// by its own Sync (libpq 15 has no PQsendPipelineSync), so an error aborts only its
// own query; answers come back in the order sent and are matched to a FIFO of what
// was sent. Each SQL text is prepared once per session (named k1, k2, ...), its
// Prepare pipelined just ahead of its first use. Values go as text, rows come as text.
//
// Queries are written to the socket once per loop iteration, not once each: what
// every handler of an iteration sent leaves in one write (Loop::defer), so twenty
// queries of one request, or one query of each of fifty requests, cost one syscall.
//
// Syncs. libpq 15's PQpipelineSync flushes, so a Sync per query would be a write per
// query. A shared connection (Mode::Batched) therefore gives consecutive SELECTs of
// one iteration one Sync between them; every other statement keeps a Sync of its own
// and so its own implicit transaction. A group's answers are held until its Sync: if
// all succeeded, they are delivered; if any failed, the server rolled the group back,
// and every member is sent again alone, each with its own Sync, so each gets the
// answer it would have had by itself (its own error included). The cost of that is on
// the error path only: a SELECT of a failed group runs twice, the first run undone
// (a side effect outside transactions, such as nextval, can happen twice).
// Connections of transactions and LISTEN (Mode::Isolated) give every statement its
// own Sync.
//
// The socket is watched level-triggered, not edge-triggered as kiln's own sockets
// are: libpq's PQconsumeInput reads one chunk, not until EAGAIN, so an edge could be
// lost with data still in the kernel. EPOLLOUT is watched only while libpq holds
// unsent bytes (the kernel's send buffer was full).
//
// libpq resolves a host name inside PQconnectStart, blocking the loop for that
// lookup: give an address (host=127.0.0.1, or hostaddr=) where that matters.
//
// A session that carries queries and hears nothing from the server for
// ConnectSpec::reply_timeout_ms ends as a lost one does: a stopped server or a host
// gone silent otherwise holds its queries until TCP gives up, many minutes later.
//
// Owned by a Pool on one loop thread. When the session ends (connect failure, lost
// socket, server shutdown, no reply in time), every query it carries fails with
// db::Error(Io) and the owner is told once; the owner must then destroy it later
// (destroy_later), as the end is reported from inside the Connection's own calls.
#pragma once
#include <libpq-fe.h>

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "net/deadline_heap.hpp"
#include "net/loop.hpp"
#include "pg/op.hpp"

namespace kiln::pg::detail {

// What PQconnectStartParams gets: keywords and values, NUL-terminated arrays.
struct ConnectSpec {
    std::vector<std::string> keys, values;
    uint64_t timeout_ms = 5000;
    uint64_t reply_timeout_ms = 0;  // 0: none
    size_t statement_cache = 256;   // prepared statements kept (Options::statement_cache)
    // PostgreSQL 14+ checks this often (ms) during a query whether its client is gone,
    // and stops the query if so; 0: the server's setting (also when the URL's options
    // set it).
    uint64_t check_interval_ms = 0;
};

class Connection final : public net::IoHandler {
public:
    class Owner {
    public:
        virtual void up(Connection& c) = 0;
        virtual void down(Connection& c, const std::string& message) = 0;  // already failed its queries
        // A NOTIFY for a channel this session LISTENs to.
        virtual void notified(Connection&, const char* /*channel*/, const char* /*payload*/, int /*pid*/) {}

    protected:
        ~Owner() = default;
    };

    enum class Mode : uint8_t { Batched, Isolated };
    Connection(net::Loop& loop, Owner& owner, const ConnectSpec& spec, Mode mode = Mode::Isolated);
    // What it still carries fails with db::Error(Io) "the PostgreSQL client was closed".
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    // Starts connecting. A failure at once is reported to the owner (down) before
    // this returns.
    void start();
    // Sends op (or queues it until the session is up). REQUIRES: !dead(). A statement
    // is prepared once per connection and kept, unless `keep` is false (a statement
    // whose text names what varies, such as LISTEN "channel": sent unprepared).
    void submit(Op* op, std::string_view sql, bool keep = true);
    bool ready() const { return state_ == State::Ready; }
    bool dead() const { return state_ == State::Dead; }
    size_t load() const { return queries_; }  // queries sent or queued, not yet answered

    void on_io(uint32_t events) override;

private:
    enum class State : uint8_t { Idle, Connecting, Ready, Dead };
    struct Statement {
        std::string sql;
        std::string name;
        std::exception_ptr error;  // its Prepare failed: the error its uses report
        bool select = false;       // may share a Sync with its neighbours (Mode::Batched)
        bool once = false;         // not kept: sent unprepared (PQsendQueryParams)
        uint64_t used = 0;         // when last asked for (statement()), for the cache's order
        std::shared_ptr<Statement> forgets;  // a DEALLOCATE: the statement it drops
    };
    struct Pending {  // what the server will answer, in order
        enum Kind : uint8_t { Prepare, Query, Sync } kind;
        Op* op = nullptr;  // Query: held until answered
        std::shared_ptr<Statement> stmt;
        PGresult* got = nullptr;
        bool grouped = false;  // before a Sync it shares with others
    };
    struct Queued {  // submitted before the session was up
        Op* op;
        std::shared_ptr<Statement> stmt;
        bool prepare;
    };
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };

    void poll_connect();
    void ask_to_notice_a_gone_client();
    void send(Op* op, const std::shared_ptr<Statement>& stmt, bool prepare, bool alone = false);
    // The cached statement for `sql`, or a new one (*prepare). may_forget: a full cache
    // first forgets one, which sends a DEALLOCATE (only where the caller checks for a
    // connection lost meanwhile).
    std::shared_ptr<Statement> statement(std::string_view sql, bool* prepare, bool may_forget = false);
    void forget_statements();  // the cache is full: the least recently used idle ones go
    void deallocate(std::shared_ptr<Statement> stmt);
    void not_forgotten(const std::shared_ptr<Statement>& stmt);  // its DEALLOCATE was refused
    void close_group();         // the Sync after an open group
    void settle_group();        // its Sync arrived: deliver, or send every member again alone
    void grouped_done(Pending& p);
    void commit_failed(const PGresult* r);  // a Sync answered with an error: what it closed fails
    void note_ending(const PGresult* r);  // a FATAL that means the server is closing
    void flush();
    void flush_soon();  // once per loop iteration, whatever was sent in it
    void drain_soon();  // what drain() left, in the loop's next turn
    void defer(bool drain);
    void drain();
    void deliver_notifications();
    bool take_answers();  // drain() and deliver_notifications(); false once the session died
    void answer(Pending& p);
    bool replan(Pending& p);  // a stale cached plan: prepared and sent again, or false
    void prepared(Pending& p);
    void die(const std::string& why);
    void fail_all(const std::string& message);
    void watch(uint32_t events, bool again = false);  // again: even if fd and events look the same
    void unwatch();
    void awaiting_reply();  // something was sent: the reply clock runs
    void reply_deadline();  // the clock's deadline passed

    net::Loop& loop_;
    Owner& owner_;
    const ConnectSpec& spec_;
    Mode mode_;
    bool group_open_ = false;         // SELECTs sent since the last Sync
    bool group_failed_ = false;       // one of the group being answered failed
    std::vector<Pending> held_;       // answered statements until their Sync, in order
    std::vector<std::shared_ptr<Statement>> group_prepared_;  // Prepares inside it
    PGconn* conn_ = nullptr;
    State state_ = State::Idle;
    int fd_ = -1;          // as registered with the loop
    uint32_t events_ = 0;  // as registered
    net::Deadline connect_deadline_;
    net::Deadline reply_deadline_;  // armed lazily: re-checked against heard_ms_ when it fires
    uint64_t heard_ms_ = 0;         // when the server last sent something, or the wait began
    std::deque<Pending> sent_;
    std::vector<Queued> queued_;
    std::unordered_map<std::string, std::shared_ptr<Statement>, Hash, std::equal_to<>> statements_;
    std::vector<std::shared_ptr<Statement>> undropped_;  // refused DEALLOCATEs to send again
    uint64_t names_ = 0;
    uint64_t uses_ = 0;  // statement() calls: the cache's clock
    size_t queries_ = 0;
    std::string ending_;  // why the server is closing the session, once it said so
    std::string lost_;    // die()'s message, for an op that was being sent
    std::vector<const char*> values_;  // scratch for libpq's parameter array
    // The deferred flush or drain, while one is due; it outlives the Connection if
    // need be (the loop's deferred work may run after the owner destroyed it).
    struct Deferred {
        Connection* conn;
        bool drain = false;
        bool flush = false;
    };
    Deferred* deferred_ = nullptr;
};

}  // namespace kiln::pg::detail
