// kiln::pg::Client against a real PostgreSQL (started by tests/pg/pg_server.py, URL in
// KILN_TEST_PG_URL): typed rows, many coroutines pipelined on one connection, errors
// that stay with their own query, NULLs, cancellation mid-query, statement timeout,
// a server restart under load that the client rides out by itself, and a server that
// stops answering, left after the reply timeout.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <kiln/pg.hpp>
#include <kiln/sleep.hpp>

#include "net/async.hpp"
#include "pg_test_support.hpp"
#include "net/loop.hpp"
#include "util/log.hpp"

using namespace std::chrono_literals;
using kiln::Task;
namespace db = kiln::db;
namespace pg = kiln::pg;
using kiln::pg_test::Ctl;
using kiln::pg_test::join;
using kiln::pg_test::pg_url;
using kiln::pg_test::run;
using kiln::pg_test::until_paused;

namespace {

// The exception a query ends with (nullptr if it succeeded).
template <class E>
Task<std::optional<E>> error_of(pg::Query q) {
    try {
        co_await q;
    } catch (const E& e) {
        co_return e;
    }
    co_return std::nullopt;
}

TEST(PgClient, SelectsTypedRowsWithParameters) {
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url()});
    run(loop, [&]() -> Task<> {
        pg::Result r = co_await db.exec("SELECT $1::int + 1 AS n, $2::text AS s, $3::float8 AS d, $4::bool AS b, "
                                        "$5::bigint AS big, 'x' || $2 AS sv",
                                        41, std::string("héllo"), 2.5, true, int64_t{1} << 40);
        EXPECT_EQ(r.size(), 1u);
        EXPECT_EQ(r.columns(), 6);
        pg::Row row = r[0];
        EXPECT_EQ(row.get<int>(0), 42);
        EXPECT_EQ(row.get<long>("n"), 42);
        EXPECT_EQ(row.get<std::string>(1), "héllo");
        EXPECT_DOUBLE_EQ(row.get<double>("d"), 2.5);
        EXPECT_TRUE(row.get<bool>(3));
        EXPECT_EQ(row.get<int64_t>(4), int64_t{1} << 40);
        EXPECT_EQ(row.get<std::string_view>(5), "xhéllo");
        auto [n, s] = row.as<int, std::string>();
        EXPECT_EQ(n, 42);
        EXPECT_EQ(s, "héllo");
        EXPECT_THROW(row.get<int16_t>(4), db::Error);     // does not fit
        EXPECT_THROW(row.get<int>(1), db::Error);         // not a number
        EXPECT_THROW(row.get<int>(9), db::Error);         // no such column
        EXPECT_THROW(row.get<int>("nope"), db::Error);

        co_await db.exec("DROP TABLE IF EXISTS typed_items");
        co_await db.exec("CREATE TABLE typed_items (id serial PRIMARY KEY, name text NOT NULL, price float8)");
        pg::Result ins = co_await db.exec("INSERT INTO typed_items (name, price) VALUES ($1, $2), ($3, $4)",
                                          "tea", 1.25, std::string_view("cake"), 3.0);
        EXPECT_EQ(ins.affected(), 2);
        pg::Result rows = co_await db.exec("SELECT id, name, price FROM typed_items WHERE price > $1 ORDER BY id", 1.0);
        std::vector<std::string> names;
        for (pg::Row item : rows) names.push_back(item.get<std::string>("name"));
        EXPECT_EQ(names, (std::vector<std::string>{"tea", "cake"}));
        pg::Result upd = co_await db.exec("UPDATE typed_items SET price = price * 2 WHERE name = $1", "tea");
        EXPECT_EQ(upd.affected(), 1);
        EXPECT_EQ(co_await db.scalar<double>("SELECT price FROM typed_items WHERE name = $1", "tea"), 2.5);
        EXPECT_EQ(co_await db.scalar<long>("SELECT count(*) FROM typed_items"), 2);
        EXPECT_EQ(co_await db.scalar<std::optional<int>>("SELECT id FROM typed_items WHERE name = $1", "none"),
                  std::nullopt);
        try {
            co_await db.scalar<int>("SELECT id FROM typed_items WHERE name = $1", "none");
            ADD_FAILURE() << "no row must throw";
        } catch (const db::Error& e) {
            EXPECT_EQ(e.kind(), db::ErrorKind::NoRows);
        }
        // The same SQL text again: prepared once, reused.
        EXPECT_EQ(co_await db.scalar<long>("SELECT count(*) FROM typed_items"), 2);
        co_await db.exec("DROP TABLE typed_items");
    });
    EXPECT_EQ(db.connected(), 1u);
}

// SELECTs sent together share one Sync (one write); when one of them fails, the
// server rolls the group back, and each is sent again alone: the failing one gets
// its own error, the others their rows, and nothing the group did is lost or doubled
// in what the app sees.
TEST(PgClient, ASelectFailingAmongOthersFailsAloneAndTheOthersGetTheirRows) {
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url()});
    run(loop, [&]() -> Task<> {
        co_await db.exec("SELECT 1");
        std::vector<pg::Query> qs;
        for (int i = 0; i < 10; ++i) qs.push_back(db.exec("SELECT $1::int * 10", i));
        pg::Query zero = db.exec("SELECT 1 / $1::int", 0);  // division by zero at run time
        for (int i = 10; i < 20; ++i) qs.push_back(db.exec("SELECT $1::int * 10", i));
        int i = 0;
        for (pg::Query& q : qs) {
            pg::Result r = co_await q;
            EXPECT_EQ(r[0].get<int>(0), i * 10);
            ++i;
        }
        auto e = co_await error_of<db::Error>(std::move(zero));
        EXPECT_TRUE(e && e->sqlstate() == "22012") << (e ? e->what() : "no error");
        // A write between SELECTs keeps its own Sync, and its order.
        co_await db.exec("DROP TABLE IF EXISTS group_order");
        co_await db.exec("CREATE TABLE group_order (n int)");
        pg::Query before = db.exec("SELECT count(*) FROM group_order");
        pg::Query insert = db.exec("INSERT INTO group_order VALUES (1)");
        pg::Query bad = db.exec("SELECT 1 / 0 FROM group_order");
        pg::Query after = db.exec("SELECT count(*) FROM group_order");
        long n_before = (co_await before)[0].get<long>(0);
        EXPECT_EQ(n_before, 0);
        co_await insert;
        auto b = co_await error_of<db::Error>(std::move(bad));
        EXPECT_TRUE(b.has_value());
        long n_after = (co_await after)[0].get<long>(0);
        EXPECT_EQ(n_after, 1);  // the insert stands although a neighbour failed
        co_await db.exec("DROP TABLE group_order");
    });
}

struct PipelineCounts {
    int sent = 0, answered = 0, most_in_flight = 0;
    std::vector<int> pids;
};

Task<> pipelined_worker(pg::Client& db, int w, PipelineCounts& c) {
    for (int i = 0; i < 4; ++i) {
        int id = w * 1000 + i;
        pg::Query q = db.exec("SELECT $1::int * 2, $2::text, pg_backend_pid()", id, "w" + std::to_string(id));
        ++c.sent;
        c.most_in_flight = std::max(c.most_in_flight, c.sent - c.answered);
        pg::Result r = co_await std::move(q);
        ++c.answered;
        EXPECT_EQ(r[0].get<int>(0), id * 2);
        EXPECT_EQ(r[0].get<std::string>(1), "w" + std::to_string(id));
        c.pids.push_back(r[0].get<int>(2));
    }
}

TEST(PgClient, TwoHundredQueriesFromFiftyCoroutinesPipelineOnOneConnection) {
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url(), .pool = 1});
    PipelineCounts counts;
    run(loop, [&]() -> Task<> {
        co_await db.exec("SELECT 1");  // connected
        std::vector<Task<>> workers;
        for (int w = 0; w < 50; ++w) {
            workers.push_back(pipelined_worker(db, w, counts));
            workers.back().start();
        }
        co_await join(workers);
    });
    EXPECT_EQ(counts.answered, 200);
    EXPECT_GE(counts.most_in_flight, 50);  // every coroutine's query was on the wire before any answer
    ASSERT_EQ(counts.pids.size(), 200u);
    for (int pid : counts.pids) EXPECT_EQ(pid, counts.pids[0]);  // one server session carried them all
}

TEST(PgClient, AnErrorInAPipelineFailsOnlyItsOwnQuery) {
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url()});
    run(loop, [&]() -> Task<> {
        co_await db.exec("DROP TABLE IF EXISTS pipeline_users");
        co_await db.exec("CREATE TABLE pipeline_users (name text UNIQUE NOT NULL, age int CHECK (age >= 0))");
        co_await db.exec("INSERT INTO pipeline_users VALUES ($1, $2)", "ada", 36);
        // All sent before any is awaited: one pipeline.
        pg::Query before = db.exec("SELECT $1::int", 1);
        pg::Query syntax = db.exec("SELEC $1::int", 2);
        pg::Query middle = db.exec("SELECT $1::int", 3);
        pg::Query unique = db.exec("INSERT INTO pipeline_users VALUES ($1, $2)", "ada", 40);
        pg::Query notnull = db.exec("INSERT INTO pipeline_users VALUES ($1, $2)", nullptr, 1);
        pg::Query check = db.exec("INSERT INTO pipeline_users VALUES ($1, $2)", "bob", -1);
        pg::Query after = db.exec("SELECT $1::int", 5);

        EXPECT_EQ((co_await before)[0].get<int>(0), 1);
        auto se = co_await error_of<db::SqlError>(std::move(syntax));
        EXPECT_TRUE(se.has_value());
        if (se) {
            EXPECT_EQ(se->sqlstate(), "42601");
            EXPECT_EQ(se->kind(), db::ErrorKind::Sql);
            EXPECT_NE(std::string(se->what()).find("SELEC $1::int"), std::string::npos);  // names its SQL
        }
        EXPECT_EQ((co_await middle)[0].get<int>(0), 3);
        auto ue = co_await error_of<db::ConstraintViolation>(std::move(unique));
        EXPECT_TRUE(ue.has_value());
        if (ue) {
            EXPECT_EQ(ue->sqlstate(), "23505");
            EXPECT_EQ(ue->constraint(), db::Constraint::Unique);
            EXPECT_EQ(std::string(ue->what()).find("ada"), std::string::npos);  // no values in what()
        }
        auto ne = co_await error_of<db::ConstraintViolation>(std::move(notnull));
        EXPECT_TRUE(ne.has_value());
        if (ne) {
            EXPECT_EQ(ne->constraint(), db::Constraint::NotNull);
        }
        auto ce = co_await error_of<db::ConstraintViolation>(std::move(check));
        EXPECT_TRUE(ce.has_value());
        if (ce) {
            EXPECT_EQ(ce->constraint(), db::Constraint::Check);
        }
        EXPECT_EQ((co_await after)[0].get<int>(0), 5);

        // The same bad SQL twice in one pipeline: the second use rides on the first's
        // (failed) prepare, and still reports the real mistake.
        pg::Query bad1 = db.exec("SELECT nope FROM pipeline_users WHERE name = $1", "x");
        pg::Query bad2 = db.exec("SELECT nope FROM pipeline_users WHERE name = $1", "y");
        auto b1 = co_await error_of<db::SqlError>(std::move(bad1));
        auto b2 = co_await error_of<db::SqlError>(std::move(bad2));
        EXPECT_TRUE(b1 && b2);
        if (b1 && b2) {
            EXPECT_EQ(b1->sqlstate(), "42703");
            EXPECT_EQ(b2->sqlstate(), "42703");
        }

        // A statement whose table is missing fails, and works once the table exists
        // (a failed prepare is not cached).
        co_await db.exec("DROP TABLE IF EXISTS later_table");
        auto missing = co_await error_of<db::SqlError>(db.exec("SELECT count(*) FROM later_table"));
        EXPECT_TRUE(missing.has_value());
        if (missing) {
            EXPECT_EQ(missing->kind(), db::ErrorKind::NoSuchTable);
            EXPECT_EQ(missing->sqlstate(), "42P01");
        }
        co_await db.exec("CREATE TABLE later_table (x int)");
        EXPECT_EQ(co_await db.scalar<long>("SELECT count(*) FROM later_table"), 0);
        // A wrong parameter count is the caller's mistake, and the session lives on.
        auto count = co_await error_of<db::Error>(db.exec("SELECT $1::int + $2::int", 1));
        EXPECT_TRUE(count.has_value());
        if (count) {
            EXPECT_EQ(count->kind(), db::ErrorKind::Misuse);
        }
        EXPECT_EQ(co_await db.scalar<int>("SELECT 7"), 7);
        co_await db.exec("DROP TABLE later_table");
        co_await db.exec("DROP TABLE pipeline_users");
    });
}

TEST(PgClient, NullReadsAsNulloptAndOptionalsBindNull) {
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url()});
    run(loop, [&]() -> Task<> {
        pg::Result r = co_await db.exec("SELECT NULL::int, 5::int, NULL::text, $1::int IS NULL, $2::text IS NULL, $3::int",
                                        std::optional<int>(), nullptr, std::optional<int>(9));
        pg::Row row = r[0];
        EXPECT_EQ(row.get<std::optional<int>>(0), std::nullopt);
        EXPECT_EQ(row.get<std::optional<int>>(1), 5);
        EXPECT_EQ(row.get<std::optional<std::string>>(2), std::nullopt);
        EXPECT_TRUE(row.field(0).is_null());
        EXPECT_TRUE(row.get<bool>(3));
        EXPECT_TRUE(row.get<bool>(4));
        EXPECT_EQ(row.get<int>(5), 9);
        try {
            (void)row.get<int>(0);
            ADD_FAILURE() << "NULL into int must throw";
        } catch (const db::Error& e) {
            EXPECT_EQ(e.kind(), db::ErrorKind::Type);
            EXPECT_NE(std::string(e.what()).find("NULL"), std::string::npos);
        }
        // A NUL byte cannot reach PostgreSQL text: refused, not truncated.
        EXPECT_THROW((void)db.exec("SELECT $1::text", std::string("a\0b", 3)), db::Error);
    });
}

Task<> slow_request(pg::Client& db, bool& cancelled) {
    try {
        pg::Result r = co_await db.exec("SELECT pg_sleep(0.2), repeat('x', 100000)");
        ADD_FAILURE() << "the answer of a cancelled request reached it";
    } catch (const kiln::Cancelled&) {
        cancelled = true;
    }
}

TEST(PgClient, CancellingAScopeWithAQueryInFlightDropsItsAnswer) {
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url()});
    bool cancelled = false;
    run(loop, [&]() -> Task<> {
        co_await db.exec("SELECT 1");
        kiln::net::AsyncScope scope;
        std::vector<Task<>> requests;
        {
            kiln::net::AsyncScope::Enter enter(&scope);  // as the framework does for a handler
            for (int i = 0; i < 3; ++i) {
                requests.push_back(slow_request(db, cancelled));
                requests.back().start();
            }
        }
        co_await kiln::sleep(20ms);
        scope.cancel();
        co_await join(requests);
        EXPECT_TRUE(scope.idle());
        requests.clear();  // the frames are gone while their answers are still coming
        // The dropped answers are read and thrown away; later queries get their own.
        EXPECT_EQ(co_await db.scalar<int>("SELECT $1::int", 42), 42);
        EXPECT_EQ(co_await db.scalar<std::string>("SELECT $1::text", "after"), "after");
        // A query made in a scope already cancelled fails at once.
        kiln::net::AsyncScope gone;
        gone.cancel();
        kiln::net::AsyncScope::Enter enter(&gone);
        bool thrown = false;
        try {
            co_await db.exec("SELECT 1");
        } catch (const kiln::Cancelled&) {
            thrown = true;
        }
        EXPECT_TRUE(thrown);
    });
    EXPECT_TRUE(cancelled);
}

Task<> awaits_client_closing(pg::Client& db, std::string& outcome) {
    try {
        co_await db.exec("SELECT pg_sleep(0.3)");
        outcome = "answered";
    } catch (const db::Error& e) {
        outcome = e.message();
    }
}

TEST(PgClient, AClientClosedMidQueryFailsItsQueriesAndAnUnawaitedQueryIsDropped) {
    kiln::net::Loop loop;
    std::string outcome;
    run(loop, [&]() -> Task<> {
        auto db = std::make_unique<pg::Client>(pg::Options{.url = pg_url()});
        {
            pg::Query dropped = db->exec("SELECT pg_sleep(0.05), 'never read'");  // never awaited
        }
        EXPECT_EQ(co_await db->scalar<int>("SELECT 3"), 3);  // its own answer, after the dropped one
        Task<> waiting = awaits_client_closing(*db, outcome);
        waiting.start();
        co_await kiln::sleep(20ms);
        db.reset();  // the query is still in flight
        while (!waiting.done()) co_await kiln::sleep(1ms);
    });
    EXPECT_EQ(outcome, "the PostgreSQL client was closed");
}

TEST(PgClient, StatementTimeoutFailsTheQueryAsBusy) {
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url(), .statement_timeout = 100ms});
    run(loop, [&]() -> Task<> {
        auto started = std::chrono::steady_clock::now();
        auto e = co_await error_of<db::BusyError>(db.exec("SELECT pg_sleep(5)"));
        EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
        EXPECT_TRUE(e.has_value());
        if (e) {
            EXPECT_EQ(e->sqlstate(), "57014");
            EXPECT_EQ(e->kind(), db::ErrorKind::Busy);
        }
        EXPECT_EQ(co_await db.scalar<std::string>("SHOW statement_timeout"), "100ms");
        EXPECT_EQ(co_await db.scalar<int>("SELECT 1"), 1);  // the session goes on
    });
}

TEST(PgClient, StatementsThatWouldChangeTheSharedSessionAreRefused) {
    // Every coroutine of the loop pipelines on one connection: a BEGIN there would put
    // their statements in its transaction, a SET would change their session, COPY
    // would leave pipeline mode.
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url(), .pool = 1});
    run(loop, [&]() -> Task<> {
        auto refused = [&](pg::Query q) -> Task<std::string> {
            auto e = co_await error_of<db::Error>(std::move(q));
            if (!e) co_return "not refused";
            co_return e->kind() == db::ErrorKind::Misuse ? std::string(e->what()) : "another error: " + std::string(e->what());
        };
        EXPECT_NE((co_await refused(db.exec("BEGIN"))).find("begin()"), std::string::npos);
        EXPECT_NE((co_await refused(db.exec("  -- a comment\n start transaction"))).find("begin()"), std::string::npos);
        EXPECT_NE((co_await refused(db.exec("/* a /* nested */ one */ COMMIT"))).find("begin()"), std::string::npos);
        EXPECT_NE((co_await refused(db.exec("PREPARE TRANSACTION 'x'"))).find("begin()"), std::string::npos);
        EXPECT_NE((co_await refused(db.exec("COPY (SELECT 1) TO STDOUT"))).find("pipeline"), std::string::npos);
        EXPECT_NE((co_await refused(db.exec("LISTEN news"))).find("listen()"), std::string::npos);
        EXPECT_NE((co_await refused(db.exec("set search_path = nowhere"))).find("session"), std::string::npos);
        EXPECT_NE((co_await refused(db.exec("DISCARD ALL"))).find("session"), std::string::npos);
        EXPECT_NE((co_await refused(db.exec("DEALLOCATE ALL"))).find("session"), std::string::npos);
        // Anywhere in the text: a setting (even a local one: the SELECTs sent beside it
        // share its implicit transaction), a session lock, a temporary table.
        for (auto sql : {"SELECT set_config('search_path', 'nowhere', true)", "select 1, SET_CONFIG('a.b', $1, false)",
                         "SELECT pg_advisory_lock(1)", "SELECT 1 AS x INTO TEMP t", "CREATE TEMP TABLE t (x int)"})
            EXPECT_NE((co_await refused(db.exec(kiln::db::trusted_sql(sql), "x"))).find("begin()"), std::string::npos) << sql;
        // Their look-alikes pass.
        EXPECT_EQ(co_await refused(db.exec("SELECT 'BEGIN'")), "not refused");
        EXPECT_EQ(co_await refused(db.exec("SELECT relname FROM pg_class WHERE relname = 'temperatures'")), "not refused");
        EXPECT_EQ(co_await refused(db.exec("SELECT pg_advisory_xact_lock(1)")), "not refused");
        EXPECT_EQ(co_await db.scalar<std::string>("SHOW search_path"), "\"$user\", public");  // unchanged
        pg::Transaction tx = co_await db.begin();  // the way to a transaction
        EXPECT_EQ(co_await tx.scalar<int>("SELECT 1"), 1);
        co_await tx.commit();
    });
}

TEST(PgClient, AfterALossQueriesFailAtOnceWhileTheServerDoesNotAnswer) {
    // The postmaster stopped: the kernel still accepts connections, and an attempt
    // waits its connect_timeout. Queries meanwhile fail at once, as while waiting to
    // retry, instead of waiting with it.
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url(), .pool = 1, .connect_timeout = 1500ms, .reconnect_min = 20ms});
    pg::Client watcher({.url = pg_url()});
    run(loop, [&]() -> Task<> {
        int backend = co_await db.scalar<int>("SELECT pg_backend_pid()");
        co_await watcher.scalar<int>("SELECT 1");  // its session is up before the pause
        Ctl pause("pause 3000");
        EXPECT_TRUE(co_await until_paused()) << "the server never stopped answering";
        EXPECT_TRUE(co_await watcher.scalar<bool>("SELECT pg_terminate_backend($1)", backend));
        co_await error_of<db::Error>(db.exec("SELECT 1"));  // the loss shows
        co_await kiln::sleep(100ms);                        // an attempt is under way by now
        for (int i = 0; i < 3; ++i) {
            auto t0 = std::chrono::steady_clock::now();
            auto e = co_await error_of<db::Error>(db.exec("SELECT 1"));
            EXPECT_TRUE(e.has_value());
            if (e) {
                EXPECT_EQ(e->kind(), db::ErrorKind::Io);
            }
            // (Waiting on the attempt would take up to its 1.5 s connect timeout; the
            // bound leaves room for a loaded machine.)
            EXPECT_LT(std::chrono::steady_clock::now() - t0, 400ms) << "a query waited on a connect that gets no answer";
            co_await kiln::sleep(50ms);
        }
        while (!pause.done()) co_await kiln::sleep(10ms);
        bool back = false;
        for (auto until = std::chrono::steady_clock::now() + 10s; !back && std::chrono::steady_clock::now() < until;) {
            back = !(co_await error_of<db::Error>(db.exec("SELECT 1"))).has_value();
            if (!back) co_await kiln::sleep(50ms);
        }
        EXPECT_TRUE(back) << "the client did not reconnect after the pause";
    });
}

TEST(PgClient, AnErrorAtCommitReachesItsStatementAndNoOther) {
    // A deferred constraint is checked when the statement's implicit transaction
    // commits: at its Sync, after the statement's own result said it went well. The
    // statement must fail (its row is gone), and what else was in flight must not.
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url(), .pool = 1});
    run(loop, [&]() -> Task<> {
        co_await db.exec("DROP TABLE IF EXISTS deferred_unique");
        co_await db.exec("CREATE TABLE deferred_unique (x int UNIQUE DEFERRABLE INITIALLY DEFERRED)");
        pg::Query before = db.exec("SELECT $1::int", 1);
        pg::Query twice = db.exec("INSERT INTO deferred_unique VALUES ($1), ($1)", 7);
        pg::Query read = db.exec("SELECT $1::int", 2);
        pg::Query once = db.exec("INSERT INTO deferred_unique VALUES ($1)", 8);
        EXPECT_EQ((co_await before)[0].get<int>(0), 1);
        auto e = co_await error_of<db::ConstraintViolation>(std::move(twice));
        EXPECT_TRUE(e.has_value()) << "a write rolled back at commit was reported as done";
        if (e) {
            EXPECT_EQ(e->sqlstate(), "23505");
        }
        EXPECT_EQ((co_await read)[0].get<int>(0), 2);
        auto other = co_await error_of<db::Error>(std::move(once));
        EXPECT_FALSE(other.has_value()) << other->what();
        EXPECT_EQ(co_await db.scalar<int64_t>("SELECT count(*) FROM deferred_unique"), 1);  // 8 only
        EXPECT_EQ(db.connected(), 1u);  // the same connection goes on
        co_await db.exec("DROP TABLE deferred_unique");
    });
}

TEST(PgClient, ManyErrorsAtCommitInOneReadAreAllAnsweredAtOnce) {
    // Each statement failing at its Sync takes five of libpq's results for its two
    // places in the pipeline: all must be taken from one read, none left in libpq's
    // buffer until a later answer (or the reply timeout) comes.
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url(), .pool = 1, .reply_timeout = 5s});
    run(loop, [&]() -> Task<> {
        co_await db.exec("DROP TABLE IF EXISTS deferred_many");
        co_await db.exec("CREATE TABLE deferred_many (x int UNIQUE DEFERRABLE INITIALLY DEFERRED)");
        std::vector<pg::Query> twice;
        for (int i = 0; i < 40; ++i) twice.push_back(db.exec("INSERT INTO deferred_many VALUES ($1), ($1)", i));
        auto started = std::chrono::steady_clock::now();
        for (pg::Query& q : twice) {
            auto e = co_await error_of<db::ConstraintViolation>(std::move(q));
            EXPECT_TRUE(e.has_value()) << "a write rolled back at commit was reported as done";
        }
        EXPECT_LT(std::chrono::steady_clock::now() - started, 2s) << "answers waited for the reply timeout";
        EXPECT_EQ(db.connected(), 1u);
        co_await db.exec("DROP TABLE deferred_many");
    });
}

TEST(PgClient, AFailedGroupLeavesNoPreparedStatementBehind) {
    // A SELECT failing among others rolls their group back and each goes again alone;
    // the statements the group prepared are still prepared on the server (a Parse is
    // not undone by a rollback): kept, or dropped, never forgotten there.
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url(), .pool = 1, .statement_cache = 4});
    run(loop, [&]() -> Task<> {
        for (int i = 0; i < 40; ++i) {
            pg::Query fine = db.exec(kiln::db::trusted_sql("SELECT " + std::to_string(i) + "::int AS n"));
            pg::Query bad = db.exec("SELECT $1::int", "not a number");
            EXPECT_EQ((co_await fine)[0].get<int>(0), i);
            auto e = co_await error_of<db::Error>(std::move(bad));
            EXPECT_TRUE(e.has_value());
        }
        long kept = co_await db.scalar<long>("SELECT count(*) FROM pg_prepared_statements");
        EXPECT_LE(kept, 5);  // this query's own included
    });
}

TEST(PgClient, PastMaxQueuedAQueryFailsAtOnceAsBusy) {
    // A server that falls behind: the line on a connection is bounded, what comes past
    // it fails at once (a 503), and once the line is shorter queries go again.
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url(), .pool = 1, .max_queued = 8});
    run(loop, [&]() -> Task<> {
        std::vector<pg::Query> slow;
        for (int i = 0; i < 8; ++i) slow.push_back(db.exec("WITH s AS (SELECT pg_sleep(0.05)) SELECT $1::int FROM s", i));
        auto started = std::chrono::steady_clock::now();
        auto busy = co_await error_of<db::BusyError>(db.exec("SELECT 1"));
        EXPECT_LT(std::chrono::steady_clock::now() - started, 100ms) << "it waited in line";
        EXPECT_TRUE(busy.has_value());
        if (busy) {
            EXPECT_TRUE(busy->transient());
            EXPECT_NE(busy->message().find("max_queued"), std::string::npos) << busy->message();
        }
        for (int i = 0; i < 8; ++i) EXPECT_EQ((co_await std::move(slow[static_cast<size_t>(i)]))[0].get<int>(0), i);
        EXPECT_EQ(co_await db.scalar<int>("SELECT 2"), 2);
    });
}

TEST(PgClient, AStatementWhosePlanWentStaleIsPreparedAgain) {
    // A table changed under a kept statement (a column added under SELECT *, a type
    // altered): PostgreSQL refuses the cached plan (0A000, "cached plan must not change
    // result type"). A migration run beside a live app must not leave that statement
    // failing on this connection until it is replaced.
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url(), .pool = 1});
    run(loop, [&]() -> Task<> {
        co_await db.exec("DROP TABLE IF EXISTS replanned");
        co_await db.exec("CREATE TABLE replanned (id int, name text)");
        co_await db.exec("INSERT INTO replanned VALUES ($1, $2)", 1, "one");
        pg::Result before = co_await db.exec("SELECT * FROM replanned WHERE id = $1", 1);
        EXPECT_EQ(before.columns(), 2);
        co_await db.exec("ALTER TABLE replanned ADD COLUMN extra int DEFAULT 7");
        auto after = co_await error_of<db::Error>(db.exec("SELECT * FROM replanned WHERE id = $1", 1));
        EXPECT_FALSE(after.has_value()) << after->what();
        pg::Result now = co_await db.exec("SELECT * FROM replanned WHERE id = $1", 1);
        EXPECT_EQ(now.columns(), 3);
        EXPECT_EQ(now[0].get<int>(2), 7);
        co_await db.exec("ALTER TABLE replanned ALTER COLUMN id TYPE bigint");
        pg::Query a = db.exec("SELECT * FROM replanned WHERE id = $1", 1);  // two in flight, both stale
        pg::Query b = db.exec("SELECT * FROM replanned WHERE id = $1", 1);
        EXPECT_EQ((co_await a)[0].get<int64_t>(0), 1);
        EXPECT_EQ((co_await b)[0].get<std::string>(1), "one");
        EXPECT_EQ(db.connected(), 1u);
        co_await db.exec("DROP TABLE replanned");
    });
}

namespace {
std::string read_file(const char* path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}
}  // namespace

TEST(PgClient, ServerNoticesGoToTheErrorLogNotToStderr) {
    // libpq prints notices to stderr unless told otherwise: a worker's stderr may be a
    // terminal, a journal or nothing, and the lines would not have the log's form.
    char log_path[] = "/tmp/kiln-pg-log-XXXXXX";
    char err_path[] = "/tmp/kiln-pg-err-XXXXXX";
    int log_fd = mkstemp(log_path);
    int err_fd = mkstemp(err_path);
    ASSERT_GE(log_fd, 0);
    ASSERT_GE(err_fd, 0);
    int saved_stderr = dup(STDERR_FILENO);
    dup2(err_fd, STDERR_FILENO);
    kiln::util::set_log_fd(log_fd);
    {
        kiln::net::Loop loop;
        pg::Client db({.url = pg_url()});
        run(loop, [&]() -> Task<> {
            co_await db.exec("DROP TABLE IF EXISTS no_table_by_this_name");
            co_await db.exec("DO $$ BEGIN RAISE WARNING 'kiln says % and %', E'one\\ntwo', E'\\033[31m'; END $$");
        });
    }
    kiln::util::set_log_fd(STDERR_FILENO);
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    close(log_fd);
    close(err_fd);
    std::string log = read_file(log_path);
    std::string err = read_file(err_path);
    unlink(log_path);
    unlink(err_path);
    EXPECT_NE(log.find("[info]"), std::string::npos) << log;
    EXPECT_NE(log.find("PostgreSQL NOTICE: table \"no_table_by_this_name\" does not exist, skipping"), std::string::npos) << log;
    EXPECT_NE(log.find("[warn]"), std::string::npos) << log;
    EXPECT_NE(log.find("PostgreSQL WARNING: kiln says one two and ?[31m\n"), std::string::npos) << log;
    EXPECT_EQ(err.find("no_table_by_this_name"), std::string::npos) << err;
    EXPECT_EQ(err.find("kiln says"), std::string::npos) << err;
}

TEST(PgClient, PgoptionsFromTheEnvironmentAreKeptBesideKilnsOwn) {
    // kiln passes libpq an `options` of its own when it sets statement_timeout, which
    // would replace PGOPTIONS; and a check interval PGOPTIONS sets is the user's.
    ::setenv("PGOPTIONS", "-c work_mem=1234kB -c client_connection_check_interval=2500", 1);
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url(), .statement_timeout = 3000ms});
    ::unsetenv("PGOPTIONS");  // read when the client was made
    pg::Client plain({.url = pg_url()});
    run(loop, [&]() -> Task<> {
        EXPECT_EQ(co_await db.scalar<std::string>("SHOW work_mem"), "1234kB");
        EXPECT_EQ(co_await db.scalar<std::string>("SHOW statement_timeout"), "3s");
        const int version = co_await plain.scalar<int>("SELECT current_setting('server_version_num')::int");
        if (version >= 140000) {
            EXPECT_EQ(co_await db.scalar<std::string>("SHOW client_connection_check_interval"), "2500ms");
            EXPECT_EQ(co_await plain.scalar<std::string>("SHOW client_connection_check_interval"), "1s");
        }
        EXPECT_NE(co_await plain.scalar<std::string>("SHOW work_mem"), "1234kB");
    });
}

TEST(PgClient, AQueryTheClientGaveUpOnStopsOnTheServerToo) {
    // The reply timeout closes the connection under a long query. Without
    // client_connection_check_interval the backend would sleep its 20 s out: it only
    // looks at its socket when it writes.
    kiln::net::Loop loop;
    const std::string name = "kiln_given_up_" + std::to_string(::getpid());
    pg::Client db({.url = pg_url() + "?application_name=" + name, .pool = 1, .reply_timeout = 400ms});
    pg::Client watcher({.url = pg_url()});
    run(loop, [&]() -> Task<> {
        auto e = co_await error_of<db::Error>(db.exec("SELECT pg_sleep(20)"));
        EXPECT_TRUE(e.has_value()) << "the reply timeout did not end the query";
        int64_t running = -1;
        for (auto until = std::chrono::steady_clock::now() + 5s; std::chrono::steady_clock::now() < until;) {
            running = co_await watcher.scalar<int64_t>(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' "
                "AND query = 'SELECT pg_sleep(20)'", name);
            if (running == 0) break;
            co_await kiln::sleep(100ms);
        }
        EXPECT_EQ(running, 0) << "PostgreSQL still runs the query 5 s after its client left";
    });
}

TEST(PgClient, AServerThatStopsAnsweringIsLeftAndTheClientReconnects) {
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url(), .pool = 1, .reply_timeout = 1s, .reconnect_min = 20ms});
    run(loop, [&]() -> Task<> {
        // Slow answers that keep coming are not silence: 12 queries of 250 ms sent at
        // once, each with a Sync of its own (a WITH is not grouped as SELECTs are), so
        // an answer arrives every 250 ms for 3 s, three times the limit; then one of
        // 500 ms alone. (The limit leaves 750 ms between answers for a busy machine.)
        std::vector<pg::Query> slow;
        for (int i = 0; i < 12; ++i) slow.push_back(db.exec("WITH s AS (SELECT pg_sleep(0.25)) SELECT 1 FROM s"));
        for (pg::Query& q : slow) {
            std::optional<db::Error> e = co_await error_of<db::Error>(std::move(q));
            EXPECT_FALSE(e.has_value()) << e->what();
        }
        co_await db.exec("SELECT pg_sleep(0.5)");
        // The server process of this session stops (SIGSTOP: the kernel still
        // acknowledges, so TCP alone would wait for ever).
        int backend = co_await db.scalar<int>("SELECT pg_backend_pid()");
        if (::kill(backend, SIGSTOP) != 0) {
            ADD_FAILURE() << "cannot stop PostgreSQL's backend " << backend;
            co_return;
        }
        // Should the client wait for ever, the server goes on after 10 s: a failure, not a hang.
        std::atomic<bool> resumed{false};
        std::thread watchdog([&] {
            for (int i = 0; i < 1000 && !resumed; ++i) std::this_thread::sleep_for(10ms);
            ::kill(backend, SIGCONT);
        });
        auto started = std::chrono::steady_clock::now();
        pg::Query first = db.exec("SELECT 1");
        pg::Query second = db.exec("SELECT 2");  // in flight beside it: fails with it
        auto e1 = co_await error_of<db::Error>(std::move(first));
        auto e2 = co_await error_of<db::Error>(std::move(second));
        auto waited = std::chrono::steady_clock::now() - started;
        resumed = true;  // it finds its client gone and ends
        watchdog.join();
        if (!e1 || !e2) {
            ADD_FAILURE() << "a stopped server answered";
            co_return;
        }
        EXPECT_EQ(e1->kind(), db::ErrorKind::Io);
        EXPECT_EQ(e2->kind(), db::ErrorKind::Io);
        EXPECT_NE(std::string(e1->what()).find("no answer from PostgreSQL in 1000 ms"), std::string::npos) << e1->what();
        EXPECT_GE(waited, 950ms);
        EXPECT_LT(waited, 8s);
        // A new session, by itself.
        int again = 0;
        for (int i = 0; i < 100 && !again; ++i) {
            bool failed = false;
            try {
                again = co_await db.scalar<int>("SELECT pg_backend_pid()");
            } catch (const db::Error&) {
                failed = true;  // (no co_await in a handler)
            }
            if (failed) co_await kiln::sleep(20ms);
        }
        EXPECT_NE(again, 0) << "the client did not connect again";
        EXPECT_NE(again, backend);
    });
}

namespace {
// A port on 127.0.0.1 nobody listens on.
int unused_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}
}  // namespace

// A URL naming two hosts (a failover pair) whose first refuses: libpq tries the next
// on a new socket, which nearly always gets the closed one's number. It was never
// watched, so every attempt ended at the connect timeout and the second host was
// never reached.
TEST(PgClient, AFirstHostThatRefusesIsPassedForTheNext) {
    std::string url = pg_url();
    const std::string at = "@127.0.0.1:";
    ASSERT_NE(url.find(at), std::string::npos) << url;
    url.replace(url.find(at), at.size(), at + std::to_string(unused_port()) + ",127.0.0.1:");
    kiln::net::Loop loop;
    pg::Client db({.url = url, .pool = 1, .connect_timeout = 2s});
    run(loop, [&]() -> Task<> {
        auto started = std::chrono::steady_clock::now();
        int one = co_await db.scalar<int>("SELECT 1");
        EXPECT_EQ(one, 1);
        EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
    });
}

// SQL built at run time (an ORDER BY per user choice) made a prepared statement per
// text for the connection's life, in the worker and in the server session.
TEST(PgClient, PreparedStatementsAreBoundedPerConnection) {
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url(), .pool = 1, .statement_cache = 8});
    run(loop, [&]() -> Task<> {
        for (int round = 0; round < 2; ++round) {  // the second: each prepared again
            for (int i = 0; i < 50; ++i) {
                int got = co_await db.scalar<int>(kiln::db::trusted_sql("SELECT $1::int + " + std::to_string(i)), 1);
                EXPECT_EQ(got, 1 + i);
            }
        }
        // Pipelined, several texts in flight at once: none is forgotten under its use.
        std::vector<pg::Query> many;
        for (int i = 0; i < 30; ++i) many.push_back(db.exec(kiln::db::trusted_sql("SELECT " + std::to_string(i) + " AS n")));
        for (int i = 0; i < 30; ++i) {
            pg::Result r = co_await std::move(many[static_cast<size_t>(i)]);
            EXPECT_EQ(r[0].get<int>(0), i);
        }
        long kept = co_await db.scalar<long>("SELECT count(*) FROM pg_prepared_statements");
        EXPECT_LE(kept, 9);  // this query's own included
    });
}

TEST(PgClient, WithoutAServerQueriesFailFastWithTheReason) {
    int port = unused_port();
    kiln::net::Loop loop;
    // A retry a second away (half to all of it, with the jitter): a query that waited for
    // it would take 500 ms at least, so "at once" can be told apart on a loaded machine.
    pg::Client db({.url = "postgresql://kiln@127.0.0.1:" + std::to_string(port) + "/postgres", .pool = 2,
                   .reconnect_min = 1000ms});
    run(loop, [&]() -> Task<> {
        auto first = co_await error_of<db::Error>(db.exec("SELECT 1"));  // the first attempt's reason
        EXPECT_TRUE(first.has_value());
        if (first) {
            EXPECT_EQ(first->kind(), db::ErrorKind::Io);
            EXPECT_NE(first->message().find("PostgreSQL"), std::string::npos) << first->message();
            EXPECT_NE(first->message().find("Connection refused"), std::string::npos) << first->message();
        }
        auto started = std::chrono::steady_clock::now();
        auto next = co_await error_of<db::Error>(db.exec("SELECT 1"));  // none up now: at once
        EXPECT_LT(std::chrono::steady_clock::now() - started, 300ms);
        EXPECT_TRUE(next.has_value());
        if (next) {
            EXPECT_EQ(next->kind(), db::ErrorKind::Io);
            EXPECT_NE(next->message().find("no connection to PostgreSQL"), std::string::npos) << next->message();
            EXPECT_NE(next->message().find("retrying in"), std::string::npos) << next->message();
        }
    });
    EXPECT_EQ(db.connected(), 0u);
}

TEST(PgClient, OutsideALoopThreadIsALogicError) {
    pg::Client db({.url = pg_url()});
    EXPECT_THROW((void)db.exec("SELECT 1"), std::logic_error);
}

TEST(PgClient, PerLoopGivesEachLoopThreadItsOwnClientFromTheServerSettings) {
    kiln::ServerOptions settings;
    settings.database_url = pg_url();
    settings.database_pool = 1;
    settings.database_statement_timeout_ms = 200;
    settings.database_max_queued = 7;
    EXPECT_EQ(pg::options_from(settings).max_queued, 7u);
    pg::PerLoop db;
    db.configure(pg::options_from(settings));
    EXPECT_THROW(db.local(), std::logic_error);  // not on a loop thread
    std::mutex mu;
    std::set<long> backends;
    std::set<const pg::Client*> clients;
    auto serve = [&] {
        kiln::net::Loop loop;  // its client closes with it, on this thread
        run(loop, [&]() -> Task<> {
            pg::Client& mine = db.local();
            EXPECT_EQ(&mine, &db.local());  // the same one for every call on this loop
            long pid = co_await mine.scalar<long>("SELECT pg_backend_pid()");
            // the settings reached the session: a statement past 200 ms fails as Busy
            auto slow = co_await error_of<db::BusyError>(mine.exec("SELECT pg_sleep(1)"));
            EXPECT_TRUE(slow.has_value());
            std::lock_guard<std::mutex> lock(mu);
            backends.insert(pid);
            clients.insert(&mine);
        });
    };
    std::thread a(serve), b(serve);
    a.join();
    b.join();
    EXPECT_EQ(clients.size(), 2u);
    EXPECT_EQ(backends.size(), 2u);  // two loops, two sessions
}

enum Phase { Before, Down, After };
struct Tally {
    Phase phase = Before;
    bool stop = false;
    int ok[3] = {0, 0, 0}, lost = 0, unavailable = 0, other = 0;
    std::chrono::steady_clock::duration slowest_failure_while_down{};
    std::vector<std::string> surprises;
};

Task<> load_worker(pg::Client& db, int w, Tally& t) {
    for (int i = 0; !t.stop; ++i) {
        Phase at = t.phase;
        bool failed = false;
        auto t0 = std::chrono::steady_clock::now();
        try {
            int v = co_await db.scalar<int>("SELECT $1::int FROM pg_sleep(0.002)", w * 100000 + i);
            if (v != w * 100000 + i) t.surprises.push_back("a wrong answer");
            ++t.ok[t.phase];
        } catch (const db::Error& e) {
            const std::string& m = e.message();
            if (e.kind() == db::ErrorKind::Io && m.starts_with("connection to PostgreSQL lost: ")) {
                ++t.lost;  // in flight when the server went
            } else if (e.kind() == db::ErrorKind::Io &&
                       (m.starts_with("no connection to PostgreSQL") || m.starts_with("cannot connect to PostgreSQL"))) {
                ++t.unavailable;  // while it was down
            } else {
                ++t.other;
                t.surprises.push_back(e.what());
            }
            if (at == Down && t.phase == Down)
                t.slowest_failure_while_down = std::max(t.slowest_failure_while_down, std::chrono::steady_clock::now() - t0);
            failed = true;
        }
        if (failed) co_await kiln::sleep(5ms);  // a failure may come at once: do not spin
    }
}

TEST(PgClient, ServerRestartUnderLoadFailsInFlightQueriesThenRecovers) {
    kiln::net::Loop loop;
    pg::Client db({.url = pg_url(), .pool = 2});
    Tally tally;
    std::string started_before, started_after;
    run(loop, [&]() -> Task<> {
        started_before = co_await db.scalar<std::string>("SELECT pg_postmaster_start_time()::text");
        std::vector<Task<>> load;
        for (int w = 0; w < 20; ++w) {
            load.push_back(load_worker(db, w, tally));
            load.back().start();
        }
        while (tally.ok[Before] < 200) co_await kiln::sleep(5ms);
        {
            Ctl down("stop");
            while (!down.done()) co_await kiln::sleep(5ms);  // queries keep going meanwhile
            EXPECT_EQ(down.status(), 0);
        }
        tally.phase = Down;
        co_await kiln::sleep(300ms);  // down for a while: queries must fail fast, not hang
        {
            Ctl up("start");
            while (!up.done()) co_await kiln::sleep(5ms);
            EXPECT_EQ(up.status(), 0);
        }
        tally.phase = After;
        // The client reconnects by itself (back-off ≤ 5 s); nothing here touches it.
        auto deadline = std::chrono::steady_clock::now() + 15s;
        while (tally.ok[After] < 200 && std::chrono::steady_clock::now() < deadline) co_await kiln::sleep(10ms);
        tally.stop = true;
        co_await join(load);
        started_after = co_await db.scalar<std::string>("SELECT pg_postmaster_start_time()::text");
        // Both connections come back, each after its own back-off: 200 answers on the
        // first may come before the second is up (it failed here under load).
        deadline = std::chrono::steady_clock::now() + 10s;
        while (db.connected() < 2 && std::chrono::steady_clock::now() < deadline) co_await kiln::sleep(10ms);
    });
    std::printf("restart under load: %d ok before, %d lost in flight, %d refused while down, %d ok after\n",
                tally.ok[Before], tally.lost, tally.unavailable, tally.ok[After]);
    EXPECT_NE(started_before, started_after) << "the server was not restarted";
    EXPECT_GT(tally.lost, 0) << "queries in flight at the shutdown must fail with 'connection to PostgreSQL lost'";
    EXPECT_GT(tally.unavailable, 0) << "queries while it was down must fail (fast), not wait";
    EXPECT_EQ(tally.other, 0);
    EXPECT_TRUE(tally.surprises.empty()) << tally.surprises.front();
    EXPECT_GE(tally.ok[After], 200) << "the client did not come back after the restart";
    EXPECT_LT(tally.slowest_failure_while_down, 1s);
    EXPECT_EQ(db.connected(), 2u);
}

}  // namespace
