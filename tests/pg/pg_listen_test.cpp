// LISTEN/NOTIFY as a stream (pg::Client::listen) against a real PostgreSQL
// (tests/pg/pg_server.py): notifications in order from this client and from other
// sessions, every listener of a channel gets each one, only committed ones arrive,
// only what was sent after listen() is queued, a cancelled wait ends cleanly, and a
// server restart, or a LISTEN session's server gone silent, is reported once, after
// which the listener is subscribed again by itself.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <kiln/pg.hpp>
#include <kiln/sleep.hpp>

#include "net/async.hpp"
#include "pg_test_support.hpp"

using namespace std::chrono_literals;
using kiln::Task;
using kiln::pg_test::Ctl;
using kiln::pg_test::pg_url;
using kiln::pg_test::run;
namespace db = kiln::db;
namespace pg = kiln::pg;

namespace {

Task<> notify_in_transaction(pg::Client& c, std::string payload, bool commit) {
    try {
        co_await c.transaction([&](pg::Transaction& tx) -> Task<> {
            co_await tx.exec("SELECT pg_notify('news', $1)", payload);
            if (!commit) throw std::runtime_error("rolled back");
        });
    } catch (const std::runtime_error&) {
    }
}

}  // namespace

TEST(PgListen, NotificationsArriveInOrderFromAnySessionToEveryListener) {
    run([&]() -> Task<> {
        pg::Client c({.url = pg_url()});
        pg::Client other({.url = pg_url()});
        pg::Listener a = co_await c.listen("news");
        pg::Listener b = co_await c.listen("news");
        pg::Listener quiet = co_await c.listen("elsewhere");
        int me = co_await c.scalar<int>("SELECT pg_backend_pid()");
        co_await c.notify("news", "first");
        co_await other.notify("news", "second");
        co_await other.exec("NOTIFY news, 'third'");
        std::vector<std::string> got_a, got_b;
        for (int i = 0; i < 3; ++i) {
            pg::Notification n = co_await a.next();
            EXPECT_EQ(n.channel, "news");
            if (i == 0) {
                EXPECT_EQ(n.sender, me);
            }
            got_a.push_back(n.payload);
            pg::Notification m = co_await b.next();
            got_b.push_back(m.payload);
        }
        EXPECT_EQ(got_a, (std::vector<std::string>{"first", "second", "third"}));
        EXPECT_EQ(got_b, got_a);
        EXPECT_EQ(quiet.pending(), 0u);

        // From a transaction: when it commits; a rolled-back one's never.
        co_await notify_in_transaction(other, "rolled back", false);
        co_await notify_in_transaction(other, "committed", true);
        pg::Notification n = co_await a.next();
        EXPECT_EQ(n.payload, "committed");

        bool misuse = false;
        try {
            pg::Listener bad = co_await c.listen(std::string(64, 'x'));
        } catch (const db::Error& e) {
            misuse = e.kind() == db::ErrorKind::Misuse;
        }
        EXPECT_TRUE(misuse);
    });
}

// A listener that does not read holds at most 64 MiB (as well as 65,536 notifications):
// 9,000 of nearly 8,000 bytes, 71 MB, were all kept before.
TEST(PgListen, AnUnreadQueueIsBoundedInBytes) {
    run([&]() -> Task<> {
        pg::Client c({.url = pg_url()});
        pg::Listener big = co_await c.listen("big");
        pg::Listener done = co_await c.listen("big_done");
        co_await c.exec("SELECT pg_notify('big', g || repeat('x', 7890)) FROM generate_series(1, 9000) AS g");
        co_await c.exec("NOTIFY big_done");
        // They come on the listening session, in commit order: all of them before this.
        co_await done.next();
        EXPECT_LT(big.pending(), 8500u);
        EXPECT_GT(big.pending(), 8000u);
        std::string why;
        try {
            co_await big.next();
        } catch (const db::Error& e) {
            why = e.what();
        }
        EXPECT_NE(why.find("were dropped"), std::string::npos) << why;
        pg::Notification n = co_await big.next();  // the oldest went, the newest are kept
        EXPECT_GT(std::stoi(n.payload), 500) << n.payload.substr(0, 8);
    });
}

TEST(PgListen, ACancelledWaitEndsCleanlyAndOnlyWhatCameAfterListenIsQueued) {
    run([&]() -> Task<> {
        pg::Client c({.url = pg_url()});
        {
            pg::Listener gone = co_await c.listen("temporary");
        }
        co_await c.notify("temporary", "to nobody");  // its listener is gone
        pg::Listener kept = co_await c.listen("kept");
        pg::Listener again = co_await c.listen("temporary");

        bool cancelled = false;
        co_await kiln::test::run_for_at_most(20ms, [&]() -> Task<> {
            try {
                co_await kept.next();
            } catch (const kiln::Cancelled&) {
                cancelled = true;
            }
        });
        EXPECT_TRUE(cancelled);
        // The listener works on after the cancelled wait.
        co_await c.notify("kept", "still here");
        co_await c.notify("temporary", "for again");
        pg::Notification n = co_await kept.next();
        EXPECT_EQ(n.payload, "still here");
        pg::Notification m = co_await again.next();
        EXPECT_EQ(m.payload, "for again");  // not "to nobody", sent before it listened
        co_await kiln::sleep(50ms);
        EXPECT_EQ(kept.pending(), 0u);
        EXPECT_EQ(again.pending(), 0u);
    });
}

TEST(PgListen, AServerRestartIsReportedOnceThenTheListenerIsBackByItself) {
    run([&]() -> Task<> {
        pg::Client c({.url = pg_url(), .reconnect_min = 20ms, .reconnect_max = 200ms});
        pg::Listener l = co_await c.listen("restart");
        co_await c.notify("restart", "before");
        pg::Notification before = co_await l.next();
        EXPECT_EQ(before.payload, "before");
        {
            Ctl stop("stop");
            while (!stop.done()) co_await kiln::sleep(5ms);
            EXPECT_EQ(stop.status(), 0);
        }
        std::string lost;
        try {
            co_await l.next();
        } catch (const db::Error& e) {
            if (e.kind() == db::ErrorKind::Io) lost = e.message();
        }
        EXPECT_NE(lost.find("missed"), std::string::npos) << lost;
        {
            Ctl start("start");
            while (!start.done()) co_await kiln::sleep(5ms);
            EXPECT_EQ(start.status(), 0);
        }
        // Subscribed again by itself: a notification sent once things are back arrives.
        std::string payload;
        for (int attempt = 0; attempt < 200 && payload.empty(); ++attempt) {
            try {
                co_await c.notify("restart", "after");
            } catch (const db::Error&) {  // the query connection may still be reconnecting
            }
            co_await kiln::sleep(20ms);
            if (l.pending() > 0) payload = (co_await l.next()).payload;
        }
        EXPECT_EQ(payload, "after");
    });
}

TEST(PgListen, ASilentServerIsNoticedByTheProbeAndTheListenerIsBackByItself) {
    run([&]() -> Task<> {
        // A name of its own, so its sessions are found whatever they ran last (the
        // LISTEN session's probe may already have run on a loaded machine).
        std::string name = "kiln_listen_probe_" + std::to_string(::getpid());
        pg::Client c({.url = pg_url() + "?application_name=" + name, .pool = 1, .reply_timeout = 500ms,
                      .reconnect_min = 20ms, .reconnect_max = 200ms});
        std::string channel = "silent";
        pg::Listener l = co_await c.listen(channel);
        // The LISTEN session's server process: this client's other session.
        int backend = 0;
        try {
            backend = co_await c.scalar<int>(
                "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()", name);
        } catch (const db::Error& e) {
            ADD_FAILURE() << "the LISTEN session was not found: " << e.what();
            co_return;
        }
        if (::kill(backend, SIGSTOP) != 0) {
            ADD_FAILURE() << "cannot stop PostgreSQL's backend " << backend;
            co_return;
        }
        std::atomic<bool> resumed{false};
        std::thread watchdog([&] {  // a failure after 5 s, never a stopped backend left behind
            for (int i = 0; i < 500 && !resumed; ++i) std::this_thread::sleep_for(10ms);
            ::kill(backend, SIGCONT);
        });
        // Nothing is owed on a LISTEN session, so only the probe can notice. Bounded:
        // without it next() would wait for ever.
        std::string lost;
        auto waited = co_await kiln::test::run_for_at_most(4s, [&]() -> Task<> {
            try {
                co_await l.next();
            } catch (const db::Error& e) {
                if (e.kind() == db::ErrorKind::Io) lost = e.message();
            } catch (const kiln::Cancelled&) {
            }
        });
        resumed = true;
        watchdog.join();
        EXPECT_NE(lost.find("no answer from PostgreSQL in 500 ms"), std::string::npos) << "'" << lost << "'";
        EXPECT_NE(lost.find("missed"), std::string::npos) << lost;
        EXPECT_LT(waited, 2500ms);  // at most one probe interval and one reply timeout, with slack
        // Subscribed again by itself, on a new session.
        std::string payload;
        for (int attempt = 0; attempt < 200 && payload.empty(); ++attempt) {
            co_await c.notify(channel, "after");
            co_await kiln::sleep(20ms);
            if (l.pending() > 0) payload = (co_await l.next()).payload;
        }
        EXPECT_EQ(payload, "after");
    });
}
