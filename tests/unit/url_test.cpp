// Unit tests of path normalization and percent-decoding (src/http/url.cpp): the
// normalized path is what routing and the static file handler trust, so the
// traversal cases ("..", encoded dots and slashes) are the point of this file.
#include "http/url.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace kiln::http {
namespace {

std::string norm(std::string_view raw) {
    std::string out;
    PathStatus s = normalize_path(raw, out);
    EXPECT_EQ(s, PathStatus::Ok) << raw;
    return out;
}

PathStatus norm_status(std::string_view raw) {
    std::string out;
    return normalize_path(raw, out);
}

// ---------------------------------------------------------------- normalize_path

TEST(NormalizePath, PlainPathUnchanged) {
    EXPECT_EQ(norm("/"), "/");
    EXPECT_EQ(norm("/a/b/c.html"), "/a/b/c.html");
    EXPECT_EQ(norm("/a..b/c."), "/a..b/c.");  // dots inside a segment are not dot segments
}

TEST(NormalizePath, DotDotRemovesPreviousSegment) {
    EXPECT_EQ(norm("/a/b/../c"), "/a/c");
    EXPECT_EQ(norm("/a/b/c/../../d"), "/a/d");
    EXPECT_EQ(norm("/a/b/.."), "/a/");
}

TEST(NormalizePath, EncodedDotDotIsResolvedLikeLiteral) {
    EXPECT_EQ(norm("/a/b/%2e%2e/c"), "/a/c");
    EXPECT_EQ(norm("/a/b/%2E%2e/c"), "/a/c");
    EXPECT_EQ(norm("/a/b/.%2e/c"), "/a/c");
    EXPECT_EQ(norm("/a/b/%2e./c"), "/a/c");
}

// Security review note: "/sub%2Findex.html" was served as "/sub/index.html", though
// the README said encoded slashes were refused.
TEST(NormalizePath, EncodedSlashIsRefused) {
    for (const char* raw : {"/a%2Fb", "/a%2fb", "/a/b/%2E%2e%2fc", "/static/%2e%2e%2f%2e%2e%2fetc/passwd", "/a/%2f/b",
                            "%2F"})
        EXPECT_EQ(norm_status(raw), PathStatus::EncodedSlash) << raw;
    EXPECT_EQ(norm("/a%252Fb"), "/a%2Fb");  // an encoded '%' followed by "2F" is text
}

TEST(NormalizePath, RepeatedSlashesMerged) {
    EXPECT_EQ(norm("//a///b//"), "/a/b/");
    EXPECT_EQ(norm("//"), "/");
}

TEST(NormalizePath, SingleDotSegmentsRemoved) {
    EXPECT_EQ(norm("/./a/./b/."), "/a/b/");
    EXPECT_EQ(norm("/a/%2e/b"), "/a/b");
    EXPECT_EQ(norm("/."), "/");
}

TEST(NormalizePath, TrailingSlashKept) {
    EXPECT_EQ(norm("/a/b/"), "/a/b/");
    EXPECT_EQ(norm("/a/b"), "/a/b");
    EXPECT_EQ(norm("/a/b/./"), "/a/b/");
}

TEST(NormalizePath, CannotClimbAboveRoot) {
    EXPECT_EQ(norm("/.."), "/");
    EXPECT_EQ(norm("/../../.."), "/");
    EXPECT_EQ(norm("/../etc/passwd"), "/etc/passwd");
    EXPECT_EQ(norm("/a/../../../b"), "/b");
    EXPECT_EQ(norm("/%2e%2e/%2e%2e/secret"), "/secret");
}

TEST(NormalizePath, RelativeOrEmptyInputBecomesAbsolute) {
    EXPECT_EQ(norm(""), "/");
    EXPECT_EQ(norm("a/b"), "/a/b");
    EXPECT_EQ(norm("../a"), "/a");
}

TEST(NormalizePath, OtherEscapesAreDecoded) {
    EXPECT_EQ(norm("/caf%C3%A9/a%20b"), "/caf\xc3\xa9/a b");
    EXPECT_EQ(norm("/%41%62c"), "/Abc");
    EXPECT_EQ(norm("/a+b"), "/a+b");  // '+' is only special in query strings
}

TEST(NormalizePath, ResultNeverContainsDotSegmentsOrEmptySegments) {
    // Exhaustive over short paths built from the dangerous pieces.
    const std::vector<std::string> pieces = {"/", "a", ".", "..", "%2e", "%2E%2E", "%41"};
    std::vector<std::string> paths = {""};
    for (int depth = 0; depth < 5; ++depth) {
        std::vector<std::string> next;
        for (const auto& p : paths)
            for (const auto& piece : pieces) next.push_back(p + piece);
        paths = std::move(next);
    }
    for (const auto& raw : paths) {
        std::string out;
        ASSERT_EQ(normalize_path("/" + raw, out), PathStatus::Ok) << raw;
        ASSERT_EQ(out.front(), '/') << raw;
        EXPECT_EQ(out.find("//"), std::string::npos) << raw << " -> " << out;
        std::string framed = out + (out.back() == '/' ? "" : "/");
        EXPECT_EQ(framed.find("/./"), std::string::npos) << raw << " -> " << out;
        EXPECT_EQ(framed.find("/../"), std::string::npos) << raw << " -> " << out;
        std::string again;
        ASSERT_EQ(normalize_path(out, again), PathStatus::Ok);
        EXPECT_EQ(again, out) << "not idempotent: " << raw;
    }
}

// ---------------------------------------------------------------- path_needs_normalizing

TEST(PathNeedsNormalizing, PlainPathsTakeTheFastPath) {
    EXPECT_FALSE(path_needs_normalizing("/"));
    EXPECT_FALSE(path_needs_normalizing("/a/b/c.html"));
    EXPECT_FALSE(path_needs_normalizing("/a/b/"));
    EXPECT_FALSE(path_needs_normalizing("/a.b/c..d"));
}

TEST(PathNeedsNormalizing, AnythingNormalizationWouldChangeIsFlagged) {
    for (const char* raw : {"/a/../b", "/a/./b", "/..", "/.", "//a", "/a//b", "/a%20b", "/%2e%2e", "", "a/b",
                            "/a/b/.."})
        EXPECT_TRUE(path_needs_normalizing(raw)) << raw;
}

TEST(PathNeedsNormalizing, FastPathAgreesWithNormalizePath) {
    // Whenever the fast path says "already normal", normalize_path must be the identity.
    const std::vector<std::string> pieces = {"/", "a", ".", "..", "b.", "%41"};
    std::vector<std::string> paths = {""};
    for (int depth = 0; depth < 6; ++depth) {
        std::vector<std::string> next;
        for (const auto& p : paths)
            for (const auto& piece : pieces) next.push_back(p + piece);
        paths.insert(paths.end(), next.begin(), next.end());
        if (paths.size() > 50000) break;
    }
    for (const auto& raw : paths) {
        if (path_needs_normalizing(raw)) continue;
        std::string out;
        ASSERT_EQ(normalize_path(raw, out), PathStatus::Ok) << raw;
        EXPECT_EQ(out, raw);
    }
}

// ---------------------------------------------------------------- decode_component

TEST(DecodeComponent, PlusIsSpaceOnlyWhenAsked) {
    std::string out;
    ASSERT_TRUE(decode_component("a+b%20c", out, true));
    EXPECT_EQ(out, "a b c");
    ASSERT_TRUE(decode_component("a+b%20c", out, false));
    EXPECT_EQ(out, "a+b c");
    ASSERT_TRUE(decode_component("%2B", out, true));
    EXPECT_EQ(out, "+");  // an encoded plus stays a plus
}

TEST(DecodeComponent, EscapesDecodedInBothCases) {
    std::string out;
    ASSERT_TRUE(decode_component("%e2%82%AC%3d%26", out, true));
    EXPECT_EQ(out, "\xe2\x82\xac=&");
    ASSERT_TRUE(decode_component("", out, true));
    EXPECT_EQ(out, "");
}

TEST(DecodeComponent, OutputIsClearedFirst) {
    std::string out = "stale";
    ASSERT_TRUE(decode_component("x", out, false));
    EXPECT_EQ(out, "x");
}

TEST(DecodeComponent, DecodesNulInQueryValues) {
    // Query values are data, not file names: %00 is allowed here (unlike paths).
    std::string out;
    ASSERT_TRUE(decode_component("a%00b", out, false));
    EXPECT_EQ(out, std::string("a\0b", 3));
}

// ---------------------------------------------------------------- for_each_query_pair

std::vector<std::pair<std::string, std::string>> pairs(std::string_view q) {
    std::vector<std::pair<std::string, std::string>> v;
    for_each_query_pair(q, [&](std::string_view n, std::string_view val) { v.emplace_back(n, val); });
    return v;
}

using PairList = std::vector<std::pair<std::string, std::string>>;

TEST(ForEachQueryPair, SplitsOnAmpersandAndFirstEquals) {
    EXPECT_EQ(pairs("a=1&b=2&c=x=y"), (PairList{{"a", "1"}, {"b", "2"}, {"c", "x=y"}}));
}

TEST(ForEachQueryPair, EmptyPairsSkippedAndMissingValueIsEmpty) {
    EXPECT_EQ(pairs("&&a&b=&=v&"), (PairList{{"a", ""}, {"b", ""}, {"", "v"}}));
    EXPECT_TRUE(pairs("").empty());
}

TEST(ForEachQueryPair, PiecesStayEncoded) {
    EXPECT_EQ(pairs("na%20me=v+al%26"), (PairList{{"na%20me", "v+al%26"}}));
}

// ---------------------------------------------------------------- error paths

TEST(UrlErrors, EncodedNulInPathIsNulByte) {
    EXPECT_EQ(norm_status("/a%00b"), PathStatus::NulByte);
    EXPECT_EQ(norm_status("/%00"), PathStatus::NulByte);
}

TEST(UrlErrors, MalformedEscapeInPathIsBadEscape) {
    for (const char* raw : {"/%zz", "/%4", "/%", "/a%g1", "/a%1g", "/%%41", "/%4%41"})
        EXPECT_EQ(norm_status(raw), PathStatus::BadEscape) << raw;
}

TEST(UrlErrors, MalformedEscapeInComponentReturnsFalse) {
    std::string out;
    EXPECT_FALSE(decode_component("%zz", out, true));
    EXPECT_FALSE(decode_component("abc%4", out, true));
    EXPECT_FALSE(decode_component("abc%", out, true));
    EXPECT_FALSE(decode_component("%G0", out, false));
}

TEST(UrlErrors, BadEscapeAtEndDoesNotReadPastInput) {
    // "%4" followed by bytes that are outside the view must not be decoded as "%41".
    std::string backing = "/x%41";
    std::string_view raw(backing.data(), 4);  // "/x%4"
    EXPECT_EQ(norm_status(raw), PathStatus::BadEscape);
    std::string out;
    EXPECT_FALSE(decode_component(std::string_view(backing.data() + 2, 2), out, false));
}

}  // namespace
}  // namespace kiln::http
