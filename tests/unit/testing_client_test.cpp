// kiln::testing::Client: an app's own tests, in-process, through the server's path
// (routing before the body, upload parsing, sessions, CSRF), with cookies kept.
#include <gtest/gtest.h>

#include <string>

#include <kiln/db.hpp>
#include <kiln/kiln.hpp>
#include <kiln/redis.hpp>
#include <kiln/testing.hpp>

using kiln::testing::Client;

namespace {

void demo_app(kiln::App& a) {
        a.use([](kiln::Request&, kiln::Response& res, kiln::Next& next) {
            next();
            res.header("X-Frame-Options", "DENY");
        });
        a.get("/users/:id", [](kiln::Request& req, kiln::Response& res) {
            res.json(nlohmann::json{{"id", req.param<long>("id")}});
        });
        a.get("/visits", [](kiln::Request& req, kiln::Response& res) {
            kiln::Session& s = req.session();
            int64_t n = s.get_int("n").value_or(0) + 1;
            s.set_int("n", n);
            res.text(std::to_string(n));
        });
        a.post("/echo", [](kiln::Request& req, kiln::Response& res) { res.text(req.body()); }, {.max_body = 16});
        a.post("/upload", [](kiln::Request& req, kiln::Response& res) {
            const kiln::UploadedFile* f = req.form().file("doc");
            res.text(f ? f->filename + " " + std::to_string(f->size) : "none");
        }, {.max_files = 1});
        a.get("/stream", [](kiln::Request&, kiln::Response& res) {
            res.write("a");
            res.write("b");
        });
}

}  // namespace

TEST(TestingClient, RunsMiddlewareRouterAndHandler) {
    kiln::App app;
    demo_app(app);
    Client client(app);
    auto r = client.get("/users/7");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, R"({"id":7})");
    EXPECT_EQ(r.header("content-type"), "application/json");
    EXPECT_EQ(r.header("X-Frame-Options"), "DENY");
    EXPECT_EQ(client.get("/users/x").status, 404);
    EXPECT_EQ(client.get("/nothing/here").status, 404);
}

TEST(TestingClient, KeepsCookiesSoASessionLastsAcrossCalls) {
    kiln::App app;
    demo_app(app);
    Client client(app);
    EXPECT_EQ(client.get("/visits").body, "1");
    EXPECT_EQ(client.get("/visits").body, "2");
    EXPECT_TRUE(client.cookie("kiln_sid"));
    client.clear_cookies();
    EXPECT_EQ(client.get("/visits").body, "1");
}

TEST(TestingClient, BodiesUploadsAndStreams) {
    kiln::App app;
    demo_app(app);
    Client client(app);
    EXPECT_EQ(client.post("/echo", "hello").body, "hello");
    std::string multipart =
        "--b\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"a.txt\"\r\n\r\n12345\r\n--b--\r\n";
    auto r = client.post("/upload", multipart, {{"Content-Type", "multipart/form-data; boundary=b"}});
    EXPECT_EQ(r.body, "a.txt 5");
    EXPECT_EQ(client.get("/stream").body, "ab");
    EXPECT_EQ(client.request("HEAD", "/users/1").body, "");
}

TEST(TestingClient, CsrfWorksWithTheCookieItKept) {
    kiln::App app;
    app.use(kiln::csrf_protect());
    app.get("/form", [](kiln::Request& req, kiln::Response& res) { res.text(kiln::csrf_token(req)); });
    app.post("/submit", [](kiln::Request&, kiln::Response& res) { res.text("saved"); });
    Client client(app);
    std::string token = client.get("/form").body;
    const kiln::testing::Headers form{{"Content-Type", "application/x-www-form-urlencoded"}};
    EXPECT_EQ(client.post("/submit", "_csrf=" + token, form).status, 200);
    EXPECT_EQ(client.post("/submit", "_csrf=wrong", form).status, 403);
}

// Error paths -----------------------------------------------------------------

TEST(TestingClient, WhatTheServerRefusesBeforeTheAppIsRefusedTheSameWay) {
    kiln::App app;
    demo_app(app);
    Client client(app);
    EXPECT_EQ(client.post("/echo", std::string(17, 'x')).status, 413);
    EXPECT_EQ(client.get("/a%2Fb").status, 400);
    EXPECT_EQ(client.get("/with space").status, 400);
    std::string two_files =
        "--b\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"a\"\r\n\r\n1\r\n"
        "--b\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"b\"\r\n\r\n2\r\n--b--\r\n";
    EXPECT_EQ(client.post("/upload", two_files, {{"Content-Type", "multipart/form-data; boundary=b"}}).status, 413);
}

// A service away (a database or Redis unreachable, a lock timeout) is 503 with
// Retry-After, so the client tries again; a fault in the request or the code stays 500.
TEST(TestingClient, TransientErrorsAre503AndTheRestStays500) {
    kiln::App app;
    app.get("/db-down", [](kiln::Request&, kiln::Response&) {
        throw kiln::db::Error(kiln::db::ErrorKind::Io, 0, "connection to PostgreSQL lost", "SELECT 1");
    });
    app.get("/db-busy", [](kiln::Request&, kiln::Response&) {
        throw kiln::db::BusyError(kiln::db::ErrorKind::Busy, 0, "canceling statement due to statement timeout", "SELECT 1");
    });
    app.get("/redis-down", [](kiln::Request&, kiln::Response&) {
        throw kiln::redis::Error(kiln::redis::Error::Kind::Io, "no connection to Redis");
    });
    app.get("/bad-sql", [](kiln::Request&, kiln::Response&) {
        throw kiln::db::Error(kiln::db::ErrorKind::Sql, 0, "syntax error", "SELEC 1");
    });
    app.get("/redis-wrongtype", [](kiln::Request&, kiln::Response&) {
        throw kiln::redis::Error(kiln::redis::Error::Kind::Server, "WRONGTYPE");
    });
    kiln::testing::Client c(app);
    for (const char* path : {"/db-down", "/db-busy", "/redis-down"}) {
        auto r = c.get(path);
        EXPECT_EQ(r.status, 503) << path;
        EXPECT_EQ(r.header("Retry-After").value_or(""), "1") << path;
    }
    for (const char* path : {"/bad-sql", "/redis-wrongtype"}) {
        auto r = c.get(path);
        EXPECT_EQ(r.status, 500) << path;
        EXPECT_FALSE(r.header("Retry-After")) << path;
    }
}
