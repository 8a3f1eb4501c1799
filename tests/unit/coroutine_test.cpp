// Coroutine handlers and middleware through the in-process client: waits on the
// loop, values from awaited tasks, exceptions mapped as for plain handlers,
// middleware around them, deadlines that cancel the waits and answer 504.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include <kiln/kiln.hpp>
#include <kiln/sleep.hpp>
#include <kiln/testing.hpp>

using namespace std::chrono_literals;
using kiln::Task;
using kiln::testing::Client;

namespace {

Task<int> slow_square(int x) {
    co_await kiln::sleep(5);  // a plain number is milliseconds
    co_return x * x;
}

TEST(Coroutines, AHandlerWaitsAndAnswers) {
    kiln::App app;
    app.get("/square/:n", [](kiln::Request& req, kiln::Response& res) -> Task<> {
        int n = req.param<int>("n");
        int sq = co_await slow_square(n);
        int again = co_await slow_square(2);
        res.text(std::to_string(sq) + " " + std::to_string(again));
    });
    Client client(app);
    auto started = std::chrono::steady_clock::now();
    auto r = client.get("/square/7");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "49 4");
    EXPECT_GE(std::chrono::steady_clock::now() - started, 4ms);  // real waits (the loop's clock is coarse)
    EXPECT_EQ(client.get("/square/x").status, 404);                // param<int> before the first wait
}

TEST(Coroutines, ExceptionsMapLikePlainHandlers) {
    kiln::App app;
    app.get("/teapot", [](kiln::Request&, kiln::Response&) -> Task<> {
        co_await kiln::sleep(1ms);
        throw kiln::HttpError(418, "short and stout");
    });
    app.get("/broken", [](kiln::Request&, kiln::Response&) -> Task<> {
        co_await kiln::sleep(1ms);
        throw std::runtime_error("secret detail");
    });
    app.get("/early", [](kiln::Request&, kiln::Response&) -> Task<> {
        throw kiln::HttpError(409, "before any wait");
        co_return;
    });
    Client client(app);
    auto r = client.get("/teapot");
    EXPECT_EQ(r.status, 418);
    EXPECT_EQ(r.body, "short and stout\n");
    r = client.get("/broken");
    EXPECT_EQ(r.status, 500);
    EXPECT_EQ(r.body.find("secret"), std::string::npos);
    EXPECT_EQ(client.get("/early").status, 409);
}

TEST(Coroutines, MiddlewareOfBothKindsAroundThem) {
    kiln::App app;
    app.use([](kiln::Request&, kiln::Response& res, kiln::Next& next) {
        res.header("X-Frame-Options", "DENY");  // before next(): on every answer, error pages too
        next();
    });
    app.use([](kiln::Request&, kiln::Response& res, kiln::Next& next) -> Task<> {
        auto t0 = std::chrono::steady_clock::now();
        co_await next;  // the handler has finished here, waits and all
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
        res.header("X-Status-Seen", std::to_string(res.status()));
        res.header("X-Waited", ms.count() >= 10 ? "yes" : "no");
    });
    app.get("/slow", [](kiln::Request&, kiln::Response& res) -> Task<> {
        co_await kiln::sleep(12ms);
        res.status(201).text("made");
    });
    app.get("/plain", [](kiln::Request&, kiln::Response& res) { res.text("plain"); });
    app.get("/fails", [](kiln::Request&, kiln::Response&) -> Task<> {
        co_await kiln::sleep(1ms);
        throw kiln::HttpError(403, "no");
    });
    Client client(app);
    auto r = client.get("/slow");
    EXPECT_EQ(r.status, 201);
    EXPECT_EQ(r.body, "made");
    EXPECT_EQ(r.header("X-Status-Seen"), "201");
    EXPECT_EQ(r.header("X-Waited"), "yes");
    EXPECT_EQ(r.header("X-Frame-Options"), "DENY");
    r = client.get("/plain");  // a plain handler inside a coroutine chain
    EXPECT_EQ(r.body, "plain");
    EXPECT_EQ(r.header("X-Status-Seen"), "200");
    r = client.get("/fails");
    EXPECT_EQ(r.status, 403);
    EXPECT_EQ(r.header("X-Status-Seen"), "403");  // the error page is made inside the chain
    EXPECT_EQ(r.header("X-Frame-Options"), "DENY");
    EXPECT_EQ(client.get("/nothing").status, 404);
}

// A middleware's plain next() in front of a handler that waits: the handler runs to
// its end, even when the middleware is a coroutine that did not co_await next, or a
// plain one that threw after next() (before, the handler's frame was destroyed
// mid-wait: an empty 200, or a handler abandoned half done).
TEST(Coroutines, AHandlerStartedByAPlainNextRunsToItsEnd) {
    kiln::App app;
    static int finished = 0;
    app.use([](kiln::Request& req, kiln::Response&, kiln::Next& next) -> Task<> {
        if (req.path() == "/unawaited") next();  // should have been co_await next
        else co_await next;
    });
    app.use([](kiln::Request& req, kiln::Response&, kiln::Next& next) {
        next();
        if (req.path() == "/throws-after") throw kiln::HttpError(409, "after next");
    });
    auto handler = [](kiln::Request&, kiln::Response& res) -> Task<> {
        co_await kiln::sleep(5ms);
        ++finished;
        res.text("x");
    };
    app.get("/unawaited", handler);
    app.get("/throws-after", handler);
    Client client(app);
    auto r = client.get("/unawaited");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "x");
    EXPECT_EQ(finished, 1);
    r = client.get("/throws-after");
    EXPECT_EQ(r.status, 409);
    EXPECT_EQ(finished, 2);
}

TEST(Coroutines, ADeadlineCancelsTheWaitsAndAnswers504) {
    kiln::App app;
    static bool cancelled_seen = false;
    app.get("/stuck", [](kiln::Request&, kiln::Response& res) -> Task<> {
        try {
            co_await kiln::sleep(10s);
        } catch (const kiln::Cancelled&) {
            cancelled_seen = true;
            throw;
        }
        res.text("never");
    }, {.deadline_ms = 30});
    Client client(app);
    auto started = std::chrono::steady_clock::now();
    auto r = client.get("/stuck");
    EXPECT_EQ(r.status, 504);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
    EXPECT_TRUE(cancelled_seen);
}

TEST(Coroutines, SessionChangesAfterAWaitAreSaved) {
    kiln::App app;
    app.get("/count", [](kiln::Request& req, kiln::Response& res) -> Task<> {
        co_await kiln::sleep(1ms);
        kiln::Session& s = req.session();
        int64_t n = s.get_int("n").value_or(0) + 1;
        s.set_int("n", n);
        res.text(std::to_string(n));
    });
    Client client(app);
    EXPECT_EQ(client.get("/count").body, "1");
    EXPECT_EQ(client.get("/count").body, "2");
}

struct Greeter {
    std::string greeting = "hello";  // a member: lives as long as the request waits
    Task<> hi(kiln::Request& req, kiln::Response& res) {
        co_await kiln::sleep(2ms);
        res.text(greeting + " " + std::string(req.param("name")));
    }
};

struct Ticker {
    Task<> handle(kiln::Request&, kiln::Response& res) {
        co_await kiln::sleep(1ms);
        res.text("tick");
    }
};

TEST(Coroutines, ControllerMethodsAndHandlerClasses) {
    kiln::App app;
    app.get("/hi/:name", &Greeter::hi);
    app.get<Ticker>("/tick");
    Client client(app);
    EXPECT_EQ(client.get("/hi/ann").body, "hello ann");
    EXPECT_EQ(client.get("/tick").body, "tick");
}

TEST(Coroutines, SleepOutsideALoopIsALogicError) {
    auto t = []() -> Task<> { co_await kiln::sleep(1ms); }();
    t.start();
    ASSERT_TRUE(t.done());
    EXPECT_THROW(t.result(), std::logic_error);
}

}  // namespace
