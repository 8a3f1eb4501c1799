// kiln::security_headers(): the headers every page gets, what a handler or a route
// can change, and that error pages get them too.
#include <gtest/gtest.h>

#include <kiln/kiln.hpp>
#include <kiln/testing.hpp>

namespace {
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
        EXPECT_EQ(r.header("Content-Security-Policy").value_or(""),
                  "default-src 'self'; base-uri 'self'; form-action 'self'; frame-ancestors 'self'; object-src 'none'")
            << path;
        EXPECT_EQ(r.header("X-Content-Type-Options"), "nosniff") << path;
        EXPECT_EQ(r.header("Referrer-Policy"), "strict-origin-when-cross-origin") << path;
        EXPECT_EQ(r.header("X-Frame-Options"), "SAMEORIGIN") << path;
        EXPECT_FALSE(r.header("Strict-Transport-Security")) << "plain HTTP: HSTS would mean nothing";
    }
}

TEST(SecurityHeaders, HandlersAndRoutesHaveAWayOut) {
    kiln::App app;
    app.use(kiln::security_headers({.frame_options = "DENY", .except = {"/own"}}));
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
