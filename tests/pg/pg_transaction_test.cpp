// pg::Transaction against a real PostgreSQL (tests/pg/pg_server.py): commit makes
// its statements visible together and not before; an exception or a drop rolls
// back; an error inside makes COMMIT refuse; transactions get connections of their
// own (options.transactions of them, the rest wait in line) while plain queries go
// on beside them; a cancelled request gives its connection back.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <kiln/pg.hpp>
#include <kiln/sleep.hpp>

#include "net/async.hpp"
#include "pg_test_support.hpp"

using namespace std::chrono_literals;
using kiln::pg_test::Ctl;
using kiln::Task;
using kiln::pg_test::join;
using kiln::pg_test::pg_url;
using kiln::pg_test::run;
using kiln::pg_test::until_paused;
namespace db = kiln::db;
namespace pg = kiln::pg;

namespace {

Task<> reset(pg::Client& c) {
    co_await c.exec("DROP TABLE IF EXISTS accounts");
    co_await c.exec("CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL CHECK (balance >= 0))");
    co_await c.exec("INSERT INTO accounts VALUES (1, 100), (2, 0)");
}

Task<long> balance(pg::Client& c, int id) {
    co_return co_await c.scalar<long>("SELECT balance FROM accounts WHERE id = $1", id);
}

}  // namespace

TEST(PgTransaction, CommitShowsEveryStatementTogetherAndNotBefore) {
    run([&]() -> Task<> {
        pg::Client c({.url = pg_url()});
        co_await reset(c);
        pg::Transaction tx = co_await c.begin();
        co_await tx.exec("UPDATE accounts SET balance = balance - 30 WHERE id = 1");
        co_await tx.exec("UPDATE accounts SET balance = balance + 30 WHERE id = 2");
        long inside = co_await tx.scalar<long>("SELECT balance FROM accounts WHERE id = 2");
        EXPECT_EQ(inside, 30);
        long outside = co_await balance(c, 2);  // the shared connection: not yet
        EXPECT_EQ(outside, 0);
        co_await tx.commit();
        EXPECT_FALSE(tx.open());
        long after = co_await balance(c, 2);
        EXPECT_EQ(after, 30);
        bool refused = false;
        try {
            pg::Query q = tx.exec("SELECT 1");
        } catch (const db::Error& e) {
            refused = e.kind() == db::ErrorKind::Misuse;
        }
        EXPECT_TRUE(refused);  // a statement after commit()
    });
}

TEST(PgTransaction, TransactionCommitsOnReturnAndRollsBackOnThrowWithTheOriginalError) {
    run([&]() -> Task<> {
        pg::Client c({.url = pg_url()});
        co_await reset(c);
        int moved = co_await c.transaction([&](pg::Transaction& tx) -> Task<int> {
            co_await tx.exec("UPDATE accounts SET balance = balance - 40 WHERE id = 1");
            co_await tx.exec("UPDATE accounts SET balance = balance + 40 WHERE id = 2");
            co_return 40;
        });
        EXPECT_EQ(moved, 40);
        long one = co_await balance(c, 1);
        EXPECT_EQ(one, 60);

        std::string caught;
        try {
            co_await c.transaction([&](pg::Transaction& tx) -> Task<> {
                co_await tx.exec("UPDATE accounts SET balance = balance + 1000 WHERE id = 2");
                throw std::runtime_error("the app changed its mind");
            });
        } catch (const std::runtime_error& e) {
            caught = e.what();
        }
        EXPECT_EQ(caught, "the app changed its mind");
        long two = co_await balance(c, 2);
        EXPECT_EQ(two, 40);  // rolled back

        // A constraint error inside: the error itself reaches the caller, nothing applied.
        bool constraint = false;
        try {
            co_await c.transaction([&](pg::Transaction& tx) -> Task<> {
                co_await tx.exec("UPDATE accounts SET balance = balance + 500 WHERE id = 2");
                co_await tx.exec("UPDATE accounts SET balance = balance - 500 WHERE id = 1");  // CHECK fails
            });
        } catch (const db::ConstraintViolation& e) {
            constraint = e.constraint() == db::Constraint::Check && e.sqlstate() == "23514";
        }
        EXPECT_TRUE(constraint);
        long still = co_await balance(c, 2);
        EXPECT_EQ(still, 40);
    });
}

TEST(PgTransaction, AfterAnErrorCommitRefusesAndADroppedTransactionRollsBack) {
    run([&]() -> Task<> {
        pg::Client c({.url = pg_url(), .transactions = 1});
        co_await reset(c);
        {
            pg::Transaction tx = co_await c.begin();
            co_await tx.exec("UPDATE accounts SET balance = 7 WHERE id = 2");
            std::optional<db::Error> failed;
            try {
                co_await tx.exec("SELECT * FROM no_such_table");
            } catch (const db::Error& e) {
                failed = e;
            }
            EXPECT_TRUE(failed && failed->kind() == db::ErrorKind::NoSuchTable);
            std::optional<db::Error> aborted;  // PostgreSQL refuses the rest of it
            try {
                co_await tx.exec("SELECT 1");
            } catch (const db::Error& e) {
                aborted = e;
            }
            EXPECT_TRUE(aborted && aborted->sqlstate() == "25P02") << (aborted ? aborted->what() : "no error");
            std::string refused;
            try {
                co_await tx.commit();
            } catch (const db::Error& e) {
                refused = e.message();
            }
            EXPECT_NE(refused.find("rolled back"), std::string::npos) << refused;
        }
        long two = co_await balance(c, 2);
        EXPECT_EQ(two, 0);
        {
            pg::Transaction tx = co_await c.begin();
            co_await tx.exec("UPDATE accounts SET balance = 9 WHERE id = 2");
        }  // dropped without commit: rolled back, the one connection handed back
        pg::Transaction next = co_await c.begin();  // same connection, clean
        long seen = co_await next.scalar<long>("SELECT balance FROM accounts WHERE id = 2");
        EXPECT_EQ(seen, 0);
        co_await next.commit();
    });
}

// A full statement cache forgets with DEALLOCATE. Inside a transaction an error had
// aborted, the server refused the DEALLOCATE and kept the statement, which the
// connection no longer knew: one more prepared statement in the session for good,
// per text forgotten so.
TEST(PgTransaction, StatementsForgottenInAnAbortedTransactionDoNotStayOnTheServer) {
    run([&]() -> Task<> {
        pg::Client c({.url = pg_url(), .statement_cache = 8, .transactions = 1});
        for (int round = 0; round < 10; ++round) {
            pg::Transaction tx = co_await c.begin();
            for (int i = 0; i < 8; ++i)  // the cache is full of this round's texts
                co_await tx.exec(db::trusted_sql("SELECT " + std::to_string(round * 100 + i)));
            std::optional<db::Error> failed;
            try {
                co_await tx.exec("SELECT 1 / 0");
            } catch (const db::Error& e) {
                failed = e;
            }
            EXPECT_TRUE(failed.has_value());
            for (int i = 8; i < 12; ++i) {  // new texts: each forgets, in the aborted transaction
                std::optional<db::Error> aborted;
                try {
                    co_await tx.exec(db::trusted_sql("SELECT " + std::to_string(round * 100 + i)));
                } catch (const db::Error& e) {
                    aborted = e;
                }
                EXPECT_TRUE(aborted && aborted->sqlstate() == "25P02") << (aborted ? aborted->what() : "no error");
            }
        }  // each dropped: rolled back, the one connection handed back
        pg::Transaction tx = co_await c.begin();
        long kept = co_await tx.scalar<long>("SELECT count(*) FROM pg_prepared_statements");
        EXPECT_LE(kept, 8 + 1) << "statements the connection forgot stayed prepared";  // (the count's own)
        co_await tx.commit();
    });
}

Task<> transfer(pg::Client& c, int n, std::set<int>& backends, int& most, int& open_now) {
    co_await c.transaction([&](pg::Transaction& tx) -> Task<> {
        ++open_now;
        most = std::max(most, open_now);
        int pid = co_await tx.scalar<int>("SELECT pg_backend_pid()");
        backends.insert(pid);
        co_await tx.exec("UPDATE accounts SET balance = balance - $1 WHERE id = 1", n);
        co_await kiln::sleep(5ms);
        co_await tx.exec("UPDATE accounts SET balance = balance + $1 WHERE id = 2", n);
        --open_now;
    });
}

TEST(PgTransaction, AStalePlanFailsOneTransactionAndNotTheNext) {
    // Inside a transaction a stale cached plan (0A000, a table changed under a kept
    // statement) fails the transaction: it cannot be sent again there. The statement is
    // forgotten, so the next transaction on that connection prepares it anew.
    run([&]() -> Task<> {
        pg::Client c({.url = pg_url(), .pool = 1});
        co_await c.exec("DROP TABLE IF EXISTS tx_replanned");
        co_await c.exec("CREATE TABLE tx_replanned (id int, name text)");
        co_await c.exec("INSERT INTO tx_replanned VALUES (1, 'one')");
        auto columns = [&]() -> Task<int> {
            pg::Transaction tx = co_await c.begin();
            pg::Result r = co_await tx.exec("SELECT * FROM tx_replanned WHERE id = $1", 1);
            co_await tx.commit();
            co_return r.columns();
        };
        EXPECT_EQ(co_await columns(), 2);
        co_await c.exec("ALTER TABLE tx_replanned ADD COLUMN extra int");
        std::string first;
        try {
            EXPECT_EQ(co_await columns(), 3);  // a new connection: no stale plan
        } catch (const db::Error& e) {
            first = e.sqlstate();
        }
        EXPECT_TRUE(first.empty() || first == "0A000") << first;
        EXPECT_EQ(co_await columns(), 3);
        EXPECT_EQ(co_await columns(), 3);
        co_await c.exec("DROP TABLE tx_replanned");
    });
}

TEST(PgTransaction, WhatATransactionDidToItsSessionDoesNotCarryOverToTheNext) {
    // One transaction connection, used in turn. A temporary table, a session setting
    // (set_config(..., false), SET) used to stay on it for the next transaction.
    run([&]() -> Task<> {
        pg::Client c({.url = pg_url(), .pool = 1, .transactions = 1});
        for (int i = 0; i < 2; ++i) {
            pg::Transaction tx = co_await c.begin();
            co_await tx.exec("CREATE TEMP TABLE tx_scratch (x int)");  // 42P07 the second time, before
            std::string tenant = co_await tx.scalar<std::string>("SELECT coalesce(current_setting('app.tenant', true), '')");
            EXPECT_EQ(tenant, "") << "round " << i;
            co_await tx.exec("SELECT set_config('app.tenant', 'a', false)");
            co_await tx.exec("SET search_path TO pg_catalog");
            co_await tx.commit();
        }
        // A transaction that changed nothing of its session keeps its connection.
        int before = 0, after = 0;
        {
            pg::Transaction tx = co_await c.begin();
            before = co_await tx.scalar<int>("SELECT pg_backend_pid()");
            co_await tx.commit();
        }
        {
            pg::Transaction tx = co_await c.begin();
            after = co_await tx.scalar<int>("SELECT pg_backend_pid()");
            co_await tx.commit();
        }
        EXPECT_EQ(before, after);
    });
}

TEST(PgTransaction, DuringAnOutageBeginFailsAtOnce) {
    // The postmaster stopped: the kernel still accepts connections, and an attempt
    // waits its connect_timeout. Once the shared connections know the server is away,
    // begin() fails at once, as a query does, instead of opening a connection of its
    // own and waiting on it; after a lease connection failed to come up, it backs off.
    run([&]() -> Task<> {
        pg::Client db({.url = pg_url(), .pool = 1, .connect_timeout = 1000ms, .reconnect_min = 20ms,
                       .reconnect_max = 3000ms});
        pg::Client watcher({.url = pg_url()});
        int backend = co_await db.scalar<int>("SELECT pg_backend_pid()");
        co_await watcher.scalar<int>("SELECT 1");  // its session is up before the pause
        Ctl pause("pause 4000");
        EXPECT_TRUE(co_await until_paused()) << "the server never stopped answering";
        EXPECT_TRUE(co_await watcher.scalar<bool>("SELECT pg_terminate_backend($1)", backend));
        try {
            co_await db.exec("SELECT 1");  // the loss shows
        } catch (const db::Error&) {
        }
        for (int i = 0; i < 3; ++i) {
            auto t0 = std::chrono::steady_clock::now();
            std::optional<db::ErrorKind> kind;
            try {
                pg::Transaction tx = co_await db.begin();
            } catch (const db::Error& e) {
                kind = e.kind();
            }
            EXPECT_EQ(kind, db::ErrorKind::Io);
            EXPECT_LT(std::chrono::steady_clock::now() - t0, 200ms) << "begin() waited on a server that does not answer";
            co_await kiln::sleep(30ms);
        }
        while (!pause.done()) co_await kiln::sleep(10ms);
        bool back = false;
        for (auto until = std::chrono::steady_clock::now() + 10s; !back && std::chrono::steady_clock::now() < until;) {
            try {
                pg::Transaction tx = co_await db.begin();
                co_await tx.exec("SELECT 1");
                co_await tx.commit();
                back = true;
            } catch (const db::Error&) {
            }
            if (!back) co_await kiln::sleep(50ms);
        }
        EXPECT_TRUE(back) << "transactions did not come back after the pause";
    });
}

TEST(PgTransaction, TransactionsGetConnectionsOfTheirOwnAndWaitInLineBesidePlainQueries) {
    run([&]() -> Task<> {
        pg::Client c({.url = pg_url(), .pool = 1, .transactions = 2});
        co_await reset(c);
        int shared_pid = co_await c.scalar<int>("SELECT pg_backend_pid()");
        std::set<int> backends;
        int most = 0, open_now = 0;
        std::vector<Task<>> tasks;
        for (int i = 1; i <= 10; ++i) {
            tasks.push_back(transfer(c, i, backends, most, open_now));
            tasks.back().start();
        }
        // Plain queries are not held up by the transactions in line.
        for (int i = 0; i < 5; ++i) {
            int v = co_await c.scalar<int>("SELECT $1::int", i);
            EXPECT_EQ(v, i);
        }
        co_await join(tasks);
        EXPECT_LE(backends.size(), 2u);
        EXPECT_EQ(backends.count(shared_pid), 0u);  // never on the shared connection
        EXPECT_EQ(most, 2);
        long one = co_await balance(c, 1);
        long two = co_await balance(c, 2);
        EXPECT_EQ(one, 100 - 55);
        EXPECT_EQ(two, 55);
    });
}

Task<> held_forever(pg::Client& c, bool& cancelled) {
    try {
        pg::Transaction tx = co_await c.begin();
        co_await tx.exec("UPDATE accounts SET balance = 1 WHERE id = 2");
        co_await tx.exec("SELECT pg_sleep(1)");
    } catch (const kiln::Cancelled&) {
        cancelled = true;
        throw;
    }
}

TEST(PgTransaction, ACancelledRequestRollsBackAndGivesItsConnectionBack) {
    run([&]() -> Task<> {
        pg::Client c({.url = pg_url(), .transactions = 1});
        co_await reset(c);
        bool first = false, second = false;
        kiln::net::AsyncScope scope;
        std::vector<Task<>> requests;
        {
            kiln::net::AsyncScope::Enter enter(&scope);
            requests.push_back(held_forever(c, first));  // holds the only connection
            requests.back().start();
            requests.push_back(held_forever(c, second));  // waits in line for it
            requests.back().start();
        }
        co_await kiln::sleep(50ms);
        scope.cancel();
        for (auto& r : requests)
            while (!r.done()) co_await kiln::sleep(1ms);
        EXPECT_TRUE(first);
        EXPECT_TRUE(second);
        requests.clear();
        auto started = std::chrono::steady_clock::now();
        pg::Transaction tx = co_await c.begin();  // the connection came back
        long seen = co_await tx.scalar<long>("SELECT balance FROM accounts WHERE id = 2");
        EXPECT_EQ(seen, 0);  // the cancelled one's update was rolled back
        co_await tx.commit();
        // It waited for the pg_sleep already running on the server, no more.
        EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
    });
}
