// kiln::security_headers(): the headers every page gets, what a handler or a route
// can change, and that error pages and streams get them too, on every way out of a
// chain that waits.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>

#include <kiln/kiln.hpp>
#include <kiln/sleep.hpp>
#include <kiln/testing.hpp>

#include "app/head_hook.hpp"

using kiln::Task;

namespace {
constexpr const char* kDefaultCsp =
    "default-src 'self'; base-uri 'self'; form-action 'self'; frame-ancestors 'self'; object-src 'none'";

void expect_all(const kiln::testing::Result& r, const std::string& what) {
    EXPECT_EQ(r.header("Content-Security-Policy").value_or(""), kDefaultCsp) << what;
    EXPECT_EQ(r.header("X-Content-Type-Options"), "nosniff") << what;
    EXPECT_EQ(r.header("Referrer-Policy"), "strict-origin-when-cross-origin") << what;
    EXPECT_EQ(r.header("X-Frame-Options"), "SAMEORIGIN") << what;
}

void routes(kiln::App& app) {
    app.get("/", [](kiln::Request&, kiln::Response& res) { res.html("<p>hi</p>"); });
    app.get("/own-csp", [](kiln::Request&, kiln::Response& res) {
        res.header("Content-Security-Policy", "default-src 'none'");
        res.text("x");
    });
    app.get("/widget", [](kiln::Request& req, kiln::Response& res) {
        kiln::skip_security_headers(req);
        res.html("<p>embed me</p>");
    });
    app.get("/boom", [](kiln::Request&, kiln::Response&) { throw std::runtime_error("x"); });
}
}  // namespace

TEST(SecurityHeaders, EveryPageGetsTheDefaults) {
    kiln::App app;
    app.use(kiln::security_headers());
    routes(app);
    kiln::testing::Client client(app);
    for (const char* path : {"/", "/boom", "/no-such-page"}) {
        auto r = client.get(path);
        expect_all(r, path);
        EXPECT_FALSE(r.header("Strict-Transport-Security")) << "plain HTTP: HSTS would mean nothing";
    }
}

TEST(SecurityHeaders, HandlersAndRoutesHaveAWayOut) {
    kiln::App app;
    app.use(kiln::security_headers({.frame_options = "DENY", .except = {"/own-csp"}}));
    routes(app);
    kiln::testing::Client client(app);
    EXPECT_EQ(client.get("/").header("X-Frame-Options"), "DENY");
    auto own = client.get("/own-csp");  // also under an excepted prefix
    EXPECT_EQ(own.header("Content-Security-Policy"), "default-src 'none'");
    EXPECT_FALSE(own.header("X-Frame-Options"));
    auto widget = client.get("/widget");
    EXPECT_FALSE(widget.header("Content-Security-Policy"));
    EXPECT_FALSE(widget.header("X-Frame-Options"));
}

TEST(SecurityHeaders, HstsOnlyOverHttps) {
    kiln::App app;
    app.use(kiln::security_headers({.hsts_include_subdomains = true}));
    routes(app);
    kiln::testing::Client client(app);
    client.https(true);
    EXPECT_EQ(client.get("/").header("Strict-Transport-Security"), "max-age=31536000; includeSubDomains");
    kiln::App off;
    off.use(kiln::security_headers({.hsts_max_age_s = 0}));
    routes(off);
    kiln::testing::Client again(off);
    again.https(true);
    EXPECT_FALSE(again.get("/").header("Strict-Transport-Security"));
}

TEST(SecurityHeaders, AHeaderTheHandlerSetIsKept) {
    kiln::App app;
    app.use(kiln::security_headers());
    routes(app);
    kiln::testing::Client client(app);
    auto r = client.get("/own-csp");
    EXPECT_EQ(r.header("Content-Security-Policy"), "default-src 'none'");
    EXPECT_EQ(r.header("X-Frame-Options"), "SAMEORIGIN");
}

// A chain that waits returns from a plain middleware's next() at its first wait: the
// headers go on when the head leaves, so no way out after a co_await loses them.
TEST(SecurityHeaders, ErrorPagesAfterAWaitGetThemToo) {
    kiln::App app;
    app.use(kiln::security_headers());
    app.get("/throws-after-wait", [](kiln::Request&, kiln::Response& res) -> Task<> {
        res.header("X-Early", "1");
        co_await kiln::sleep(1);
        throw std::runtime_error("after the wait");
    });
    app.get("/stuck", [](kiln::Request&, kiln::Response&) -> Task<> { co_await kiln::sleep(10'000); },
            {.deadline_ms = 20});
    kiln::testing::Client client(app);
    auto thrown = client.get("/throws-after-wait");
    EXPECT_EQ(thrown.status, 500);
    expect_all(thrown, "a 500 after a co_await");
    auto late = client.get("/stuck");
    EXPECT_EQ(late.status, 504);
    expect_all(late, "the deadline's 504");
}

TEST(SecurityHeaders, StreamsGetThemWithTheirHead) {
    kiln::App app;
    app.use(kiln::security_headers());
    app.get("/stream", [](kiln::Request&, kiln::Response& res) {
        res.write("a");
        res.write("b");
    });
    app.get("/stream-after-wait", [](kiln::Request&, kiln::Response& res) -> Task<> {
        co_await kiln::sleep(1);
        res.write("c");
    });
    app.get("/events", [](kiln::Request&, kiln::Response& res) { res.event_stream().send("hi"); });
    kiln::testing::Client client(app);
    for (const char* path : {"/stream", "/stream-after-wait", "/events"}) {
        auto r = client.get(path);
        EXPECT_EQ(r.status, 200) << path;
        expect_all(r, path);
    }
}

TEST(SecurityHeaders, TheWayOutWorksAfterAWaitAndByWholeSegments) {
    kiln::App app;
    app.use(kiln::security_headers({.except = {"/embed"}}));
    app.get("/late-skip", [](kiln::Request& req, kiln::Response& res) -> Task<> {
        co_await kiln::sleep(1);
        kiln::skip_security_headers(req);
        res.text("framed elsewhere");
    });
    for (const char* path : {"/embed", "/embed/player", "/embedded-admin"})
        app.get(path, [](kiln::Request&, kiln::Response& res) { res.text("x"); });
    kiln::testing::Client client(app);
    EXPECT_FALSE(client.get("/late-skip").header("X-Frame-Options")) << "skipped after a co_await";
    EXPECT_FALSE(client.get("/embed").header("X-Frame-Options"));
    EXPECT_FALSE(client.get("/embed/player").header("X-Frame-Options"));
    expect_all(client.get("/embedded-admin"), "a prefix covers whole segments, not /embedded-admin");
}

// Chunks kept rather than sent (the test client, the hybrid pool) go with their head
// when the handler clears them: the page it makes instead gets the headers again.
TEST(SecurityHeaders, AClearedResponseGetsThemAgain) {
    kiln::App app;
    app.use(kiln::security_headers());
    app.get("/changed-mind", [](kiln::Request&, kiln::Response& res) {
        res.write("partial ");
        res.clear();
        res.status(503).text("not now");
    });
    kiln::testing::Client client(app);
    auto r = client.get("/changed-mind");
    EXPECT_EQ(r.status, 503);
    EXPECT_EQ(r.body, "not now");
    expect_all(r, "after clear()");
}

// What would fail on every request (a policy with a line break, from a configuration
// file) fails at start-up instead, naming its field; so does an `except` that would
// cover every page.
TEST(SecurityHeaders, BadOptionsAreRefusedWhenTheMiddlewareIsMade) {
    auto message = [](kiln::SecurityHeaders o) -> std::string {
        try {
            kiln::security_headers(std::move(o));
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "accepted";
    };
    EXPECT_NE(message({.content_security_policy = "default-src 'self';\n img-src *"}).find("content_security_policy"),
              std::string::npos);
    EXPECT_NE(message({.frame_options = std::string("DENY\0", 5)}).find("frame_options"), std::string::npos);
    EXPECT_NE(message({.except = {"/"}}).find("except \"/\""), std::string::npos);
    EXPECT_NE(message({.except = {""}}).find("no path prefix"), std::string::npos);
    EXPECT_NE(message({.except = {"embed"}}).find("no path prefix"), std::string::npos);
    EXPECT_EQ(message({.referrer_policy = "no-referrer", .except = {"/embed"}}), "accepted");
}

namespace {
// A hook that fails as only running out of memory could make the real one fail, after
// setting a header of its own.
struct ThrowingHook final : kiln::app::HeadHook {
    void before_head(kiln::Request&, kiln::Response& res) const override {
        res.header("X-Half-Set", "1");
        throw std::bad_alloc();
    }
};
}  // namespace

TEST(SecurityHeaders, AHookThatThrowsMakesTheAnswerABare500) {
    static const ThrowingHook hook;
    kiln::App app;
    app.use([](kiln::Request& req, kiln::Response& res, kiln::Next& next) {
        kiln::app::HeadHook::attach(req, res, hook);
        next();
    });
    app.get("/page", [](kiln::Request&, kiln::Response& res) {
        res.header("X-Page", "1");
        res.html("<p>the page</p>");
    });
    app.get("/after-wait", [](kiln::Request&, kiln::Response& res) -> Task<> {
        co_await kiln::sleep(1);
        res.html("<p>the page</p>");
    });
    bool wrote = false;
    app.get("/stream", [&wrote](kiln::Request&, kiln::Response& res) {
        res.write("streamed");  // its head would leave without the hook's headers: it throws
        wrote = true;
    });
    kiln::testing::Client client(app);
    for (const char* path : {"/page", "/after-wait"}) {
        auto r = client.get(path);
        EXPECT_EQ(r.status, 500) << path;
        EXPECT_EQ(r.body, "Internal Server Error\n") << path;
        EXPECT_FALSE(r.header("X-Half-Set")) << path;
        EXPECT_FALSE(r.header("X-Page")) << path;
    }
    auto r = client.get("/stream");
    EXPECT_EQ(r.status, 500);
    EXPECT_FALSE(wrote);
    EXPECT_EQ(r.body.find("streamed"), std::string::npos) << r.body;
    EXPECT_FALSE(r.header("X-Half-Set"));
}
