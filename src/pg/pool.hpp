// A Client's connections on its loop thread: `pool` slots, each holding one
// Connection or waiting to retry. A query goes to the ready connection carrying the
// fewest queries, else to one still connecting (it waits for that attempt), else
// fails at once with db::Error(Io) naming the last failure: a request never hangs on
// a database that is down. A lost or failed connection is retried after a back-off
// (reconnect_min, doubling to reconnect_max, reset by a success), on the loop's
// deadline heap, whether or not queries are waiting.
//
// Transactions get connections of their own (Lease), up to options.transactions,
// opened on demand and kept for the next one; a begin() past that waits in line.
// With no free lease connected, begin() fails at once while the shared connections
// are all lost, or while a lease connection that failed to come up backs off.
// A lease whose connection is lost stays held by its transaction (whose next
// statements fail with db::Error(Io)) until it is handed back.
#pragma once
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <kiln/pg.hpp>

#include "net/deadline_heap.hpp"
#include "net/loop.hpp"
#include "net/reconnect.hpp"
#include "pg/connection.hpp"
#include "pg/hub.hpp"

namespace kiln::pg::detail {

class Pool;

struct Lease {
    std::unique_ptr<Connection> conn;  // null once lost
    bool held = false;
    bool dirty = false;  // a transaction may be open on it: ROLLBACK before reuse
    bool session_changed = false;  // a statement may have changed its session: not reused
    bool up = false;     // its connection came up (a failure before that backs off)
};

class Pool final : public Connection::Owner {
public:
    explicit Pool(Options options);
    ~Pool();

    // REQUIRES: on a loop thread; binds the pool to it on first use.
    Query send(db::Sql sql, Params params);
    // On one leased connection (fails with db::Error(Io) if it was lost).
    Query send(Lease& lease, db::Sql sql, Params params);
    // A request for a Lease, answered (op->lease) when one is free and connected,
    // or failed with db::Error(Io) if no connection for it can be made. The caller
    // holds one reference.
    Op* lease();
    // Hands a lease back; sends ROLLBACK first if it is dirty.
    void release(Lease* lease);
    // The LISTEN session's owner, made on first use. REQUIRES: on the loop thread.
    Hub& hub();
    size_t connected() const;

    void up(Connection& c) override;
    void down(Connection& c, const std::string& message) override;

private:
    struct Slot : net::Reconnect {
        Pool* pool;
        std::unique_ptr<Connection> conn;  // null while waiting to retry
    };
    void bind();
    void open(Slot& s);
    Slot* slot_of(Connection& c);
    Connection* pick();
    std::exception_ptr unavailable(db::Sql sql) const;

    Lease* lease_of(Connection& c);
    void grant();        // free, connected leases to the ops waiting in line
    void open_leases();  // more connections, if the line is longer than what is coming
    void drop(Lease* l);
    bool free_lease_ready() const;
    bool shared_down() const;  // every slot lost and not back yet

    Options options_;
    ConnectSpec spec_;
    net::Loop* loop_ = nullptr;
    std::vector<std::unique_ptr<Slot>> slots_;
    std::vector<std::unique_ptr<Lease>> leases_;
    std::deque<Op*> lease_line_;  // each held (a reference) until granted or failed
    // A lease connection that failed to come up: until its back-off passes, begin()
    // fails at once rather than trying (and maybe waiting connect_timeout) again. No
    // work when it fires: the next begin() after it tries.
    net::Reconnect lease_retry_;
    std::unique_ptr<Hub> hub_;
};

// The keywords for PQconnectStartParams: the URL (expanded), statement_timeout
// added to any options it has.
ConnectSpec connect_spec(const Options& options);

}  // namespace kiln::pg::detail
