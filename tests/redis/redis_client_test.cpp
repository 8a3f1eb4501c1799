// kiln::redis::Client against a real Redis (started by tests/redis/redis_server.py, URL
// in KILN_TEST_REDIS_URL): typed calls, arguments that are bytes, many coroutines
// pipelined on one connection, errors that stay with their own command, fail-fast
// while Redis is down, recovery after a restart, a stuck server timed out, pub/sub
// across a restart, and the read-through cache (a miss computed once per loop).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <kiln/redis.hpp>
#include <kiln/sleep.hpp>

#include "net/loop.hpp"
#include "support/async_test.hpp"

using namespace std::chrono_literals;
using kiln::Task;
using kiln::test::join;
using kiln::test::run;
namespace redis = kiln::redis;

namespace {

std::string redis_url() {
    const char* url = std::getenv("KILN_TEST_REDIS_URL");
    if (!url || !*url)
        throw std::runtime_error("KILN_TEST_REDIS_URL is not set: run this test through tests/redis/redis_server.py (ctest does)");
    return url;
}

struct Ctl : kiln::test::Ctl {
    explicit Ctl(std::string action) : kiln::test::Ctl("KILN_TEST_REDIS_CTL", std::move(action)) {}
};

// The kind of Error a command ends with, or nullopt if it succeeded.
Task<std::optional<redis::Error::Kind>> error_of(redis::Command c) {
    try {
        co_await c;
    } catch (const redis::Error& e) {
        co_return e.kind();
    }
    co_return std::nullopt;
}

// Polls until `probe` (a client with a short command timeout) gets no answer: the
// control script that stops the server takes a moment to start, longer on a loaded
// machine. Bounded (1.5 s).
Task<bool> stopped(redis::Client& probe) {
    for (int i = 0; i < 150; ++i) {
        std::optional<redis::Error::Kind> failed = co_await error_of(probe.command("PING"));
        if (failed) co_return true;
        co_await kiln::sleep(10ms);
    }
    co_return false;
}

// Polls until r's PING succeeds (bounded): the client reconnects by itself.
Task<bool> eventually(redis::Client& r, std::chrono::milliseconds limit) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
        std::optional<redis::Error::Kind> e = co_await error_of(r.command("PING"));
        if (!e) co_return true;
        co_await kiln::sleep(20ms);
    }
    co_return false;
}

TEST(RedisClient, TypedCallsAndBinaryArguments) {
    kiln::net::Loop loop;
    redis::Client r({.url = redis_url()});
    run(loop, [&]() -> Task<> {
        co_await r.del("t:k");
        EXPECT_EQ(co_await r.get("t:k"), std::nullopt);
        std::string tricky = std::string("a b\r\n$3\r\n\"q\"") + std::string(1, '\0') + "end";
        co_await r.set("t:k", tricky);
        EXPECT_EQ(co_await r.get("t:k"), tricky);  // bytes as given, NUL and CRLF included
        EXPECT_EQ(co_await r.incr("t:n"), 1);
        EXPECT_EQ(co_await r.incr("t:n"), 2);
        EXPECT_TRUE(co_await r.expire("t:n", 100s));
        EXPECT_FALSE(co_await r.expire("t:absent", 100s));
        redis::Reply ttl = co_await r.command("TTL", "t:n");
        EXPECT_GT(ttl.integer(), 90);
        co_await r.set("t:e", "v", 50s);
        redis::Reply ttl2 = co_await r.command("TTL", "t:e");
        EXPECT_GT(ttl2.integer(), 40);
        EXPECT_EQ(co_await r.del("t:n"), 1);
        EXPECT_EQ(co_await r.del("t:n"), 0);
        std::vector<std::string> fields = {"f1", "1", "f2", "2"};
        co_await r.command("HSET", "t:h", fields);
        redis::Reply all = co_await r.command("HGETALL", "t:h");
        EXPECT_EQ(all.elements().size(), 4u);
        redis::Reply f = co_await r.command("HINCRBY", "t:h", "f2", 40);
        EXPECT_EQ(f.integer(), 42);
        redis::Reply d = co_await r.command("INCRBYFLOAT", "t:f", 0.5);
        EXPECT_EQ(d.str(), "0.5");
        EXPECT_THROW(d.integer(), redis::Error);  // a string read as an integer: Type
    });
}

TEST(RedisClient, AnErrorStaysWithItsCommand) {
    kiln::net::Loop loop;
    redis::Client r({.url = redis_url()});
    run(loop, [&]() -> Task<> {
        co_await r.set("t:str", "x");
        redis::Command before = r.command("SET", "t:a", "1");
        redis::Command bad = r.command("LPUSH", "t:str", "y");  // WRONGTYPE
        redis::Command unknown = r.command("NOSUCHCOMMAND", 1);
        redis::Command after = r.command("GET", "t:a");
        co_await before;
        EXPECT_EQ(co_await error_of(std::move(bad)), redis::Error::Kind::Server);
        EXPECT_EQ(co_await error_of(std::move(unknown)), redis::Error::Kind::Server);
        redis::Reply a = co_await after;
        EXPECT_EQ(a.str(), "1");
        try {
            co_await r.command("LPUSH", "t:str", "y");
            ADD_FAILURE() << "no error";
        } catch (const redis::Error& e) {
            EXPECT_NE(std::string(e.what()).find("WRONGTYPE"), std::string::npos) << e.what();
        }
    });
}

TEST(RedisClient, ManyCoroutinesPipelineOnOneConnection) {
    kiln::net::Loop loop;
    redis::Client r({.url = redis_url(), .pool = 1});
    run(loop, [&]() -> Task<> {
        co_await r.del("t:counter");
        // Sent in one loop iteration: replies come back in order, each to its own coroutine.
        std::vector<redis::Command> commands;
        for (int i = 0; i < 2000; ++i) commands.push_back(r.command("INCR", "t:counter"));
        for (int i = 0; i < 2000; ++i) {
            redis::Command& c = commands[static_cast<size_t>(i)];  // named: GCC 12 copies a subscript in co_await
            redis::Reply reply = co_await c;
            EXPECT_EQ(reply.integer(), i + 1);
        }
        std::vector<Task<>> tasks;
        int done = 0;
        for (int i = 0; i < 200; ++i) {
            tasks.push_back([](redis::Client& c, int n, int& count) -> Task<> {
                std::string key = "t:p" + std::to_string(n);
                std::string value(static_cast<size_t>(n) * 97, 'v');  // up to ~19 KB: several reads per batch
                co_await c.set(key, value);
                std::optional<std::string> back = co_await c.get(key);
                EXPECT_EQ(back, value);
                ++count;
            }(r, i, done));
            tasks.back().start();
        }
        co_await join(tasks);
        EXPECT_EQ(done, 200);
        EXPECT_EQ(r.connected(), 1u);
    });
}

TEST(RedisClient, RefusesABadUrl) {
    EXPECT_THROW(redis::Client({.url = "http://127.0.0.1:6379"}), redis::Error);
    EXPECT_THROW(redis::Client({.url = "redis://127.0.0.1:99999"}), redis::Error);
    EXPECT_THROW(redis::Client({.url = "redis://127.0.0.1:6379/x"}), redis::Error);
    EXPECT_THROW(redis::Client({.url = "redis://"}), redis::Error);
    redis::Endpoint e = redis::parse_url("redis://user:p%40ss@[::1]:7000/3");
    EXPECT_EQ(e.host, "::1");
    EXPECT_EQ(e.port, 7000);
    EXPECT_EQ(e.user, "user");
    EXPECT_EQ(e.password, "p@ss");
    EXPECT_EQ(e.db, 3);
    EXPECT_EQ(redis::parse_url("unix:///run/redis.sock?db=2").unix_path, "/run/redis.sock");
    // The message names the URL without its password (it goes to logs).
    for (const char* bad : {"redis://user:hunter2-secret@127.0.0.1:6379/x", "redis://hunter2-secret@127.0.0.1:0",
                            "redis://:hunter2-secret%zz@127.0.0.1", "redis://:hunter2/secret@127.0.0.1:0",
                            ":hunter2-secret@127.0.0.1:6379"}) {
        try {
            redis::parse_url(bad);
            ADD_FAILURE() << bad << " was accepted";
        } catch (const redis::Error& err) {
            std::string what = err.what();
            EXPECT_EQ(what.find("hunter2"), std::string::npos) << what;
            EXPECT_NE(what.find("***@127.0.0.1"), std::string::npos) << what;
        }
    }
}

TEST(RedisClient, UsesTheDatabaseAndPasswordOfTheUrl) {
    kiln::net::Loop loop;
    redis::Client r0({.url = redis_url()});
    redis::Client r5({.url = redis_url() + "/5"});
    redis::Client wrong({.url = "redis://:nopassword@" + redis_url().substr(8)});
    run(loop, [&]() -> Task<> {
        co_await r5.set("t:db", "five");
        co_await r0.del("t:db");
        EXPECT_EQ(co_await r5.get("t:db"), "five");
        EXPECT_EQ(co_await r0.get("t:db"), std::nullopt);
        // A password the server does not want: the set-up fails and says why.
        try {
            co_await wrong.command("PING");
            co_await kiln::sleep(100ms);
            co_await wrong.command("PING");
            ADD_FAILURE() << "a refused AUTH went unnoticed";
        } catch (const redis::Error& e) {
            EXPECT_EQ(e.kind(), redis::Error::Kind::Io) << e.what();
            EXPECT_NE(std::string(e.what()).find("AUTH"), std::string::npos) << e.what();
        }
    });
}

TEST(RedisClient, FailsFastWhenNothingListens) {
    kiln::net::Loop loop;
    // Port 1: nothing listens there (tcpmux is not served on a test machine).
    redis::Client r({.url = "redis://127.0.0.1:1", .reconnect_min = 20ms, .reconnect_max = 50ms});
    run(loop, [&]() -> Task<> {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 5; ++i) {
            try {
                co_await r.get("k");
                ADD_FAILURE() << "a command succeeded with no server";
            } catch (const redis::Error& e) {
                EXPECT_EQ(e.kind(), redis::Error::Kind::Io);
                // Between reconnect attempts: "no connection to Redis"; a command that met
                // an attempt under way fails with it ("connection to Redis lost: ...").
                // Either way at once, saying why (timing decides which; both are clear).
                std::string why = e.what();
                if (i > 0) {
                    EXPECT_TRUE(why.find("no connection to Redis") != std::string::npos ||
                                why.find("connection to Redis lost") != std::string::npos) << why;
                }
            }
            co_await kiln::sleep(10ms);
        }
        EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
    });
}

TEST(RedisClient, RidesOutARestart) {
    kiln::net::Loop loop;
    redis::Client r({.url = redis_url(), .pool = 2, .reconnect_min = 20ms, .reconnect_max = 200ms});
    run(loop, [&]() -> Task<> {
        co_await r.set("t:survives", "yes");  // the append-only file keeps it
        for (int i = 0; i < 50 && r.connected() < 2; ++i) co_await kiln::sleep(10ms);  // the other's PING
        EXPECT_EQ(r.connected(), 2u);
        int ok = 0, failed = 0;
        {
            Ctl stop("stop");
            while (!stop.done()) {
                std::optional<redis::Error::Kind> e = co_await error_of(r.command("INCR", "t:load"));
                if (e) {
                    EXPECT_EQ(*e, redis::Error::Kind::Io);
                    ++failed;
                } else {
                    ++ok;
                }
                co_await kiln::sleep(2ms);
            }
            EXPECT_EQ(stop.status(), 0);
        }
        EXPECT_GT(failed + ok, 0);
        // Down: every command fails at once, none waits.
        auto t0 = std::chrono::steady_clock::now();
        EXPECT_EQ(co_await error_of(r.command("PING")), redis::Error::Kind::Io);
        EXPECT_LT(std::chrono::steady_clock::now() - t0, 100ms);
        {
            Ctl start("start");
            while (!start.done()) co_await kiln::sleep(10ms);
            EXPECT_EQ(start.status(), 0);
        }
        EXPECT_TRUE(co_await eventually(r, 5s));
        EXPECT_EQ(co_await r.get("t:survives"), "yes");
        for (int i = 0; i < 50 && r.connected() < 2; ++i) co_await kiln::sleep(20ms);
        EXPECT_EQ(r.connected(), 2u);
    });
}

TEST(RedisClient, AStuckServerTimesOut) {
    kiln::net::Loop loop;
    redis::Client r({.url = redis_url(), .command_timeout = 200ms, .reconnect_min = 20ms});
    redis::Client probe({.url = redis_url(), .command_timeout = 50ms, .reconnect_min = 20ms});
    run(loop, [&]() -> Task<> {
        co_await r.command("PING");
        co_await probe.command("PING");  // connected now: its 50 ms are for answers only
        Ctl pause("pause 2000");  // SIGSTOP for two seconds
        EXPECT_TRUE(co_await stopped(probe)) << "the server never stopped";
        auto t0 = std::chrono::steady_clock::now();
        try {
            co_await r.command("PING");
            ADD_FAILURE() << "a stopped server answered";
        } catch (const redis::Error& e) {
            EXPECT_EQ(e.kind(), redis::Error::Kind::Io);
            EXPECT_NE(std::string(e.what()).find("no reply from Redis in 200 ms"), std::string::npos) << e.what();
        }
        EXPECT_LT(std::chrono::steady_clock::now() - t0, 700ms);
        while (!pause.done()) co_await kiln::sleep(10ms);
        EXPECT_TRUE(co_await eventually(r, 5s));
    });
}

// Redis says it cannot serve for now (-BUSY while a script runs; -LOADING, -READONLY
// and their kin alike): Busy, which is transient (a handler that lets it escape answers
// 503), not Server (500). The script is then killed, and its own answer is Server.
TEST(RedisClient, ABusyServerIsTransientNotAServerError) {
    kiln::net::Loop loop;
    redis::Client hog({.url = redis_url()});
    redis::Client other({.url = redis_url()});
    run(loop, [&]() -> Task<> {
        co_await other.command("PING");  // connected before Redis is busy
        co_await other.command("CONFIG", "SET", "busy-reply-threshold", "50");
        redis::Command spin = hog.command("EVAL", "while true do end", 0);
        std::optional<redis::Error> busy;
        for (int i = 0; i < 100 && !busy; ++i) {  // bounded: 2 s
            co_await kiln::sleep(20ms);
            try {
                co_await other.command("GET", "t:a");
            } catch (const redis::Error& e) {
                busy = e;
            }
        }
        co_await other.command("SCRIPT", "KILL");
        std::optional<redis::Error::Kind> killed = co_await error_of(std::move(spin));
        co_await other.command("CONFIG", "SET", "busy-reply-threshold", "5000");
        if (!busy) {
            ADD_FAILURE() << "Redis never answered -BUSY";
            co_return;
        }
        EXPECT_EQ(busy->kind(), redis::Error::Kind::Busy) << busy->what();
        EXPECT_TRUE(busy->transient());
        EXPECT_NE(std::string(busy->what()).find("BUSY"), std::string::npos) << busy->what();
        EXPECT_EQ(killed, redis::Error::Kind::Server);
        try {
            co_await other.command("NOSUCHCOMMAND");
        } catch (const redis::Error& e) {
            EXPECT_EQ(e.kind(), redis::Error::Kind::Server);
            EXPECT_FALSE(e.transient());
        }
        EXPECT_EQ((co_await other.command("PING")).str(), "PONG");
    });
}

TEST(RedisClient, AfterALossCommandsFailAtOnceUntilRedisAnswersAgain) {
    // A stopped server still accepts connections (the kernel does): a reconnect there
    // is not up until Redis answers, and a command meanwhile fails at once instead of
    // waiting out its command_timeout.
    kiln::net::Loop loop;
    redis::Client r({.url = redis_url(), .connect_timeout = 1000ms, .command_timeout = 300ms, .reconnect_min = 20ms});
    redis::Client probe({.url = redis_url(), .command_timeout = 50ms, .reconnect_min = 20ms});
    run(loop, [&]() -> Task<> {
        co_await r.command("PING");
        co_await probe.command("PING");
        Ctl pause("pause 2500");
        EXPECT_TRUE(co_await stopped(probe)) << "the server never stopped";
        EXPECT_EQ(co_await error_of(r.command("PING")), redis::Error::Kind::Io);  // its 300 ms
        co_await kiln::sleep(100ms);  // reconnected by now, its set-up unanswered
        EXPECT_EQ(r.connected(), 0u);
        for (int i = 0; i < 3; ++i) {
            auto t0 = std::chrono::steady_clock::now();
            EXPECT_EQ(co_await error_of(r.command("PING")), redis::Error::Kind::Io);
            EXPECT_LT(std::chrono::steady_clock::now() - t0, 100ms) << "a command waited on a server that does not answer";
            co_await kiln::sleep(50ms);
        }
        while (!pause.done()) co_await kiln::sleep(10ms);
        EXPECT_TRUE(co_await eventually(r, 5s));
        EXPECT_EQ(r.connected(), 1u);
    });
}

// Connections the Redis server has taken since it started.
Task<int64_t> connections_received(redis::Client& admin) {
    redis::Reply info = co_await admin.command("INFO", "stats");
    std::string text(info.str());
    const std::string field = "total_connections_received:";
    size_t at = text.find(field);
    if (at == std::string::npos) ADD_FAILURE() << "INFO stats has no " << field;
    co_return at == std::string::npos ? -1 : std::stoll(text.substr(at + field.size()));
}

TEST(RedisClient, ARefusedSetUpBacksOff) {
    // AUTH refused: the connection was made, but it is not up. Retries double their
    // wait instead of coming back every reconnect_min.
    kiln::net::Loop loop;
    redis::Client admin({.url = redis_url()});
    redis::Client wrong({.url = "redis://:nopassword@" + redis_url().substr(8), .reconnect_min = 10ms,
                         .reconnect_max = 2000ms});
    run(loop, [&]() -> Task<> {
        int64_t before = co_await connections_received(admin);
        co_await error_of(wrong.command("PING"));  // connects (answered or not: it came with the refused AUTH)
        co_await kiln::sleep(1000ms);
        int64_t made = co_await connections_received(admin) - before;
        // 10, 20, 40 ... 640 ms, each wait a random half to all of that: 7 to 9
        // attempts in the second; every 10 ms would be ~90.
        EXPECT_GE(made, 3);
        EXPECT_LE(made, 15) << "the back-off was reset by connects that Redis refused";
    });
}

TEST(RedisClient, CommandsThatWouldBreakTheSharedConnectionAreRefused) {
    kiln::net::Loop loop;
    redis::Client r({.url = redis_url()});
    run(loop, [&]() -> Task<> {
        auto refused = [&](redis::Command c) -> Task<std::string> {
            try {
                co_await c;
            } catch (const redis::Error& e) {
                if (e.kind() == redis::Error::Kind::Misuse) co_return e.what();
                co_return std::string("another error: ") + e.what();
            }
            co_return "not refused";
        };
        // Each would break the pipeline every coroutine of the loop shares: a callback
        // hiredis files under a channel, a transaction taking in others' commands, a
        // connection switched to another database, a command holding it.
        EXPECT_NE((co_await refused(r.command("PSUBSCRIBE", "news.*"))).find("Client::subscribe"), std::string::npos);
        EXPECT_NE((co_await refused(r.command("subscribe", "news"))).find("Client::subscribe"), std::string::npos);
        EXPECT_NE((co_await refused(r.command("MONITOR"))).find("changes the connection"), std::string::npos);
        EXPECT_NE((co_await refused(r.command("multi"))).find("EVAL"), std::string::npos);
        EXPECT_NE((co_await refused(r.command("WATCH", "k"))).find("EVAL"), std::string::npos);
        EXPECT_NE((co_await refused(r.command("SELECT", 2))).find("URL"), std::string::npos);
        EXPECT_NE((co_await refused(r.command("CLIENT", "reply", "OFF"))).find("changes"), std::string::npos);
        EXPECT_NE((co_await refused(r.command("BLPOP", "q", 1))).find("hold the connection"), std::string::npos);
        EXPECT_NE((co_await refused(r.command("XREAD", "COUNT", 1, "block", 10, "STREAMS", "s", "$"))).find("hold"),
                  std::string::npos);
        // Their look-alikes pass, and the connection works on.
        EXPECT_EQ(co_await refused(r.command("CLIENT", "SETNAME", "kiln-test")), "not refused");
        EXPECT_EQ(co_await refused(r.command("XREAD", "COUNT", 1, "STREAMS", "t:nostream", "0")), "not refused");
        EXPECT_EQ(co_await refused(r.command("PUBLISH", "news", "x")), "not refused");
        co_await r.set("t:after-refusals", "ok");
        EXPECT_EQ(co_await r.get("t:after-refusals"), "ok");
    });
}

TEST(RedisClient, PublishSubscribe) {
    kiln::net::Loop loop;
    redis::Client r({.url = redis_url(), .reconnect_min = 20ms, .reconnect_max = 100ms});
    run(loop, [&]() -> Task<> {
        redis::Subscription a = co_await r.subscribe("t:news");
        redis::Subscription b = co_await r.subscribe("t:news");
        redis::Subscription other = co_await r.subscribe("t:other");
        EXPECT_EQ(co_await r.publish("t:news", "first"), 1);  // one connection subscribed
        co_await r.publish("t:news", "second");
        redis::Message m = co_await a.next();
        EXPECT_EQ(m.channel, "t:news");
        EXPECT_EQ(m.payload, "first");
        EXPECT_EQ((co_await a.next()).payload, "second");
        EXPECT_EQ((co_await b.next()).payload, "first");
        EXPECT_EQ(b.pending(), 1u);
        EXPECT_EQ(other.pending(), 0u);

        // A restart: next() says once that messages were missed, then goes on.
        {
            Ctl stop("stop");
            while (!stop.done()) co_await kiln::sleep(10ms);
        }
        {
            Ctl start("start");
            while (!start.done()) co_await kiln::sleep(10ms);
        }
        EXPECT_TRUE(co_await eventually(r, 5s));
        try {
            co_await other.next();
            ADD_FAILURE() << "the loss was not reported";
        } catch (const redis::Error& e) {
            EXPECT_EQ(e.kind(), redis::Error::Kind::Io);
        }
        // Subscribed again by itself: wait until Redis counts the subscriber.
        for (int i = 0; i < 100; ++i) {
            redis::Reply n = co_await r.command("PUBSUB", "NUMSUB", "t:other");
            if (n.elements().size() == 2 && n.elements()[1].integer() == 1) break;
            co_await kiln::sleep(20ms);
        }
        co_await r.publish("t:other", "after");
        redis::Message after = co_await other.next();
        EXPECT_EQ(after.payload, "after");
        // b had "second" queued before the loss: it comes first, then the loss.
        EXPECT_EQ((co_await b.next()).payload, "second");
        bool loss = false;
        try {
            co_await b.next();
        } catch (const redis::Error& e) {
            loss = e.kind() == redis::Error::Kind::Io;
        }
        EXPECT_TRUE(loss);
    });
}

// Redis 7 gives a new ACL user no channel (acl-pubsub-default resetchannels): one
// allowed app:* only must be able to subscribe there, probe channel included.
struct AclUser {
    redis::Client& admin;
    std::string url;
    static Task<AclUser> make(redis::Client& admin, std::string channels) {
        co_await admin.command("ACL", "SETUSER", "kiln_acl_test", "reset", "on", ">acl password", "resetchannels",
                               channels, "+@all", "~*");
        co_return AclUser{admin, "redis://kiln_acl_test:acl%20password@" + redis_url().substr(8)};
    }
    Task<> drop() { co_await admin.command("ACL", "DELUSER", "kiln_acl_test"); }
};

TEST(RedisClient, ASubscriberLimitedToItsChannelsProbesOnOneOfThem) {
    kiln::net::Loop loop;
    redis::Client admin({.url = redis_url()});
    run(loop, [&]() -> Task<> {
        AclUser user = co_await AclUser::make(admin, "&app:*");
        {
            redis::Client r({.url = user.url, .probe_channel = "app:probe"});
            redis::Subscription s = co_await r.subscribe("app:news");
            co_await admin.publish("app:news", "hello");
            EXPECT_EQ((co_await s.next()).payload, "hello");
        }
        {
            // kiln's own default is refused to this user: the subscription fails (at once,
            // or as soon as the refusal follows its confirmation) and says why.
            redis::Client r({.url = user.url, .reconnect_min = 100ms});
            try {
                redis::Subscription s = co_await r.subscribe("app:news");
                co_await s.next();
                ADD_FAILURE() << "subscribed with a probe channel the ACL refuses";
            } catch (const redis::Error& e) {
                EXPECT_NE(std::string(e.what()).find("NOPERM"), std::string::npos) << e.what();
            }
        }
        co_await user.drop();
    });
}

TEST(RedisClient, ASubscriberRedisDropsAtOnceBacksOff) {
    // A channel the ACL no longer allows ends the subscriber connection each time it
    // is asked for again (Redis closes the subscriber at the change, and hiredis on the
    // refusal): the reconnects back off, as refused set-ups do, instead of coming back
    // every reconnect_min.
    kiln::net::Loop loop;
    redis::Client admin({.url = redis_url()});
    run(loop, [&]() -> Task<> {
        AclUser user = co_await AclUser::make(admin, "&app:*");
        {
            redis::Client r({.url = user.url, .reconnect_min = 10ms, .reconnect_max = 2000ms, .probe_channel = "app:probe"});
            redis::Subscription s = co_await r.subscribe("app:news");
            int64_t before = co_await connections_received(admin);
            co_await admin.command("ACL", "SETUSER", "kiln_acl_test", "resetchannels", "&app:probe");
            co_await kiln::sleep(1000ms);
            int64_t made = co_await connections_received(admin) - before;
            EXPECT_GE(made, 1);
            EXPECT_LE(made, 15) << "the back-off was reset by connections Redis dropped at once";
        }
        co_await user.drop();
    });
}

// With a pool of several connections one publisher's messages still arrive in the
// order it published them: before, each took the lightest connection, and Redis ran
// the connections' commands in whatever order they came.
TEST(RedisClient, APublishersMessagesKeepTheirOrderThroughAPool) {
    kiln::net::Loop loop;
    redis::Client r({.url = redis_url(), .pool = 4});
    run(loop, [&]() -> Task<> {
        redis::Subscription s = co_await r.subscribe("t:order");
        std::vector<redis::Command> sent;
        constexpr int n = 2000;
        for (int i = 0; i < n; ++i) sent.push_back(r.command("PUBLISH", "t:order", std::to_string(i)));
        for (auto& c : sent) co_await c;
        int out_of_order = 0;
        for (int i = 0; i < n; ++i) {
            redis::Message m = co_await s.next();
            if (m.payload != std::to_string(i)) ++out_of_order;
        }
        EXPECT_EQ(out_of_order, 0);
    });
}

TEST(RedisClient, ASilentServerIsNoticedOnASubscriptionAndItSubscribesAgain) {
    kiln::net::Loop loop;
    redis::Client r({.url = redis_url(), .command_timeout = 200ms, .reconnect_min = 20ms, .reconnect_max = 100ms});
    redis::Client probe({.url = redis_url(), .command_timeout = 50ms, .reconnect_min = 20ms});
    run(loop, [&]() -> Task<> {
        redis::Subscription s = co_await r.subscribe("t:silent");
        // Quiet for three probe intervals: a server that answers its probes is alive,
        // message or not.
        co_await kiln::sleep(700ms);
        co_await r.publish("t:silent", "after quiet");
        EXPECT_EQ((co_await s.next()).payload, "after quiet");
        // A second of messages crosses five probes: each message arrives once, in order.
        for (int i = 0; i < 40; ++i) {
            co_await r.publish("t:silent", std::to_string(i));
            co_await kiln::sleep(25ms);
        }
        for (int i = 0; i < 40; ++i) EXPECT_EQ((co_await s.next()).payload, std::to_string(i));
        EXPECT_EQ(s.pending(), 0u);
        co_await probe.command("PING");
        Ctl pause("pause 3000");  // SIGSTOP for three seconds
        EXPECT_TRUE(co_await stopped(probe)) << "the server never stopped";
        // Nothing is owed on a subscribed connection, so only its PINGs can tell. The
        // wait is bounded: without them next() would wait for a message for ever.
        std::string lost;
        auto waited = co_await kiln::test::run_for_at_most(2500ms, [&]() -> Task<> {
            try {
                co_await s.next();
            } catch (const redis::Error& e) {
                if (e.kind() == redis::Error::Kind::Io) lost = e.what();
            } catch (const kiln::Cancelled&) {
            }
        });
        EXPECT_NE(lost.find("no reply from Redis in 200 ms"), std::string::npos) << "'" << lost << "'";
        EXPECT_LT(waited, 1500ms);  // two PING intervals and slack; the pause lasts 3 s
        while (!pause.done()) co_await kiln::sleep(10ms);
        // Subscribed again by itself once the server is back.
        EXPECT_TRUE(co_await eventually(r, 5s));
        for (int i = 0; i < 100; ++i) {
            redis::Reply n = co_await r.command("PUBSUB", "NUMSUB", "t:silent");
            if (n.elements().size() == 2 && n.elements()[1].integer() == 1) break;
            co_await kiln::sleep(20ms);
        }
        co_await r.publish("t:silent", "after");
        EXPECT_EQ((co_await s.next()).payload, "after");
    });
}

TEST(RedisClient, CacheReadsThroughAndSurvivesAnOutage) {
    redis::PerLoop per_loop({.url = redis_url()});  // outlives the loop, as a PerLoop must
    redis::Cache cache(per_loop, "t:cache:");
    redis::PerLoop nowhere({.url = "redis://127.0.0.1:1"});
    redis::Cache dead(nowhere);
    kiln::net::Loop loop;
    run(loop, [&]() -> Task<> {
        co_await cache.invalidate("page");
        int calls = 0;
        auto make = [&]() -> Task<std::string> {
            ++calls;
            co_return "rendered " + std::to_string(calls);
        };
        EXPECT_EQ(co_await cache.get_or_set("page", 60s, make), "rendered 1");
        EXPECT_EQ(co_await cache.get_or_set("page", 60s, make), "rendered 1");
        EXPECT_EQ(calls, 1);
        co_await cache.invalidate("page");
        EXPECT_EQ(co_await cache.get_or_set("page", 60s, make), "rendered 2");
        // Redis unreachable: the value is made and returned, not stored.
        EXPECT_EQ(co_await dead.get_or_set("page", 60s, make), "rendered 3");
        EXPECT_EQ(co_await dead.get_or_set("page", 60s, make), "rendered 4");

        // Redis refusing the write (maxmemory reached under noeviction: OOM): the page
        // still gets its value, unstored. Every miss was an error (500) before.
        redis::Client admin({.url = redis_url()});
        co_await admin.command("CONFIG", "SET", "maxmemory-policy", "noeviction");
        co_await admin.command("CONFIG", "SET", "maxmemory", "1");
        std::string got, failed;
        try {
            got = co_await cache.get_or_set("full", 60s, make);
        } catch (const std::exception& e) {
            failed = e.what();
        }
        co_await admin.command("CONFIG", "SET", "maxmemory", "0");
        EXPECT_EQ(got, "rendered 5") << failed;
        // A ttl of 0 stores nothing (it was stored without expiry, for ever).
        EXPECT_EQ(co_await cache.get_or_set("zero", 0s, make), "rendered 6");
        EXPECT_FALSE((co_await admin.get("t:cache:zero")).has_value());
    });
}

// A key that expires under load: the requests that miss it on one loop while it is
// computed wait for that computation instead of each running their own (before, ten
// misses ran fn ten times). What fn throws reaches every one of them; a computing
// request that is cancelled leaves the computation to one of those waiting. Redis
// down, the misses are shared too (the database behind fn is what they would swamp).
TEST(RedisClient, CacheComputesAMissOncePerLoop) {
    redis::PerLoop per_loop({.url = redis_url()});
    redis::Cache cache(per_loop, "t:flight:");
    redis::PerLoop nowhere({.url = "redis://127.0.0.1:1"});
    redis::Cache dead(nowhere);
    kiln::net::Loop loop;
    run(loop, [&]() -> Task<> {
        int calls = 0;
        auto slow = [&]() -> Task<std::string> {
            int n = ++calls;
            co_await kiln::sleep(100ms);
            co_return "value " + std::to_string(n);
        };
        auto misses = [&](redis::Cache& c, std::string key, int count, std::vector<std::string>& got) {
            std::vector<Task<>> tasks;
            for (int i = 0; i < count; ++i) {
                tasks.push_back([](redis::Cache& to, std::string k, auto& fn, std::vector<std::string>& out) -> Task<> {
                    try {
                        out.push_back(co_await to.get_or_set(k, 60s, fn));
                    } catch (const std::exception& e) {
                        out.push_back(std::string("threw: ") + e.what());
                    }
                }(c, key, slow, got));
                tasks.back().start();
            }
            return tasks;
        };
        for (redis::Cache* c : {&cache, &dead}) {
            co_await cache.invalidate("hot");
            calls = 0;
            std::vector<std::string> got;
            std::vector<Task<>> tasks = misses(*c, "hot", 10, got);
            co_await join(tasks);
            EXPECT_EQ(calls, 1) << (c == &dead ? "Redis down" : "Redis up");
            EXPECT_EQ(got, std::vector<std::string>(10, "value 1"));
        }

        // What fn throws, every waiting request gets; nothing is stored.
        co_await cache.invalidate("bad");
        calls = 0;
        std::vector<std::string> got;
        std::vector<Task<>> tasks;
        for (int i = 0; i < 5; ++i) {
            tasks.push_back([](redis::Cache& c, int& made, std::vector<std::string>& out) -> Task<> {
                try {
                    out.push_back(co_await c.get_or_set("bad", 60s, [&]() -> Task<std::string> {
                        ++made;
                        co_await kiln::sleep(50ms);
                        throw std::runtime_error("the database is down");
                    }));
                } catch (const std::exception& e) {
                    out.push_back(std::string("threw: ") + e.what());
                }
            }(cache, calls, got));
            tasks.back().start();
        }
        co_await join(tasks);
        EXPECT_EQ(calls, 1);
        EXPECT_EQ(got, std::vector<std::string>(5, "threw: the database is down"));
        redis::Client admin({.url = redis_url()});
        EXPECT_FALSE((co_await admin.get("t:flight:bad")).has_value());

        // The computing request is cancelled 30 ms in: one of the three waiting
        // computes anew, for the others.
        co_await cache.invalidate("hot");
        calls = 0;
        got.clear();
        Task<> first = [](redis::Cache& c, auto& fn, std::vector<std::string>& out) -> Task<> {
            co_await kiln::test::run_for_at_most(30ms, [&]() -> Task<> { out.push_back(co_await c.get_or_set("hot", 60s, fn)); });
        }(cache, slow, got);
        first.start();
        for (int i = 0; calls == 0 && i < 5000; ++i) co_await kiln::sleep(1ms);
        EXPECT_EQ(calls, 1) << "the first request's computation did not start within 5 s";
        tasks = misses(cache, "hot", 3, got);
        tasks.push_back(std::move(first));
        co_await join(tasks);
        EXPECT_EQ(calls, 2);
        EXPECT_EQ(got, std::vector<std::string>(3, "value 2"));
        EXPECT_EQ(co_await admin.get("t:flight:hot"), "value 2");

        // A write and invalidate() while a computation runs: a miss after it computes
        // anew (it would have been given the value read before the write), and the
        // older value is not stored over the newer.
        co_await cache.invalidate("hot");
        calls = 0;
        got.clear();
        tasks = misses(cache, "hot", 1, got);
        for (int i = 0; calls == 0 && i < 5000; ++i) co_await kiln::sleep(1ms);
        co_await cache.invalidate("hot");  // (the write)
        std::vector<Task<>> after = misses(cache, "hot", 1, got);
        co_await join(tasks);
        co_await join(after);
        EXPECT_EQ(calls, 2);
        EXPECT_EQ(got, (std::vector<std::string>{"value 1", "value 2"}));
        EXPECT_EQ(co_await admin.get("t:flight:hot"), "value 2");
    });
}

TEST(RedisClient, BelongsToItsLoopThread) {
    redis::Client r({.url = redis_url()});
    kiln::net::Loop loop;
    run(loop, [&]() -> Task<> { co_await r.command("PING"); });
    std::thread other([&] {
        kiln::net::Loop loop2;
        EXPECT_THROW(run(loop2, [&]() -> Task<> { co_await r.command("PING"); }), std::logic_error);
    });
    other.join();
    EXPECT_THROW((void)r.command("PING"), std::logic_error);  // no loop at all
}

}  // namespace
