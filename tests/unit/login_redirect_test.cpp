// auth::local_path_or: where a log-in sends the visitor. Only a path of this site
// passes; anything a browser could read as another site gives the fallback. And
// require_login: where it sends a visitor (back to the same page, query included),
// and that, guarding every path, it leaves the log-in page itself open.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <kiln/auth.hpp>
#include <kiln/kiln.hpp>
#include <kiln/store.hpp>
#include <kiln/testing.hpp>

namespace {

using kiln::auth::local_path_or;

TEST(LoginRedirect, APathOfThisSitePasses) {
    for (const char* p : {"/", "/posts", "/posts/new", "/posts?page=2", "/a/b/", "/%2F%2Fevil.example/", "/caf\xc3\xa9"})
        EXPECT_EQ(local_path_or(p, "/home"), p) << p;
}

TEST(LoginRedirect, AnythingABrowserCouldTakeForAnotherSiteGivesTheFallback) {
    const std::string cases[] = {
        "",                       // nothing
        "posts",                  // relative
        "//evil.example/",        // scheme-relative
        "/\\evil.example/",       // a backslash is a slash to browsers
        "/\t/evil.example/",      // tabs and newlines are dropped by browsers: //evil.example/
        "/\n/evil.example/",
        "/\r/evil.example/",
        "/a\\b",                  // a backslash anywhere
        "/posts\r\nSet-Cookie: a=b",
        std::string("/\0/evil.example/", 16),
        "/\x7f",
        "\t/posts",
        "http://evil.example/",
        "javascript:alert(1)",
    };
    for (const std::string& c : cases) EXPECT_EQ(local_path_or(c, "/home"), "/home") << c;
}

TEST(RequireLogin, GuardingEveryPathItLeavesTheLogInPageOpenAndComesBackWithTheQuery) {
    std::filesystem::path db = std::filesystem::temp_directory_path() /
                               ("kiln-require-login-" + std::to_string(getpid()) + ".sqlite");
    {
        kiln::Store store(db);  // a logged-out visitor's request never reaches it
        kiln::auth::Accounts accounts(store);
        kiln::App app;
        app.use(accounts.require_login());  // no filter: every path
        app.get("/login", [](kiln::Request&, kiln::Response& res) { res.text("the form"); });
        app.get("/report", [](kiln::Request&, kiln::Response& res) { res.text("secret"); });
        kiln::testing::Client client(app);
        auto r = client.get("/login");
        EXPECT_EQ(r.status, 200);
        EXPECT_EQ(r.body, "the form");
        r = client.get("/report?year=2026&q=a%20b");
        EXPECT_EQ(r.status, 303);
        EXPECT_EQ(r.header("location"), "/login?next=%2Freport%3Fyear%3D2026%26q%3Da%2520b");
        app.get("/files/*name", [](kiln::Request&, kiln::Response& res) { res.text("file"); });
        // The way back is the path as the client wrote it: decoded, /files/50%25 was
        // /files/50% (a 400) and /files/a%3Fb was /files/a?b.
        r = client.get("/files/50%25");
        EXPECT_EQ(r.header("location"), "/login?next=%2Ffiles%2F50%2525");
        r = client.get("/files/a%3Fb");
        EXPECT_EQ(r.header("location"), "/login?next=%2Ffiles%2Fa%253Fb");
    }
    std::filesystem::remove(db);
}

}  // namespace
