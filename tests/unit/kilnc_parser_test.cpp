// Unit tests of kilnc's parser, directives and name mapping (tools/kilnc/parser.cpp,
// directives.cpp, layout_check.cpp, names.cpp), with an in-memory views directory;
// then the error paths, each with its position.
#include "kilnc/parser.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kilnc/names.hpp"

namespace kiln::kilnc {
namespace {

// An in-memory views directory.
struct Views {
    std::map<std::string, std::string> files;
    int loads = 0;
    TemplateLoader loader() {
        return [this](const std::string& name) -> std::optional<std::string> {
            ++loads;
            auto it = files.find(name);
            if (it == files.end()) return std::nullopt;
            return it->second;
        };
    }
};

ParseResult parse(std::string_view src, Views& views, std::string_view name = "posts/index.html") {
    return parse_template(src, name, views.loader());
}

Template parse_ok(std::string_view src, Views& views, std::string_view name = "posts/index.html") {
    ParseResult r = parse(src, views, name);
    EXPECT_FALSE(r.error) << r.error->pos.line << ":" << r.error->pos.col << ": " << r.error->message;
    return r.tpl;
}

// "line:col: message" of the expected error.
std::string parse_error(std::string_view src, Views& views, std::string_view name = "posts/index.html") {
    ParseResult r = parse(src, views, name);
    if (!r.error) return "no error";
    return std::to_string(r.error->pos.line) + ":" + std::to_string(r.error->pos.col) + ": " + r.error->message;
}

// ---------------------------------------------------------------- names

TEST(KilncNames, PathsMapToNamespacesAndAStruct) {
    TemplateName n;
    ASSERT_FALSE(map_template_name("admin/user-list/show.html", n));
    EXPECT_EQ(n.path, "admin/user-list/show");
    EXPECT_EQ(n.scopes, (std::vector<std::string>{"admin", "user_list"}));
    EXPECT_EQ(n.ident, "show");
    EXPECT_EQ(qualified_name("views", n), "::views::admin::user_list::show");
    EXPECT_EQ(header_include("views", n), "views/admin/user-list/show.hpp");
}

TEST(KilncNames, KeywordsDigitsDotsAndReservedNeighbours) {
    TemplateName n;
    ASSERT_FALSE(map_template_name("class/new", n));
    EXPECT_EQ(qualified_name("v", n), "::v::class_::new_");
    ASSERT_FALSE(map_template_name("errors/404", n));
    EXPECT_EQ(n.ident, "_404");
    ASSERT_FALSE(map_template_name("std/kiln", n));
    EXPECT_EQ(qualified_name("v", n), "::v::std_::kiln_");
    ASSERT_FALSE(map_template_name("show.json", n));
    EXPECT_EQ(n.ident, "show_json");
    ASSERT_FALSE(map_template_name("posts/_form", n));
    EXPECT_EQ(n.ident, "_form");
}

// ---------------------------------------------------------------- params and includes

TEST(KilncParams, TypesWithTemplatesCommasAndDefaults) {
    Views v;
    Template t = parse_ok(
        "<%@ param const std::map<int, std::vector<Post>>& by_id %>\n"
        "<%@ param std::string_view title %>\n"
        "<%@ param int page = 1 %>\n"
        "<%@ param bool wide = page >= 2 %>\n"
        "<%@ param const char* label = \"a=b\" %>\n",
        v);
    ASSERT_EQ(t.params.size(), 5u);
    EXPECT_EQ(t.params[0].type, "const std::map<int, std::vector<Post>>&");
    EXPECT_EQ(t.params[0].name, "by_id");
    EXPECT_EQ(t.params[0].default_value, "");
    EXPECT_EQ(t.params[1].type, "std::string_view");
    EXPECT_EQ(t.params[2].default_value, "1");
    EXPECT_EQ(t.params[3].default_value, "page >= 2");
    EXPECT_EQ(t.params[4].type, "const char*");
    EXPECT_EQ(t.params[4].default_value, "\"a=b\"");
    EXPECT_EQ(t.params[4].pos.line, 5);
    EXPECT_TRUE(t.body.empty());  // directive lines produce no output
}

TEST(KilncParams, IncludesKeepTheirDelimiters) {
    Views v;
    Template t = parse_ok("<%@ include \"models/post.hpp\" %>\n<%@ include <vector> %>\n", v);
    ASSERT_EQ(t.includes.size(), 2u);
    EXPECT_EQ(t.includes[0].target, "\"models/post.hpp\"");
    EXPECT_EQ(t.includes[1].target, "<vector>");
    EXPECT_EQ(t.includes[1].pos.line, 2);
}

TEST(KilncParams, CommentsAndBlankLinesMayPrecedeHeaderDirectives) {
    Views v;
    Template t = parse_ok("<%# the page %>\n\n<%@ param int n %>\n<p><%= n %></p>\n", v);
    ASSERT_EQ(t.body.size(), 3u);
    EXPECT_EQ(t.body[0].text, "<p>");
}

// ---------------------------------------------------------------- body

TEST(KilncBody, TextAroundCommentsIsMergedAndCodeKeepsItsPosition) {
    Views v;
    Template t = parse_ok("a<%# x %>b\n  <% if (x) { %>\nc<%= y %>", v);
    ASSERT_EQ(t.body.size(), 4u);
    EXPECT_EQ(t.body[0].kind, NodeKind::Text);
    EXPECT_EQ(t.body[0].text, "ab\n");
    EXPECT_EQ(t.body[1].kind, NodeKind::Code);
    EXPECT_EQ(t.body[1].code.code, " if (x) { ");
    EXPECT_EQ(t.body[1].code.pos.line, 2);
    EXPECT_EQ(t.body[1].code.pos.col, 5);
    EXPECT_EQ(t.body[1].code.indent, "    ");
    EXPECT_EQ(t.body[3].kind, NodeKind::Output);
}

TEST(KilncBody, YieldOrContentMakesALayout) {
    Views v;
    EXPECT_TRUE(parse_ok("<main><%@ yield %></main>", v, "layouts/a.html").is_layout);
    EXPECT_TRUE(parse_ok("<main><%== content %></main>", v, "layouts/b.html").is_layout);
    EXPECT_FALSE(parse_ok("<main><%== contents %></main>", v, "layouts/c.html").is_layout);
}

// ---------------------------------------------------------------- layouts and partials

TEST(KilncRefs, LayoutWithInitializersAndTheirPosition) {
    Views v;
    v.files["layouts/app"] = "<%@ param std::string_view title %>\n<%@ yield %>";
    Template t = parse_ok("<%@ layout \"layouts/app\" .title = title %>\n<p>x</p>\n", v);
    ASSERT_TRUE(t.layout);
    EXPECT_EQ(t.layout->name.path, "layouts/app");
    EXPECT_EQ(t.layout->init.code, " .title = title ");
    EXPECT_EQ(t.layout->init.pos.line, 1);
    EXPECT_EQ(t.layout->init.pos.col, 25);
    EXPECT_EQ(t.layout->init.indent, std::string(24, ' '));
}

TEST(KilncRefs, LayoutChainWithoutCycleIsAccepted) {
    Views v;
    v.files["layouts/admin"] = "<%@ layout \"layouts/app\" %>\n<%@ yield %>";
    v.files["layouts/app"] = "<%@ yield %>";
    EXPECT_TRUE(parse_ok("<%@ layout \"layouts/admin.html\" %>", v).layout);
}

TEST(KilncRefs, PartialNamesWithoutSlashAreRelativeAndIncludedOnce) {
    Views v;
    v.files["posts/_item"] = "x";
    v.files["shared/_nav"] = "y";
    Template t = parse_ok("<%@ render \"_item\" .post = a %><%@ render \"_item\" %><%@ render \"shared/_nav\" %>", v);
    ASSERT_EQ(t.body.size(), 3u);
    EXPECT_EQ(t.body[0].kind, NodeKind::Render);
    EXPECT_EQ(t.body[0].ref.path, "posts/_item");
    EXPECT_EQ(t.body[0].code.code, " .post = a ");
    ASSERT_EQ(t.partials.size(), 2u);
    EXPECT_EQ(t.partials[1].path, "shared/_nav");
}

TEST(KilncRefs, APartialMayRenderItself) {
    Views v;  // the loader does not know it: it is the template being compiled
    Template t = parse_ok("<%@ render \"_tree\" .n = c %>", v, "nodes/_tree.html");
    EXPECT_EQ(t.body[0].ref.path, "nodes/_tree");
}

// ---------------------------------------------------------------- error paths

TEST(KilncParserErrorPaths, DirectiveErrorsCarryTheTagPosition) {
    Views v;
    EXPECT_EQ(parse_error("<p>\n  <%@ nope %>", v),
              "2:3: unknown directive 'nope' (expected param, include, layout, render or yield)");
    EXPECT_EQ(parse_error("<%@ %>", v), "1:1: empty directive: expected param, include, layout, render or yield");
    EXPECT_EQ(parse_error("<%@ \"x\" %>", v), "1:1: empty directive: expected param, include, layout, render or yield");
    EXPECT_EQ(parse_error("x<%=   %>", v), "1:2: empty expression in output tag");
    EXPECT_EQ(parse_error("<%@ yield x %>", v), "1:1: yield takes no arguments");
}

TEST(KilncParserErrorPaths, MalformedParams) {
    Views v;
    const std::string usage =
        "1:1: malformed param: expected <%@ param TYPE NAME %> or <%@ param TYPE NAME = DEFAULT %>";
    EXPECT_EQ(parse_error("<%@ param %>", v), usage);
    EXPECT_EQ(parse_error("<%@ param title %>", v), usage);
    EXPECT_EQ(parse_error("<%@ param std::string %>", v), usage);
    EXPECT_EQ(parse_error("<%@ param int 9lives %>", v), usage);
    EXPECT_EQ(parse_error("<%@ param int a; int b %>", v), usage + " (no ';')");
    EXPECT_EQ(parse_error("<%@ param int new %>", v), "1:1: parameter name 'new' is a C++ keyword");
    EXPECT_EQ(parse_error("<%@ param int kiln_out %>", v),
              "1:1: parameter name 'kiln_out' is reserved by kilnc (render, render_body, content, kiln_*)");
    EXPECT_EQ(parse_error("<%@ param int render %>", v),
              "1:1: parameter name 'render' is reserved by kilnc (render, render_body, content, kiln_*)");
    EXPECT_EQ(parse_error("<%@ param std::string&& s %>", v),
              "1:1: param 's': rvalue references are not supported; take it by value or const&");
    EXPECT_EQ(parse_error("<%@ param int a %>\n<%@ param int a %>", v), "2:1: duplicate parameter 'a'");
}

TEST(KilncParserErrorPaths, HeaderDirectivesAfterContent) {
    Views v;
    v.files["l"] = "<%@ yield %>";
    EXPECT_EQ(parse_error("x\n<%@ include <vector> %>", v),
              "2:1: 'include' must come before the template's content (at the top of the file)");
    EXPECT_EQ(parse_error("<% int a = 0; %>\n<%@ param int n %>", v),
              "2:1: 'param' must come before the template's content (at the top of the file)");
    EXPECT_EQ(parse_error("<%= 1 %><%@ layout \"l\" %>", v),
              "1:9: 'layout' must come before the template's content (at the top of the file)");
}

TEST(KilncParserErrorPaths, MalformedIncludes) {
    Views v;
    const std::string msg =
        "1:1: malformed include: expected <%@ include \"file.hpp\" %> or <%@ include <header> %>";
    for (std::string_view src : {"<%@ include %>", "<%@ include x.hpp %>", "<%@ include \"a\"b\" %>",
                                 "<%@ include <a> <b> %>", "<%@ include \"\" %>"})
        EXPECT_EQ(parse_error(src, v), msg) << src;
}

TEST(KilncParserErrorPaths, MissingAndWrongLayouts) {
    Views v;
    v.files["plain"] = "<p>no yield</p>";
    v.files["broken"] = "<% unclosed";
    v.files["a"] = "<%@ layout \"b\" %><%@ yield %>";
    v.files["b"] = "<%@ layout \"a\" %><%@ yield %>";
    EXPECT_EQ(parse_error("<%@ layout \"nope\" %>", v),
              "1:1: layout 'nope' not found (no nope.html in the views directory)");
    EXPECT_EQ(parse_error("<%@ layout \"plain\" %>", v),
              "1:1: 'plain' is not a layout: it has no <%@ yield %> (or <%== content %>)");
    EXPECT_EQ(parse_error("<%@ layout \"a\" %>", v), "1:1: layout cycle: posts/index -> a -> b -> a");
    EXPECT_EQ(parse_error("<%@ layout \"posts/index\" %>", v), "1:1: a template cannot be its own layout");
    EXPECT_EQ(parse_error("<%@ layout \"broken\" %>", v), "no error");  // its own compilation reports it
}

TEST(KilncParserErrorPaths, OneLayoutOnlyAndQuotedNames) {
    Views v;
    v.files["l"] = "<%@ yield %>";
    EXPECT_EQ(parse_error("<%@ layout \"l\" %>\n<%@ layout \"l\" %>", v), "2:1: a template has at most one layout");
    EXPECT_EQ(parse_error("<%@ layout l %>", v),
              "1:1: malformed layout: expected <%@ layout \"name\" %>, optionally followed by designated "
              "initializers (.title = title)");
    EXPECT_EQ(parse_error("<%@ render \"\" %>", v),
              "1:1: malformed render: expected <%@ render \"name\" %>, optionally followed by designated "
              "initializers (.title = title)");
}

TEST(KilncParserErrorPaths, MissingPartialsAndBadNames) {
    Views v;
    EXPECT_EQ(parse_error("<p>\n <%@ render \"_nope\" %>", v),
              "2:2: partial 'posts/_nope' not found (no posts/_nope.html in the views directory)");
    EXPECT_EQ(parse_error("<%@ render \"a b\" %>", v),
              "1:1: bad template name 'posts/a b': names may hold only letters, digits, '_', '-' and '.' (found ' ')");
    EXPECT_EQ(parse_error("<%@ render \"/etc/passwd\" %>", v),
              "1:1: template name '/etc/passwd' must be relative to the views directory");
    EXPECT_EQ(parse_error("<%@ render \"a//b\" %>", v), "1:1: bad template name 'a//b': empty path segment");
    EXPECT_EQ(parse_error("x", v, "posts/a__b.html"),
              "1:1: bad template name 'posts/a__b': 'a__b' would become the reserved C++ identifier 'a__b'");
}

}  // namespace
}  // namespace kiln::kilnc
