// kiln::testing::Client: an app's own tests, in-process, through the server's path
// (routing before the body, upload parsing, sessions, CSRF), with cookies kept.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include <kiln/db.hpp>
#include <kiln/kiln.hpp>
#include <kiln/redis.hpp>
#include <kiln/sleep.hpp>
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
        a.post("/fields", [](kiln::Request&, kiln::Response& res) { res.text("fields"); });  // takes no files
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

// A route's max_json_values bounds what req.json() parses (413 past it); the default
// takes 200,000 values. route_pattern() names the route matched, for a middleware too.
TEST(TestingClient, JsonValuesPerRouteAndTheRoutesPattern) {
    kiln::App app;
    std::string seen;
    app.use([&](kiln::Request& req, kiln::Response&, kiln::Next& next) {
        seen = "[" + std::string(req.route_pattern()) + "]";
        next();
    });
    auto count = [](kiln::Request& req, kiln::Response& res) { res.text(std::to_string(req.json().size())); };
    app.post("/few/:id", count, {.max_json_values = 4});
    app.post("/many", count);
    Client client(app);
    const kiln::testing::Headers json{{"Content-Type", "application/json"}};
    EXPECT_EQ(client.post("/few/1", "[1,2,3]", json).body, "3");
    EXPECT_EQ(seen, "[/few/:id]");
    EXPECT_EQ(client.post("/few/1", "[1,2,3,4]", json).status, 413);
    std::string big = "[0";
    for (int i = 0; i < 199'998; ++i) big += ",0";
    EXPECT_EQ(client.post("/many", big + "]", json).body, "199999");
    EXPECT_EQ(client.post("/many", big + ",0,0]", json).status, 413);
    EXPECT_EQ(client.get("/many").status, 405);
    EXPECT_EQ(seen, "[]");
    EXPECT_EQ(client.get("/nowhere").status, 404);
    EXPECT_EQ(seen, "[]");
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

// A cookie is forgotten for a Max-Age of 0 or less, else an Expires already past; the
// text "1970" or "max-age=0" elsewhere in the line means nothing.
TEST(TestingClient, ForgetsACookieOnlyWhenItsAttributesSaySo) {
    kiln::App app;
    app.get("/set", [](kiln::Request&, kiln::Response& res) {
        res.header("Set-Cookie", "path1970=1; Path=/1970");
        res.header("Set-Cookie", "named=1; Path=/max-age=0");
        res.header("Set-Cookie", "later=1; Expires=Fri, 01 Jan 2100 00:00:00 GMT");
        res.header("Set-Cookie", "aged=1; Max-Age=3600; Expires=Thu, 01 Jan 1970 00:00:00 GMT");
        res.header("Set-Cookie", "gone=1");
        res.header("Set-Cookie", "dashed=1");
        res.text("set");
    });
    app.get("/unset", [](kiln::Request&, kiln::Response& res) {
        res.header("Set-Cookie", "gone=; Expires=Thu, 01 Jan 1970 00:00:00 GMT");
        res.header("Set-Cookie", "later=; max-age=0");
        res.header("Set-Cookie", "aged=; Max-Age=-1");
        res.header("Set-Cookie", "dashed=; Expires=Thu, 01-Jan-1970 00:00:00 GMT");  // the Netscape form
        res.text("unset");
    });
    Client client(app);
    ASSERT_EQ(client.get("/set").status, 200);
    for (const char* name : {"path1970", "named", "later", "aged", "gone"}) EXPECT_EQ(client.cookie(name), "1") << name;
    ASSERT_EQ(client.get("/unset").status, 200);
    for (const char* name : {"gone", "later", "aged", "dashed"}) EXPECT_FALSE(client.cookie(name)) << name;
    EXPECT_EQ(client.cookie("path1970"), "1");
}

// A handler that fails: the error page keeps what the middleware set before it, as the
// middleware set it. The handler's replacement of a middleware's cookie or header went
// out on the error page before (the cookie's old line was removed, the header's value
// replaced in place).
TEST(TestingClient, AFailedHandlersChangesToTheMiddlewaresHeadersAreTakenBack) {
    kiln::App app;
    app.use([](kiln::Request&, kiln::Response& res, kiln::Next& next) {
        res.cookie("theme", "dark");
        res.header("Cache-Control", "public");
        next();
    });
    app.get("/fails", [](kiln::Request&, kiln::Response& res) {
        res.cookie("theme", "light");
        res.header("Cache-Control", "no-store");
        res.header("X-Handler", "1");
        throw std::runtime_error("after its changes");
    });
    app.get("/waits-then-fails", [](kiln::Request&, kiln::Response& res) -> kiln::Task<> {
        res.cookie("theme", "light");
        res.header("Cache-Control", "no-store");
        co_await kiln::sleep(std::chrono::milliseconds(1));
        throw std::runtime_error("after its changes");
    });
    app.get("/clears-then-fails", [](kiln::Request&, kiln::Response& res) {
        // clear() takes the middleware's headers too; the error page gets them back,
        // not the headers the handler set after it.
        res.clear();
        res.cookie("theme", "light");
        res.header("X-Handler", "1");
        throw std::runtime_error("after its changes");
    });
    app.get("/again", [](kiln::Request&, kiln::Response& res) {
        // A header set again from its own value (a view of it): a short value was
        // moved out before it was read back, and went out as a NUL.
        auto now = res.header("Cache-Control");
        res.header("Cache-Control", *now);
        res.text("x");
    });
    Client client(app);
    EXPECT_EQ(client.get("/again").header("cache-control"), "public");
    for (const char* path : {"/fails", "/waits-then-fails", "/clears-then-fails"}) {
        auto r = client.get(path);
        EXPECT_EQ(r.status, 500) << path;
        EXPECT_EQ(r.header("cache-control"), "public") << path;
        EXPECT_FALSE(r.header("x-handler")) << path;
        EXPECT_EQ(r.header("set-cookie").value_or("").substr(0, 11), "theme=dark;") << path;
        EXPECT_EQ(client.cookie("theme"), "dark") << path;
    }
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
    // A file input left empty (filename="" and no bytes, as browsers send it) is no
    // file: not a 0-byte file named "", and not counted against max_files.
    std::string empty_input =
        "--b\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"\"\r\n"
        "Content-Type: application/octet-stream\r\n\r\n\r\n--b--\r\n";
    r = client.post("/upload", empty_input, {{"Content-Type", "multipart/form-data; boundary=b"}});
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "none");
    r = client.post("/fields", empty_input, {{"Content-Type", "multipart/form-data; boundary=b"}});
    EXPECT_EQ(r.status, 200) << "a route that takes no files refused an empty file input";
    // Bytes under an empty filename: a file after all (named "").
    std::string unnamed = "--b\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"\"\r\n\r\nxyz\r\n--b--\r\n";
    r = client.post("/upload", unnamed, {{"Content-Type", "multipart/form-data; boundary=b"}});
    EXPECT_EQ(r.body, " 3");
    EXPECT_EQ(client.get("/stream").body, "ab");
    EXPECT_EQ(client.request("HEAD", "/users/1").body, "");
}

// A multipart form posted with _method=PATCH (before its files, as form_open writes
// it) takes the PATCH route's upload rules: its max_files and its body limit. Before,
// the POST route's (none here: 413 "accepts no file uploads").
TEST(TestingClient, AMultipartFormsMethodFieldPicksTheUploadRules) {
    kiln::App app;
    app.patch("/users/:id", [](kiln::Request& req, kiln::Response& res) {
        const kiln::UploadedFile* f = req.form().file("avatar");
        res.text(f ? f->filename : "none");
    }, {.max_body = 1024, .max_files = 1});
    app.post("/notes", [](kiln::Request&, kiln::Response& res) { res.text("note"); }, {.max_files = 1});
    app.patch("/notes", [](kiln::Request&, kiln::Response& res) { res.text("patched"); }, {.max_files = 0});
    Client client(app);
    const kiln::testing::Headers multipart{{"Content-Type", "multipart/form-data; boundary=b"}};
    auto body = [](std::string_view method, size_t bytes) {
        return "--b\r\nContent-Disposition: form-data; name=\"_method\"\r\n\r\n" + std::string(method) +
               "\r\n--b\r\nContent-Disposition: form-data; name=\"avatar\"; filename=\"a.png\"\r\n\r\n" +
               std::string(bytes, 'x') + "\r\n--b--\r\n";
    };
    auto r = client.post("/users/1", body("PATCH", 10), multipart);
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.body, "a.png");
    EXPECT_EQ(client.post("/users/1", body("PATCH", 2000), multipart).status, 413);  // the PATCH route's 1 KiB
    EXPECT_EQ(client.post("/notes", body("PATCH", 10), multipart).status, 413);       // PATCH takes no files (POST would)
}

// A _method field after the files: the upload counted them against the POST route's
// max_files; the route the form names must count them again (before, its handler got
// more files than it takes).
TEST(TestingClient, FilesBeforeTheMethodFieldAreCountedAgainstTheRouteItNames) {
    kiln::App app;
    app.post("/notes", [](kiln::Request&, kiln::Response& res) { res.text("note"); }, {.max_files = 2});
    app.patch("/notes", [](kiln::Request& req, kiln::Response& res) {
        res.text(std::to_string(req.form().files().size()));
    }, {.max_files = 1});
    app.put("/notes", [](kiln::Request&, kiln::Response& res) { res.text("put"); });
    Client client(app);
    const kiln::testing::Headers multipart{{"Content-Type", "multipart/form-data; boundary=b"}};
    auto body = [](int files, std::string_view method) {
        std::string out;
        for (int i = 0; i < files; ++i)
            out += "--b\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"f" + std::to_string(i) +
                   "\"\r\n\r\nbytes\r\n";
        return out + "--b\r\nContent-Disposition: form-data; name=\"_method\"\r\n\r\n" + std::string(method) +
               "\r\n--b--\r\n";
    };
    auto r = client.post("/notes", body(2, "PATCH"), multipart);
    EXPECT_EQ(r.status, 413);
    EXPECT_EQ(r.body, "more than 1 files in one request\n");
    r = client.post("/notes", body(1, "PUT"), multipart);
    EXPECT_EQ(r.status, 413);
    EXPECT_EQ(r.body, "this route accepts no file uploads\n");
    EXPECT_EQ(client.post("/notes", body(1, "PATCH"), multipart).body, "1");
}

// A part's name (and a file's name and type) counts toward the 1 MiB of fields a form
// holds, as its value does: parts with long names and no values were not counted.
TEST(TestingClient, PartNamesCountTowardTheFormsFieldLimit) {
    kiln::App app;
    app.post("/form", [](kiln::Request& req, kiln::Response& res) {
        res.text(std::to_string(req.form().fields().size()));
    });
    Client client(app);
    const kiln::testing::Headers multipart{{"Content-Type", "multipart/form-data; boundary=b"}};
    auto body = [](int parts) {
        std::string out;
        for (int i = 0; i < parts; ++i)
            out += "--b\r\nContent-Disposition: form-data; name=\"" + std::to_string(i) + std::string(4000, 'n') +
                   "\"\r\n\r\n\r\n";
        return out + "--b--\r\n";
    };
    EXPECT_EQ(client.post("/form", body(200), multipart).body, "200");  // 800 KB of names
    auto r = client.post("/form", body(300), multipart);                // 1.2 MB
    EXPECT_EQ(r.status, 413);
    EXPECT_EQ(r.body, "Content Too Large: form fields larger than 1 MiB in all\n");
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

// A session whose token is empty (kiln never stores one; an app's code might): an
// empty token sent must not match it.
TEST(TestingClient, AnEmptyCsrfTokenInTheSessionMatchesNothing) {
    kiln::App app;
    app.use(kiln::csrf_protect());
    app.get("/blank", [](kiln::Request& req, kiln::Response& res) {
        req.session().set("_csrf", "");
        res.text("blank");
    });
    app.post("/submit", [](kiln::Request&, kiln::Response& res) { res.text("saved"); });
    Client client(app);
    EXPECT_EQ(client.get("/blank").body, "blank");
    const kiln::testing::Headers form{{"Content-Type", "application/x-www-form-urlencoded"}};
    EXPECT_EQ(client.post("/submit", "_csrf=", form).status, 403);
    EXPECT_EQ(client.post("/submit", "", {{"X-CSRF-Token", ""}}).status, 403);
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

// What a handler sets after its first write() would be dropped by a live stream (the
// head is gone) and kept by a buffered one: refused in every mode, so the test sees it.
// A handler that fails after its response began is cut short for a real client: the
// test client says 500, not the status the head carried.
TEST(TestingClient, HeadersAfterTheFirstWriteAndACutStreamAreNotASuccess) {
    kiln::App app;
    app.get("/late-header", [](kiln::Request&, kiln::Response& res) {
        res.write("a,b\n");
        res.header("X-Total", "2");
    });
    app.get("/late-session", [](kiln::Request& req, kiln::Response& res) {
        res.write("a,b\n");
        req.session().set("seen", "1");  // a new session's cookie cannot go out any more
    });
    app.get("/cut", [](kiln::Request&, kiln::Response& res) {
        res.write("row 1\n");
        throw std::runtime_error("the database went away");
    });
    kiln::testing::Client c(app);
    for (const char* path : {"/late-header", "/late-session", "/cut"}) {
        auto r = c.get(path);
        EXPECT_EQ(r.status, 500) << path;
        EXPECT_FALSE(r.header("X-Total")) << path;
        EXPECT_FALSE(r.header("Set-Cookie")) << path;
    }
}

TEST(TestingClient, NoBodyFor204And304AsOnTheWire) {
    kiln::App app;
    app.get("/gone", [](kiln::Request&, kiln::Response& res) { res.status(204).text("dropped"); });
    app.get("/same", [](kiln::Request&, kiln::Response&) { throw kiln::HttpError(304, "Not Modified"); });
    Client client(app);
    kiln::testing::Result gone = client.get("/gone"), same = client.get("/same");
    EXPECT_EQ(gone.status, 204);
    EXPECT_EQ(gone.body, "");
    EXPECT_EQ(same.status, 304);
    EXPECT_EQ(same.body, "");
}

TEST(TestingClient, AFormThatCannotBeReadIsRefusedAtEveryCall) {
    // Before, the first call threw and left an empty form behind for the next.
    kiln::App app;
    app.put("/twice", [](kiln::Request& req, kiln::Response& res) {  // (a POST's form is read before: _method)
        int refused = 0;
        for (int i = 0; i < 2; ++i) {
            try {
                (void)req.form();
            } catch (const kiln::HttpError& e) {
                refused += e.status() == 400;
            }
        }
        res.text(std::to_string(refused));
    });
    Client client(app);
    kiln::testing::Result r =
        client.request("PUT", "/twice", "a=%zz", {{"Content-Type", "application/x-www-form-urlencoded"}});
    EXPECT_EQ(r.body, "2");
}

// Values a response may not carry: a status that is no final answer, a control
// character in a header; and numbers a typed parameter may not be.
TEST(TestingClient, StatusesHeadersAndNumbersOutOfBoundsAreRefused) {
    kiln::App app;
    app.get("/status/:code", [](kiln::Request& req, kiln::Response& res) {
        res.status(req.param<int>("code"));
        res.text("x");
    });
    app.get("/http-error/:code", [](kiln::Request& req, kiln::Response&) { throw kiln::HttpError(req.param<int>("code")); });
    app.get("/header", [](kiln::Request& req, kiln::Response& res) {
        res.header("Content-Disposition", "attachment; filename=" + std::string(req.query("name").value_or("")));
        res.text("x");
    });
    app.get("/amount", [](kiln::Request& req, kiln::Response& res) {
        res.text(std::to_string(req.query<double>("v").value_or(0)));
    });
    kiln::testing::Client c(app);
    for (const char* code : {"100", "103", "199", "600", "999"}) EXPECT_EQ(c.get(std::string("/status/") + code).status, 500) << code;
    EXPECT_EQ(c.get("/status/204").status, 204);
    EXPECT_EQ(c.get("/status/599").status, 599);
    for (const char* code : {"100", "102", "600"}) EXPECT_EQ(c.get(std::string("/http-error/") + code).status, 500) << code;
    EXPECT_EQ(c.get("/http-error/418").status, 418);
    EXPECT_EQ(c.get("/header?name=a%01b").status, 500);
    EXPECT_EQ(c.get("/header?name=a%7Fb").status, 500);
    EXPECT_EQ(c.get("/header?name=a%09b").status, 200);  // a tab is field content
    for (const char* v : {"nan", "inf", "-infinity", "NaN"}) EXPECT_EQ(c.get(std::string("/amount?v=") + v).status, 400) << v;
    EXPECT_EQ(c.get("/amount?v=2.5").status, 200);
}

// What a GET form sends: a blank field ("?min=") is no value for a number, and a
// ticked checkbox without a value is "on". Both were 400.
TEST(TestingClient, AGetFormsBlankFieldsAndCheckboxesAreRead) {
    kiln::App app;
    app.get("/list", [](kiln::Request& req, kiln::Response& res) {
        std::optional<int> min = req.query<int>("min");
        std::optional<bool> draft = req.query<bool>("draft");
        std::optional<std::string> q = req.query<std::string>("q");
        res.text((min ? std::to_string(*min) : "none") + " " + (draft ? (*draft ? "yes" : "no") : "none") + " [" +
                 q.value_or("none") + "]");
    });
    kiln::testing::Client c(app);
    EXPECT_EQ(c.get("/list?min=&draft=on&q=").body, "none yes []");  // a blank string is a string
    EXPECT_EQ(c.get("/list?min=3&draft=off").body, "3 no [none]");
    EXPECT_EQ(c.get("/list?min=x").status, 400);
    EXPECT_EQ(c.get("/list?draft=maybe").status, 400);
}

// An event stream without a socket under it (here, as on the hybrid pool) gathers its
// events in the body, sent when the handler returns: bounded by max_backlog as a slow
// reader is, where it grew for as long as the handler went on.
TEST(TestingClient, AnEventStreamWithoutASocketIsBoundedByItsBacklog) {
    kiln::App app;
    bool cut = false;
    app.get("/events", [&cut](kiln::Request&, kiln::Response& res) -> kiln::Task<> {
        kiln::EventStream events = res.event_stream();
        try {
            for (int i = 0; i < 10000; ++i) events.send(std::string(1024, 'e'));  // 10 MiB, had it gone on
        } catch (const kiln::Cancelled&) {
            cut = true;
            throw;
        }
        co_return;
    });
    kiln::testing::Client client(app);
    auto r = client.get("/events");
    EXPECT_TRUE(cut);
    EXPECT_LT(r.body.size(), 2u << 20);
}
