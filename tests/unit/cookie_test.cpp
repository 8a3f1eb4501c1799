// Unit tests of cookie parsing and Set-Cookie serialization (src/http/cookie.cpp):
// the Cookie header is read as browsers send it (tolerantly), Set-Cookie is written
// strictly, and what is written reads back to the same pair. Then the error paths.
#include "http/cookie.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace kiln::http {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs cookies(std::string_view header) {
    Pairs out;
    for (const CookiePair& p : parse_cookie_header(header)) out.emplace_back(p.name, p.value);
    return out;
}

// ---------------------------------------------------------------- Cookie header

TEST(CookieParse, PairsInOrder) {
    EXPECT_EQ(cookies("sid=abc123; theme=dark; sid=older"),
              (Pairs{{"sid", "abc123"}, {"theme", "dark"}, {"sid", "older"}}));
    EXPECT_EQ(cookies("a=1;b=2"), (Pairs{{"a", "1"}, {"b", "2"}}));
}

TEST(CookieParse, ViewsPointIntoTheHeader) {
    std::string h = "k=value";
    std::vector<CookiePair> v = parse_cookie_header(h);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].value.data(), h.data() + 2);
}

TEST(CookieParse, TolerantAsBrowsersAre) {
    EXPECT_EQ(cookies("  a = 1 ;\tb=2\t; ;; "), (Pairs{{"a", "1"}, {"b", "2"}}));
    EXPECT_EQ(cookies("q=\"quoted value\"; e=\"\""), (Pairs{{"q", "quoted value"}, {"e", ""}}));
    EXPECT_EQ(cookies("lone=\"; x=a=b"), (Pairs{{"lone", "\""}, {"x", "a=b"}}));
    EXPECT_EQ(cookies("cart[item]=3; empty="), (Pairs{{"cart[item]", "3"}, {"empty", ""}}));
    EXPECT_EQ(cookies("utf=\xC3\xA9t\xC3\xA9"), (Pairs{{"utf", "\xC3\xA9t\xC3\xA9"}}));
}

TEST(CookieParse, MalformedPiecesAreSkipped) {
    EXPECT_EQ(cookies("novalue; =anon; ok=1"), (Pairs{{"ok", "1"}}));
    EXPECT_EQ(cookies(std::string("ctl=a\x01z; nul=") + '\0' + "; del\x7f=1; fine=2"), (Pairs{{"fine", "2"}}));
    EXPECT_EQ(cookies(""), Pairs{});
    EXPECT_EQ(cookies(" ; ; "), Pairs{});
}

TEST(CookieParse, FindCookie) {
    EXPECT_EQ(find_cookie("a=1; sid=x; sid=y", "sid"), "x");
    EXPECT_EQ(find_cookie("a=1; SID=x", "sid"), std::nullopt);  // names are case-sensitive
    EXPECT_EQ(find_cookie("bad; a=\"q\"", "a"), "q");
}

// ---------------------------------------------------------------- Set-Cookie

TEST(SetCookie, NameAndValueOnly) { EXPECT_EQ(set_cookie_header("sid", "abc"), "sid=abc"); }

TEST(SetCookie, AllAttributesInOrder) {
    CookieAttributes a;
    a.expires = 784111777;  // Sun, 06 Nov 1994 08:49:37 GMT
    a.max_age = 3600;
    a.domain = "example.com";
    a.path = "/app";
    a.secure = true;
    a.http_only = true;
    a.same_site = SameSite::Lax;
    EXPECT_EQ(set_cookie_header("sid", "abc", a),
              "sid=abc; Expires=Sun, 06 Nov 1994 08:49:37 GMT; Max-Age=3600; Domain=example.com; Path=/app; "
              "Secure; HttpOnly; SameSite=Lax");
}

TEST(SetCookie, SameSiteNoneAndPartitionedForceSecure) {
    CookieAttributes a;
    a.same_site = SameSite::None;
    EXPECT_EQ(set_cookie_header("t", "1", a), "t=1; Secure; SameSite=None");
    CookieAttributes p;
    p.partitioned = true;
    p.path = "/";
    EXPECT_EQ(set_cookie_header("t", "1", p), "t=1; Path=/; Secure; Partitioned");
    CookieAttributes s;
    s.same_site = SameSite::Strict;
    EXPECT_EQ(set_cookie_header("t", "1", s), "t=1; SameSite=Strict");
}

TEST(SetCookie, DeletionUsesMaxAgeZero) {
    CookieAttributes a;
    a.max_age = -5;
    a.expires = 0;
    EXPECT_EQ(set_cookie_header("sid", "", a), "sid=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0");
}

TEST(SetCookie, PrefixedCookiesWithTheirAttributes) {
    CookieAttributes a;
    a.secure = true;
    a.path = "/";
    EXPECT_EQ(set_cookie_header("__Host-sid", "x", a), "__Host-sid=x; Path=/; Secure");
    EXPECT_EQ(set_cookie_header("__Secure-id", "x", a), "__Secure-id=x; Path=/; Secure");
    a.domain = ".Sub-1.example.COM";
    EXPECT_EQ(set_cookie_header("__Secure-id", "x", a), "__Secure-id=x; Domain=.Sub-1.example.COM; Path=/; Secure");
}

TEST(SetCookie, WhatIsWrittenReadsBack) {
    std::string value;
    for (int c = 0x21; c < 0x7f; ++c)
        if (c != '"' && c != ',' && c != ';' && c != '\\') value.push_back(static_cast<char>(c));
    std::optional<std::string> h = set_cookie_header("all-octets", value);
    ASSERT_TRUE(h);
    EXPECT_EQ(cookies(*h), (Pairs{{"all-octets", value}}));
}

// ---------------------------------------------------------------- error paths

TEST(SetCookieErrors, InvalidNames) {
    std::string out = "stale";
    for (std::string_view n : {"", "a b", "a=b", "a;b", "(x)", "caf\xC3\xA9", "a\tb"}) {
        EXPECT_EQ(build_set_cookie(n, "v", {}, out), CookieError::BadName) << n;
        EXPECT_EQ(out, "");
        EXPECT_EQ(set_cookie_header(n, "v"), std::nullopt);
    }
}

TEST(SetCookieErrors, InvalidValues) {
    std::string out;
    for (std::string_view v : {"a b", "\"q\"", "a,b", "a;b", "a\\b", "\xC3\xA9", "a\r\nSet-Cookie: x=1"})
        EXPECT_EQ(build_set_cookie("n", v, {}, out), CookieError::BadValue) << v;
    EXPECT_EQ(build_set_cookie("n", std::string("a\0b", 3), {}, out), CookieError::BadValue);
}

TEST(SetCookieErrors, TooLarge) {
    std::string out;
    EXPECT_EQ(build_set_cookie("n", std::string(kMaxCookieBytes - 1, 'v'), {}, out), CookieError::None);
    EXPECT_EQ(build_set_cookie("n", std::string(kMaxCookieBytes, 'v'), {}, out), CookieError::TooLarge);
}

TEST(SetCookieErrors, InvalidAttributes) {
    std::string out;
    auto with = [&](auto set) {
        CookieAttributes a;
        set(a);
        return build_set_cookie("n", "v", a, out);
    };
    EXPECT_EQ(with([](CookieAttributes& a) { a.domain = "exa mple.com"; }), CookieError::BadDomain);
    EXPECT_EQ(with([](CookieAttributes& a) { a.domain = "a..b"; }), CookieError::BadDomain);
    EXPECT_EQ(with([](CookieAttributes& a) { a.domain = "."; }), CookieError::BadDomain);
    EXPECT_EQ(with([](CookieAttributes& a) { a.domain = "x.com; Secure"; }), CookieError::BadDomain);
    EXPECT_EQ(with([](CookieAttributes& a) { a.path = "app"; }), CookieError::BadPath);
    EXPECT_EQ(with([](CookieAttributes& a) { a.path = "/a;HttpOnly"; }), CookieError::BadPath);
    EXPECT_EQ(with([](CookieAttributes& a) { a.path = "/a\r\nX: y"; }), CookieError::BadPath);
    EXPECT_EQ(with([](CookieAttributes& a) { a.expires = -1; }), CookieError::BadExpires);
    EXPECT_EQ(with([](CookieAttributes& a) { a.expires = 253402300800; }), CookieError::BadExpires);
    EXPECT_EQ(with([](CookieAttributes& a) { a.expires = 253402300799; }), CookieError::None);
    EXPECT_EQ(out, "n=v; Expires=Fri, 31 Dec 9999 23:59:59 GMT");
}

TEST(SetCookieErrors, PrefixRules) {
    std::string out;
    CookieAttributes a;
    EXPECT_EQ(build_set_cookie("__Secure-x", "v", a, out), CookieError::BadPrefix);
    EXPECT_EQ(build_set_cookie("__secure-x", "v", a, out), CookieError::BadPrefix);  // browsers ignore case
    a.secure = true;
    EXPECT_EQ(build_set_cookie("__Host-x", "v", a, out), CookieError::BadPrefix);  // no Path=/
    a.path = "/";
    a.domain = "example.com";
    EXPECT_EQ(build_set_cookie("__Host-x", "v", a, out), CookieError::BadPrefix);  // Domain set
    EXPECT_FALSE(describe(CookieError::BadPrefix).empty());
}

}  // namespace
}  // namespace kiln::http
