// Renders the templates of tests/views/app, compiled by kilnc through kiln_add_views,
// and checks the exact bytes: hostile input escaped in text and attributes, each HTML
// context's escaper (contexts/: URLs, scripts, event handlers, branches), raw
// output only where asked, layouts (nested too), partials (recursive too), loops,
// parameter defaults, the to_html extension point, and name mapping.
#include <gtest/gtest.h>

#include <kiln/response.hpp>
#include <kiln/view.hpp>

#include <optional>
#include <string>
#include <vector>

#include "views.hpp"  // every template of this target (generated)

namespace {

using test_models::Badge;
using test_models::Money;
using test_models::Node;
using test_models::Post;

constexpr std::string_view kHostile = "<script>\"&'";
constexpr std::string_view kHostileEscaped = "&lt;script&gt;&quot;&amp;&#39;";

std::string layout(std::string_view title_escaped, std::string_view content) {
    return "<html><head><title>" + std::string(title_escaped) + "</title></head>\n<body>\n" +
           std::string(content) + "</body></html>\n";
}

// ---------------------------------------------------------------- escaping

TEST(RenderEscaping, HostileTextIsEscaped) {
    EXPECT_EQ(kiln::render_to_string(views::hello{.name = kHostile}),
              "<h1>hello " + std::string(kHostileEscaped) + "</h1>\n");
}

TEST(RenderEscaping, HostileAttributeValuesCannotBreakOutOfEitherQuote) {
    EXPECT_EQ(kiln::render_to_string(views::attributes{.value = "\" onmouseover='x' a=\""}),
              "<input value=\"&quot; onmouseover=&#39;x&#39; a=&quot;\" "
              "title='&quot; onmouseover=&#39;x&#39; a=&quot;'>\n");
}

TEST(RenderEscaping, RawOutputIsVerbatimOnlyWhereTheTemplateSaysSo) {
    EXPECT_EQ(kiln::render_to_string(views::raw{.markup = "<b>bold</b> & \"q\""}), "<div><b>bold</b> & \"q\"</div>\n");
}

TEST(RenderEscaping, ValuesOfEveryPrintableKind) {
    views::values v{.count = 3,
                    .ratio = 0.5,
                    .flag = true,
                    .maybe = std::optional<std::string>("<x>"),
                    .price = Money{1205},
                    .badge = Badge{"<i>"}};
    EXPECT_EQ(kiln::render_to_string(v),
              "<p>3|0.5|true|&lt;x&gt;|&lt;|-9000000000</p>\n"
              "<p>12.05 &lt;EUR&gt; <b>&lt;i&gt;</b></p>\n"
              "<p>literal <% tag and %&gt;</p>\n");
}

TEST(RenderEscaping, EmptyOptionalPrintsNothingAndDefaultsCanBeOverridden) {
    views::values v{.count = -1,
                    .ratio = 1e21,
                    .flag = false,
                    .maybe = std::nullopt,
                    .price = Money{7},
                    .badge = Badge{""},
                    .big = 42};
    EXPECT_EQ(kiln::render_to_string(v),
              "<p>-1|1e+21|false||&lt;|42</p>\n"
              "<p>0.07 &lt;EUR&gt; <b></b></p>\n"
              "<p>literal <% tag and %&gt;</p>\n");
}

TEST(RenderEscaping, HelpersEscapeTheirArguments) {
    EXPECT_EQ(kiln::render_to_string(views::forms{.action = "/posts?a=1&b=2", .token = "t\"<"}),
              "<form action=\"/posts?a=1&amp;b=2\" method=\"post\">"
              "<input type=\"hidden\" name=\"_csrf\" value=\"t&quot;&lt;\">"
              "<input type=\"hidden\" name=\"_csrf\" value=\"t&quot;&lt;\"></form>\n"
              "2024-03-09 16:00 2024-03-09T16:00:00Z\n");
}

// ---------------------------------------------------------------- contextual escaping
// kilnc picks each <%= %>'s escaper from the HTML around it (tools/kilnc/escape_contexts).
// The five payloads of the security finding that one text escaper let through:
constexpr std::string_view kUnquotedAttack = "x onmouseover=alert(1)";       // refused unquoted (bad/)
constexpr std::string_view kJavascriptUrl = "javascript:alert(document.cookie)";
constexpr std::string_view kScriptStatement = "1;alert(1)";
constexpr std::string_view kCssAttack = "red;background:url(//evil.example/x)";  // refused in CSS (bad/)
constexpr std::string_view kQueryParameter = "a&admin=1";

TEST(RenderContexts, QuotedAttributesKeepAnUnquotedAttackInsideTheirQuotes) {
    EXPECT_EQ(kiln::render_to_string(views::contexts::attributes{.v = kUnquotedAttack}),
              "<p title=\"x onmouseover=alert(1)\" class='x onmouseover=alert(1)'>x onmouseover=alert(1)</p>\n");
    EXPECT_EQ(kiln::render_to_string(views::contexts::attributes{.v = kHostile}),
              "<p title=\"" + std::string(kHostileEscaped) + "\" class='" + std::string(kHostileEscaped) + "'>" +
                  std::string(kHostileEscaped) + "</p>\n");
}

TEST(RenderContexts, AJavascriptUrlBecomesHashInEveryUrlAttribute) {
    EXPECT_EQ(kiln::render_to_string(views::contexts::urls{.url = kJavascriptUrl, .part = "x"}),
              "<a href=\"#\">whole</a>\n"
              "<a href=\"/search?q=x&amp;page=1\">query</a>\n"
              "<a href=\"/tags/x#x\">path and fragment</a>\n"
              "<img src=\" #\" alt=\"\">\n"
              "<form action=\"#\"><button formaction=\"#\">go</button></form>\n"
              "<svg><a xlink:href=\"#\"></a></svg>\n");
    for (std::string_view url : {" JaVa\tScRiPt:x", "data:text/html,<script>x</script>", "vbscript:x"})
        EXPECT_EQ(kiln::render_to_string(views::contexts::urls{.url = url, .part = "x"}).substr(0, 13),
                  "<a href=\"#\">w")
            << url;
}

TEST(RenderContexts, AValueInAQueryCannotAddAParameter) {
    std::string out = kiln::render_to_string(views::contexts::urls{.url = "/", .part = kQueryParameter});
    EXPECT_NE(out.find("<a href=\"/search?q=a%26admin%3D1&amp;page=1\">"), std::string::npos) << out;
    EXPECT_NE(out.find("<a href=\"/tags/a%26admin%3D1#a%26admin%3D1\">"), std::string::npos) << out;
}

TEST(RenderContexts, OrdinaryUrlsAndPartsRenderUnchanged) {
    views::contexts::urls page{.url = "https://example.com/a?b=1&c=2", .part = "Tom-2.0_~x", .page = 3};
    std::string out = kiln::render_to_string(page);
    EXPECT_NE(out.find("<a href=\"https://example.com/a?b=1&amp;c=2\">whole</a>"), std::string::npos) << out;
    EXPECT_NE(out.find("<a href=\"/search?q=Tom-2.0_~x&amp;page=3\">"), std::string::npos) << out;
    EXPECT_NE(out.find("<a href=\"/tags/Tom-2.0_~x#Tom-2.0_~x\">"), std::string::npos) << out;
    EXPECT_NE(out.find("<img src=\" https://example.com/a?b=1&amp;c=2\""), std::string::npos) << out;
}

TEST(RenderContexts, PathPartsArePercentEncodedAsOneSegment) {
    std::string out = kiln::render_to_string(views::contexts::urls{.url = "/", .part = "../a b/?#%", .page = 1e21});
    EXPECT_NE(out.find("<a href=\"/tags/..%2Fa%20b%2F%3F%23%25#..%2Fa%20b%2F%3F%23%25\">"), std::string::npos)
        << out;
    EXPECT_NE(out.find("&amp;page=1e%2B21\""), std::string::npos) << out;  // '+' would read as a space
}

TEST(RenderContexts, AStatementInAScriptStaysAString) {
    views::contexts::script page{.s = kScriptStatement, .n = 2.5, .maybe = 7, .flag = true};
    EXPECT_EQ(kiln::render_to_string(page),
              "<script>\n"
              "var s = \"1;alert(1)\", n = 2.5, m = 7, f = true;\n"
              "// a comment may hold one too: \"1;alert(1)\"\n"
              "if (n / 2 > 0) { show(`count: ${\"1;alert(1)\"}`); }\n"
              "</script>\n");
}

TEST(RenderContexts, ScriptValuesCannotCloseTheStringTheScriptOrALine) {
    views::contexts::script page{.s = "\\", .n = -1, .maybe = std::nullopt, .flag = false};
    std::string out = kiln::render_to_string(page);
    EXPECT_NE(out.find("var s = \"\\\\\", n =  -1, m = null, f = false;"), std::string::npos) << out;

    out = kiln::render_to_string(views::contexts::script{
        .s = "</script><script>alert(1)</script>\"'`${x}\n\xE2\x80\xA8&", .n = 0, .maybe = 1, .flag = true});
    EXPECT_NE(out.find("var s = \"\\u003C\\/script\\u003E\\u003Cscript\\u003Ealert(1)\\u003C\\/script\\u003E"
                       "\\u0022\\u0027\\u0060\\u0024{x}\\n\\u2028\\u0026\","),
              std::string::npos)
        << out;
    EXPECT_EQ(out.find("</script>"), out.rfind("</script>"));  // only the template's own
}

TEST(RenderContexts, EventHandlersGetAttributeEscapedJsLiterals) {
    EXPECT_EQ(kiln::render_to_string(views::contexts::handlers{.s = "');alert(1);//", .n = 3}),
              "<button onclick=\"pick(&quot;\\u0027);alert(1);\\/\\/&quot;, 3)\" "
              "onmouseover='hint(&quot;\\u0027);alert(1);\\/\\/&quot;)'>x</button>\n");
    EXPECT_EQ(kiln::render_to_string(views::contexts::handlers{.s = "ok", .n = -3}),
              "<button onclick=\"pick(&quot;ok&quot;,  -3)\" onmouseover='hint(&quot;ok&quot;)'>x</button>\n");
}

TEST(RenderContexts, TitleAndTextareaHoldEscapedText) {
    EXPECT_EQ(kiln::render_to_string(views::contexts::rcdata{.s = "</title></textarea><script>x</script>"}),
              "<title>&lt;/title&gt;&lt;/textarea&gt;&lt;script&gt;x&lt;/script&gt;</title>\n"
              "<textarea name=\"t\">&lt;/title&gt;&lt;/textarea&gt;&lt;script&gt;x&lt;/script&gt;</textarea>\n");
}

TEST(RenderContexts, EachBranchEscapesForItsOwnContext) {
    views::contexts::branches external{.external = true, .url = "https://x.example/?a&b", .s = "<s>"};
    EXPECT_EQ(kiln::render_to_string(external),
              "<a href=\"https://x.example/?a&amp;b\" rel=\"external\">&lt;s&gt;</a>\n"
              "<ul>\n<li data-i=\"0\">&lt;s&gt;</li>\n<li data-i=\"1\">&lt;s&gt;</li>\n</ul>\n"
              "<script>\nvar u = \"https:\\/\\/x.example\\/?a\\u0026b\";\n</script>\n");
    EXPECT_EQ(kiln::render_to_string(views::contexts::branches{.external = false, .url = "a b", .s = "s"}),
              "<a href=\"/local/a%20b\">s</a>\n"
              "<ul>\n<li data-i=\"0\">s</li>\n<li data-i=\"1\">s</li>\n</ul>\n"
              "<script>\n\n</script>\n");
}

TEST(RenderContexts, RawOutputIsVerbatimEvenInCss) {
    EXPECT_EQ(kiln::render_to_string(views::contexts::raw{.css = kCssAttack}),
              "<style>p { color: red;background:url(//evil.example/x); }</style>\n"
              "<p style=\"color: red;background:url(//evil.example/x)\" class=red;background:url(//evil.example/x)>"
              "x</p>\n");
}

// ---------------------------------------------------------------- layouts, partials, loops

TEST(RenderLayout, PageInsideItsLayoutWithPartialsInALoop) {
    std::vector<Post> posts{{"First <post>", "/posts/1", "ann"}, {"Tom & Jerry", "javascript:alert(1)", "bob\""}};
    std::string content =
        "<ul>\n"
        "  <li><a href=\"/posts/1\">First &lt;post&gt;</a> by ann\n</li>\n"
        "  <li><a href=\"#\">Tom &amp; Jerry</a> by bob&quot;\n</li>\n"
        "</ul>\n";
    EXPECT_EQ(kiln::render_to_string(views::posts::index{.posts = posts, .title = kHostile}),
              layout(kHostileEscaped, content));
}

TEST(RenderLayout, EmptyLoopTakesTheElseBranch) {
    std::vector<Post> none;
    EXPECT_EQ(kiln::render_to_string(views::posts::index{.posts = none, .title = "Posts"}),
              layout("Posts", "<ul>\n</ul>\n<p>No posts.</p>\n"));
}

TEST(RenderLayout, RenderBodyLeavesTheLayoutOut) {
    std::vector<Post> none;
    std::string out;
    views::posts::index{.posts = none, .title = "Posts"}.render_body(out);
    EXPECT_EQ(out, "<ul>\n</ul>\n<p>No posts.</p>\n");
}

TEST(RenderLayout, NestedLayoutsAndContentPrintedWithRawTag) {
    EXPECT_EQ(kiln::render_to_string(views::admin{.user = "<eve>"}),
              layout("Admin", "<nav>admin: &lt;eve&gt;</nav>\n<p>Welcome back, &lt;eve&gt;.</p>\n\n"));
}

TEST(RenderPartial, PartialRendersItselfRecursively) {
    Node tree{"a", {{"b", {}}, {"<c>", {{"d", {}}}}}};
    EXPECT_EQ(kiln::render_to_string(views::tree::_node{.node = tree}),
              "<li>a<ul>\n"
              "<li>b</li>\n"
              "<li>&lt;c&gt;<ul>\n<li>d</li>\n</ul></li>\n"
              "</ul></li>\n");
}

TEST(RenderPartial, PartialRendersOnItsOwn) {
    Post p{"t", "/p", "me"};
    EXPECT_EQ(kiln::render_to_string(views::posts::_item{.post = p}), "<a href=\"/p\">t</a> by me\n");
}

// ---------------------------------------------------------------- names, defaults, output

TEST(RenderNames, KeywordAndDashedTemplateNamesAreMapped) {
    EXPECT_EQ(kiln::render_to_string(views::new_{}), "<p>keyword-named template</p>\n");
    EXPECT_EQ(kiln::render_to_string(views::my_page{}), "<p>dashed name</p>\n");
}

TEST(RenderParams, DefaultUsedWhenLeftOutAndPositionalInitWorks) {
    EXPECT_EQ(kiln::render_to_string(views::defaults{.who = "me"}), "me on page 1\n");
    EXPECT_EQ(kiln::render_to_string(views::defaults{"you", 7}), "you on page 7\n");
}

TEST(RenderOutput, AppendsToTheCallersStringWithoutReallocating) {
    std::string out = "before|";
    out.reserve(4096);
    const char* data = out.data();
    views::hello{.name = "x"}.render(out);
    EXPECT_EQ(out, "before|<h1>hello x</h1>\n");
    EXPECT_EQ(out.data(), data);
}

TEST(RenderOutput, RenderIntoResponseSetsHtmlBody) {
    kiln::Response res;
    res.text("old body");
    kiln::render(res, views::hello{.name = "<b>"});
    EXPECT_EQ(res.body(), "<h1>hello &lt;b&gt;</h1>\n");
    EXPECT_EQ(res.content_type(), "text/html; charset=utf-8");
}

// ---------------------------------------------------------------- error paths
// Template errors are rejected before any C++ exists (ctest kilnc_error_*), and C++
// errors in templates point at the template line (ctest kilnc_cxx_error_*). Here: what
// is left at run time.

TEST(RenderErrorPaths, UnsafeLinkTargetsAreNeutralised) {
    Post p{"x", " JaVa\tScRiPt:alert(1)", "y"};
    EXPECT_EQ(kiln::render_to_string(views::posts::_item{.post = p}), "<a href=\"#\">x</a> by y\n");
}

TEST(RenderErrorPaths, EmbeddedNulAndInvalidUtf8PassThroughEscapingUnchanged) {
    std::string name("a\0b\xff<", 5);
    EXPECT_EQ(kiln::render_to_string(views::hello{.name = name}), std::string("<h1>hello a") + '\0' + "b\xff&lt;</h1>\n");
}

}  // namespace
