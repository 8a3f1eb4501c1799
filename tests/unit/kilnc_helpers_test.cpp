// Unit tests of the view runtime (include/kiln/view.hpp, src/view/): what each kind of
// value prints as, in element text and in the other contexts kilnc picks (attribute,
// URL, URL part, script, event handler), the HTML helpers, URL encoding, date
// formatting; then the error paths (hostile URLs and tokens, out-of-range times).
#include <kiln/view.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace {

using namespace kiln;

template <class T>
std::string printed(const T& v) {
    std::string out;
    view::append(out, v);
    return out;
}

template <class T>
std::string printed_raw(const T& v) {
    std::string out;
    view::append_raw(out, v);
    return out;
}

struct Point {
    int x, y;
};
std::string to_html(const Point& p) { return "(" + std::to_string(p.x) + "<" + std::to_string(p.y) + ")"; }

struct Widget {
    void render(std::string& out) const { out += "<widget/>"; }
};

// ---------------------------------------------------------------- printing values

TEST(ViewAppend, TextIsEscapedForTextAndBothAttributeQuotes) {
    EXPECT_EQ(printed(std::string_view("<a href=\"x\" title='y'>&</a>")),
              "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
    EXPECT_EQ(printed("literal <"), "literal &lt;");
    EXPECT_EQ(printed(std::string("s>")), "s&gt;");
    EXPECT_EQ(printed('&'), "&amp;");
}

TEST(ViewAppend, NumbersAndBool) {
    EXPECT_EQ(printed(42), "42");
    EXPECT_EQ(printed(-7L), "-7");
    EXPECT_EQ(printed(std::numeric_limits<uint64_t>::max()), "18446744073709551615");
    EXPECT_EQ(printed(0.25), "0.25");
    EXPECT_EQ(printed(1.5f), "1.5");
    EXPECT_EQ(printed(true), "true");
    EXPECT_EQ(printed(false), "false");
}

TEST(ViewAppend, OptionalHtmlViewsAndToHtml) {
    EXPECT_EQ(printed(std::optional<std::string_view>("<")), "&lt;");
    EXPECT_EQ(printed(std::optional<int>()), "");
    EXPECT_EQ(printed(Html::trusted("<br>")), "<br>");
    EXPECT_EQ(printed(Widget{}), "<widget/>");
    EXPECT_EQ(printed(Point{1, 2}), "(1&lt;2)");
}

TEST(ViewAppend, RawPrintsTextVerbatimAndEverythingElseAsAppend) {
    EXPECT_EQ(printed_raw(std::string_view("<b>&</b>")), "<b>&</b>");
    EXPECT_EQ(printed_raw(3), "3");
    EXPECT_EQ(printed_raw(Point{1, 2}), "(1&lt;2)");
    EXPECT_EQ(printed_raw(raw("<i>")), "<i>");
}

TEST(ViewAppend, ContentRendersTheCallableItRefersTo) {
    auto page = [](std::string& out) { out += "page"; };
    view::Content content = page;
    EXPECT_EQ(printed(content), "page");
}

// ---------------------------------------------------------------- printing in other contexts
// (the functions kilnc's generated code calls where a value is not in element text)

template <class F>
std::string out_of(F&& print) {
    std::string out;
    print(out);
    return out;
}

TEST(ViewContexts, AttributesEscapeLikeTextAndPrintOtherValuesAlike) {
    EXPECT_EQ(out_of([](std::string& o) { view::append_attr(o, std::string_view("\"'<>&x")); }),
              "&quot;&#39;&lt;&gt;&amp;x");
    EXPECT_EQ(out_of([](std::string& o) { view::append_attr(o, Point{1, 2}); }), "(1&lt;2)");  // to_html text
    EXPECT_EQ(out_of([](std::string& o) { view::append_attr(o, 2.5); }), "2.5");
    EXPECT_EQ(out_of([](std::string& o) { view::append_attr(o, std::optional<int>()); }), "");
}

TEST(ViewContexts, WholeUrlsKeepSafeSchemesAndReplaceOthers) {
    EXPECT_EQ(out_of([](std::string& o) { view::append_url(o, "https://x.example/?a=1&b=\"2\""); }),
              "https://x.example/?a=1&amp;b=&quot;2&quot;");
    EXPECT_EQ(out_of([](std::string& o) { view::append_url(o, "/relative:colon"); }), "/relative:colon");
    EXPECT_EQ(out_of([](std::string& o) { view::append_url(o, ":no-scheme"); }), ":no-scheme");
    EXPECT_EQ(out_of([](std::string& o) { view::append_url(o, std::string("javascript:alert(1)")); }), "#");
}

TEST(ViewContexts, UrlPartsArePercentEncodedComponents) {
    EXPECT_EQ(out_of([](std::string& o) { view::append_url_part(o, "a&admin=1 /?#%+"); }),
              "a%26admin%3D1%20%2F%3F%23%25%2B");
    EXPECT_EQ(out_of([](std::string& o) { view::append_url_part(o, -12); }), "-12");
    EXPECT_EQ(out_of([](std::string& o) { view::append_url_part(o, 1e21); }), "1e%2B21");
    EXPECT_EQ(out_of([](std::string& o) { view::append_url_part(o, true); }), "true");
}

TEST(ViewContexts, ScriptsGetJsLiteralsOfEveryKind) {
    EXPECT_EQ(out_of([](std::string& o) { view::append_js(o, "a\"b'c`d${e}</script>\\\n\t\x01\xE2\x80\xA8&"); }),
              "\"a\\u0022b\\u0027c\\u0060d\\u0024{e}\\u003C\\/script\\u003E\\\\\\n\\t\\u0001\\u2028\\u0026\"");
    EXPECT_EQ(out_of([](std::string& o) { view::append_js(o, std::string_view("h\xC3\xA9")); }), "\"h\xC3\xA9\"");
    EXPECT_EQ(out_of([](std::string& o) { view::append_js(o, 42); }), "42");
    EXPECT_EQ(out_of([](std::string& o) { view::append_js(o, -42); }), " -42");
    EXPECT_EQ(out_of([](std::string& o) { view::append_js(o, -0.0); }), " -0");
    EXPECT_EQ(out_of([](std::string& o) { view::append_js(o, std::numeric_limits<double>::quiet_NaN()); }), "NaN");
    EXPECT_EQ(out_of([](std::string& o) { view::append_js(o, -std::numeric_limits<double>::infinity()); }),
              " -Infinity");
    EXPECT_EQ(out_of([](std::string& o) { view::append_js(o, 7u); }), "7");
    EXPECT_EQ(out_of([](std::string& o) { view::append_js(o, false); }), "false");
    EXPECT_EQ(out_of([](std::string& o) { view::append_js(o, std::optional<std::string>()); }), "null");
    EXPECT_EQ(out_of([](std::string& o) { view::append_js(o, static_cast<const char*>(nullptr)); }), "null");
    EXPECT_EQ(out_of([](std::string& o) { view::append_js(o, 'x'); }), "\"x\"");
}

TEST(ViewContexts, EventHandlersGetTheLiteralAttributeEscaped) {
    EXPECT_EQ(out_of([](std::string& o) { view::append_js_attr(o, "x\"y"); }), "&quot;x\\u0022y&quot;");
    EXPECT_EQ(out_of([](std::string& o) { view::append_js_attr(o, 3); }), "3");
}

// ---------------------------------------------------------------- helpers

TEST(ViewHelpers, UrlEncodeKeepsOnlyUnreservedBytes) {
    EXPECT_EQ(url_encode("AZaz09-._~"), "AZaz09-._~");
    EXPECT_EQ(url_encode("a b&c=d/é?#%+"), "a%20b%26c%3Dd%2F%C3%A9%3F%23%25%2B");
    EXPECT_EQ(url_encode(std::string_view("\0\xff", 2)), "%00%FF");
    EXPECT_EQ(url_encode(""), "");
}

TEST(ViewHelpers, LinkToEscapesHrefAndText) {
    EXPECT_EQ(link_to("/search?q=a&b=\"c\"", "<Tom & Jerry>").str(),
              "<a href=\"/search?q=a&amp;b=&quot;c&quot;\">&lt;Tom &amp; Jerry&gt;</a>");
    EXPECT_EQ(link_to("https://example.com/", "x").str(), "<a href=\"https://example.com/\">x</a>");
    EXPECT_EQ(link_to("/p?u=" + url_encode("a&b"), "x").str(), "<a href=\"/p?u=a%26b\">x</a>");
}

TEST(ViewHelpers, CsrfFieldAndForms) {
    EXPECT_EQ(csrf_field("tok").str(), "<input type=\"hidden\" name=\"_csrf\" value=\"tok\">");
    EXPECT_EQ(form_open("/posts", "tok").str(),
              "<form action=\"/posts\" method=\"post\"><input type=\"hidden\" name=\"_csrf\" value=\"tok\">");
    EXPECT_EQ(form_open("/search", "tok", "GET").str(), "<form action=\"/search\" method=\"get\">");
    EXPECT_EQ(form_open("/posts/1", "tok", "delete").str(),
              "<form action=\"/posts/1\" method=\"post\"><input type=\"hidden\" name=\"_method\" value=\"DELETE\">"
              "<input type=\"hidden\" name=\"_csrf\" value=\"tok\">");
    EXPECT_EQ(form_close().str(), "</form>");
}

TEST(ViewHelpers, DatesInUtc) {
    EXPECT_EQ(format_datetime(int64_t{0}).view(), "1970-01-01 00:00");
    EXPECT_EQ(format_rfc3339(int64_t{0}).view(), "1970-01-01T00:00:00Z");
    EXPECT_EQ(format_datetime(int64_t{951782400}).view(), "2000-02-29 00:00");  // leap day
    EXPECT_EQ(format_rfc3339(int64_t{1710000000}).view(), "2024-03-09T16:00:00Z");
    EXPECT_EQ(format_rfc3339(int64_t{-1}).view(), "1969-12-31T23:59:59Z");
    auto t = std::chrono::sys_days{std::chrono::year{2023} / 12 / 31} + std::chrono::hours{23} +
             std::chrono::minutes{59} + std::chrono::seconds{59} + std::chrono::milliseconds{999};
    EXPECT_EQ(format_datetime(std::chrono::system_clock::time_point(t)).view(), "2023-12-31 23:59");
    EXPECT_EQ(format_rfc3339(std::chrono::system_clock::time_point(t)).view(), "2023-12-31T23:59:59Z");
    EXPECT_EQ(printed(format_datetime(int64_t{0})), "1970-01-01 00:00");
}

// ---------------------------------------------------------------- error paths

TEST(ViewHelpersErrorPaths, ScriptUrlsNeverBecomeLinksOrFormActions) {
    for (std::string_view bad : {"javascript:alert(1)", "JavaScript:alert(1)", " \x01javascript:x", "java\tscript:x",
                                 "java\nscript:x", "vbscript:x", "data:text/html,<script>"}) {
        EXPECT_FALSE(is_safe_href(bad)) << bad;
        EXPECT_EQ(link_to(bad, "x").str(), "<a href=\"#\">x</a>") << bad;
        EXPECT_EQ(form_open(bad, "t", "get").str(), "<form action=\"#\" method=\"get\">") << bad;
    }
    // "jav&#x61;script:" is printed as "jav&amp;#x61;script:": the browser sees no scheme.
    EXPECT_EQ(link_to("jav&#x61;script:x", "x").str(), "<a href=\"jav&amp;#x61;script:x\">x</a>");
    for (std::string_view good : {"/a:b", "a/b:c", "?x=javascript:1", "#javascript:", "mailto:a@b", "tel:+1",
                                  "HTTP://x", "//host/path", "", "plain", ":x", " :javascript:x"})
        EXPECT_TRUE(is_safe_href(good)) << good;
}

TEST(ViewHelpersErrorPaths, NullCharPointerPrintsNothing) {
    const char* none = nullptr;
    EXPECT_EQ(printed(none), "");
    EXPECT_EQ(printed_raw(none), "");
    const char* some = "<";
    EXPECT_EQ(printed(some), "&lt;");
    EXPECT_EQ(printed_raw(some), "<");
}

TEST(ViewHelpersErrorPaths, HostileTokenAndMethodAreEscaped) {
    EXPECT_EQ(csrf_field("\"><script>").str(),
              "<input type=\"hidden\" name=\"_csrf\" value=\"&quot;&gt;&lt;script&gt;\">");
    EXPECT_EQ(form_open("/", "t", "x\"y").str(),
              "<form action=\"/\" method=\"post\"><input type=\"hidden\" name=\"_method\" value=\"X&quot;Y\">"
              "<input type=\"hidden\" name=\"_csrf\" value=\"t\">");
}

TEST(ViewHelpersErrorPaths, TimesOutsideYears1To9999AreClamped) {
    EXPECT_EQ(format_rfc3339(std::numeric_limits<int64_t>::max()).view(), "9999-12-31T23:59:59Z");
    EXPECT_EQ(format_rfc3339(std::numeric_limits<int64_t>::min()).view(), "0001-01-01T00:00:00Z");
    EXPECT_EQ(format_datetime(int64_t{253402300800}).view(), "9999-12-31 23:59");
}

}  // namespace
