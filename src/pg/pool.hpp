// A Client's connections on its loop thread: `pool` slots, each holding one
// Connection or waiting to retry. A query goes to the ready connection carrying the
// fewest queries, else to one still connecting (it waits for that attempt), else
// fails at once with db::Error(Io) naming the last failure: a request never hangs on
// a database that is down. A lost or failed connection is retried after a back-off
// (reconnect_min, doubling to reconnect_max, reset by a success), on the loop's
// deadline heap, whether or not queries are waiting.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <kiln/pg.hpp>

#include "net/deadline_heap.hpp"
#include "net/loop.hpp"
#include "pg/connection.hpp"

namespace kiln::pg::detail {

class Pool final : public Connection::Owner {
public:
    explicit Pool(Options options);
    ~Pool();

    // REQUIRES: on a loop thread; binds the pool to it on first use.
    Query send(db::Sql sql, Params params);
    size_t connected() const;

    void up(Connection& c) override;
    void down(Connection& c, const std::string& message) override;

private:
    struct Slot {
        Pool* pool;
        std::unique_ptr<Connection> conn;  // null while waiting to retry
        net::Deadline retry;
        uint64_t backoff_ms = 0;  // the next wait; 0: the last attempt succeeded
        std::string last_error;
    };
    void bind();
    void open(Slot& s);
    Slot* slot_of(Connection& c);
    Connection* pick();
    std::exception_ptr unavailable(db::Sql sql) const;

    Options options_;
    ConnectSpec spec_;
    net::Loop* loop_ = nullptr;
    std::vector<std::unique_ptr<Slot>> slots_;
};

// The keywords for PQconnectStartParams: the URL (expanded), statement_timeout
// added to any options it has.
ConnectSpec connect_spec(const Options& options);

}  // namespace kiln::pg::detail
