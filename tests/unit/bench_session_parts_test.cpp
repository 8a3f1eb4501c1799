// Unit tests of the pieces a kiln bench session is made of: the cookie jar
// (tools/kiln/bench/cookies.cpp), the page's asset links (assets.cpp), the upload
// request bytes (request.cpp) and the latency histogram (stats.cpp); then their
// error paths (malformed Set-Cookie, links that are not same-origin relative).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/assets.hpp"
#include "bench/cookies.hpp"
#include "bench/report.hpp"
#include "bench/request.hpp"
#include "bench/stats.hpp"

namespace kiln::bench {
namespace {

using Change = CookieJar::Change;

// ---------------------------------------------------------------- cookie jar

TEST(BenchCookies, KeepsSeveralCookiesInOneHeaderLine) {
    CookieJar jar;
    EXPECT_EQ(jar.header_line(), "");
    EXPECT_EQ(jar.apply("sid=abc; Path=/; HttpOnly"), Change::Set);
    EXPECT_EQ(jar.apply("lang=en"), Change::Set);
    EXPECT_EQ(jar.header_line(), "Cookie: sid=abc; lang=en\r\n");
}

TEST(BenchCookies, SameValueIsNoChangeNewValueReplaces) {
    CookieJar jar;
    jar.apply("sid=abc");
    EXPECT_EQ(jar.apply("sid=abc; Max-Age=3600"), Change::None);
    EXPECT_EQ(jar.apply(" sid = def "), Change::Set);
    EXPECT_EQ(jar.header_line(), "Cookie: sid=def\r\n");
    EXPECT_EQ(*jar.find("sid"), "def");
}

TEST(BenchCookies, MaxAgeZeroRemoves) {
    CookieJar jar;
    jar.apply("a=1");
    jar.apply("b=2");
    EXPECT_EQ(jar.apply("a=; Max-Age=0"), Change::Removed);
    EXPECT_EQ(jar.header_line(), "Cookie: b=2\r\n");
    EXPECT_EQ(jar.apply("b=x; max-age=-1"), Change::Removed);
    EXPECT_EQ(jar.header_line(), "");
    EXPECT_EQ(jar.apply("never=set; Max-Age=0"), Change::None);
}

TEST(BenchCookiesErrors, MalformedSetCookieIsIgnored) {
    CookieJar jar;
    for (const char* bad : {"", "novalue", "=v", "a b=1", "x=1\x01", ";a=1"}) EXPECT_EQ(jar.apply(bad), Change::None) << bad;
    EXPECT_EQ(jar.size(), 0u);
    EXPECT_EQ(jar.header_line(), "");
}

// ---------------------------------------------------------------- assets

const char* kStudyPage =
    "<!DOCTYPE html><html><head><meta charset=\"UTF-8\">"
    "<link rel=\"stylesheet\" type=\"text/css\" href=\"/bootstrap.css\">"
    "<title>Generic Web Application</title></head><body>"
    "<h1>Generic Web Application</h1><img src=\"/servers.jpg\" width=\"700\">"
    "<h2>Lorem Ipsum</h2><p>lorem</p><p>0123456789abcdef</p></body></html>";

TEST(BenchAssets, StudyPageNamesItsStylesheetAndPicture) {
    EXPECT_EQ(extract_assets(kStudyPage, "/"), (std::vector<std::string>{"/bootstrap.css", "/servers.jpg"}));
    EXPECT_EQ(fixed_assets(), (std::vector<std::string>{"/bootstrap.css", "/servers.jpg"}));
}

TEST(BenchAssets, ScriptsRelativeLinksAndOddSyntax) {
    std::string html =
        "<LINK REL='Icon StyleSheet' HREF=css/a.css><script src=\"app.js\">var s='<img src=/no.png>';</script>"
        "<img alt=x src = 'img/b.png?v=1&amp;w=2#frag'><img src=\"/servers.jpg\"><img src=\"/servers.jpg\">";
    EXPECT_EQ(extract_assets(html, "/site/index.html?q=1"),
              (std::vector<std::string>{"/site/css/a.css", "/site/app.js", "/site/img/b.png?v=1&w=2", "/servers.jpg"}));
}

TEST(BenchAssetsErrors, OtherOriginsAndNonStylesheetsAreSkipped) {
    std::string html =
        "<link rel=icon href=/favicon.ico><link rel=stylesheet href=\"http://cdn.example/x.css\">"
        "<link rel=stylesheet href=\"//cdn.example/y.css\"><img src=\"data:image/png;base64,AAA\">"
        "<img src=\"\"><img><script>no src</script><!-- <img src=/commented.png> -->"
        "<img src=\"a b.png\"><a href=/page.html>link</a><img src=\"/ok.png\"";
    EXPECT_EQ(extract_assets(html, "/"), (std::vector<std::string>{"/ok.png"}));
    EXPECT_TRUE(extract_assets("<img src=/unterminated.png <!-- ", "/").size() <= 1);
    EXPECT_TRUE(extract_assets("", "/").empty());
}

TEST(BenchAssetsErrors, AtMostMaxAssets) {
    std::string html;
    for (int i = 0; i < 200; ++i) html += "<img src=/i" + std::to_string(i) + ".png>";
    EXPECT_EQ(extract_assets(html, "/").size(), kMaxAssets);
}

// ---------------------------------------------------------------- upload bytes

TEST(BenchRequest, UploadIsMultipartWith15KiBFile) {
    Target t;
    t.authority = "127.0.0.1:8080";
    t.path = "/";
    RequestTemplates r(t);
    EXPECT_EQ(r.page_prefix, "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: kiln-bench/0.1\r\n");
    EXPECT_TRUE(r.upload_prefix.starts_with("POST /upload HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"));
    EXPECT_NE(r.upload_end.find("Content-Length: " + std::to_string(r.upload_body.size()) + "\r\n\r\n"),
              std::string::npos);
    size_t b = r.upload_end.find("boundary=");
    ASSERT_NE(b, std::string::npos);
    std::string boundary = r.upload_end.substr(b + 9, r.upload_end.find("\r\n", b) - b - 9);
    EXPECT_TRUE(r.upload_body.starts_with("--" + boundary + "\r\n"));
    EXPECT_TRUE(r.upload_body.ends_with("\r\n--" + boundary + "--\r\n"));
    size_t file_start = r.upload_body.find("\r\n\r\n") + 4;
    size_t file_end = r.upload_body.rfind("\r\n--" + boundary);
    EXPECT_EQ(file_end - file_start, kUploadFileBytes);
    EXPECT_EQ(r.upload_body.find(boundary, file_start), file_end + 4);  // not inside the file
}

// ---------------------------------------------------------------- histogram and report

TEST(BenchStats, PercentilesWithinTheBucketError) {
    Histogram h;
    for (uint64_t v = 1; v <= 100000; ++v) h.record(v * 1000);
    EXPECT_EQ(h.count(), 100000u);
    EXPECT_EQ(h.max(), 100000000u);
    for (double p : {50.0, 90.0, 99.0}) {
        double want = p * 1000 * 1000;
        EXPECT_NEAR(static_cast<double>(h.percentile(p)), want, want * 0.02) << p;
    }
    EXPECT_EQ(h.percentile(100), h.max());
    Histogram small;
    EXPECT_EQ(small.percentile(50), 0u);
    small.record(7);
    EXPECT_EQ(small.percentile(99), 7u);
    Histogram merged;
    merged.merge(h);
    merged.merge(small);
    EXPECT_EQ(merged.count(), 100001u);
}

TEST(BenchReport, StudyStyleNumbers) {
    EXPECT_EQ(format_count(0), "0");
    EXPECT_EQ(format_count(100000), "100,000");
    EXPECT_EQ(format_count(1234567), "1,234,567");
    EXPECT_EQ(format_fixed(3725.186, 2), "3,725.19");
    EXPECT_EQ(format_fixed(26844.2449, 2), "26,844.24");
}

}  // namespace
}  // namespace kiln::bench
