// Renders the templates of tests/views/app, compiled by kilnc through kiln_add_views,
// and checks the exact bytes: hostile input escaped in text and attributes, raw
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
