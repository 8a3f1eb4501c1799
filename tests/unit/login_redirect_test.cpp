// auth::local_path_or: where a log-in sends the visitor. Only a path of this site
// passes; anything a browser could read as another site gives the fallback.
#include <gtest/gtest.h>

#include <string>

#include <kiln/auth.hpp>

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

}  // namespace
