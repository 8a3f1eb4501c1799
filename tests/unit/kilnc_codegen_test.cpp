// Unit tests of kilnc's code generation (tools/kilnc/codegen.cpp, cpp_writer.cpp):
// the C++ it writes for each construct (each value calling its context's escaper),
// the #line directives that send compiler messages back to the template, and literal
// escaping; then the error paths (input that must still give well-formed output). The
// generated code is also compiled and run for real by kilnc_render_test.
#include "kilnc/codegen.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "kilnc/cpp_writer.hpp"
#include "kilnc/line_check.hpp"
#include "kilnc/parser.hpp"

namespace kiln::kilnc {
namespace {

const CodegenOptions kOptions{"views", "/src/views/t.html", "/out/views/t.hpp", "/out/views/t.cpp"};

size_t count(std::string_view hay, std::string_view needle) {
    size_t n = 0;
    for (size_t at = hay.find(needle); at != hay.npos; at = hay.find(needle, at + 1)) ++n;
    return n;
}

int lines_of(std::string_view s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')) + 1; }

// Compiles `src` as template "t.html" (other templates from `files`); checks the
// #line invariant of both outputs.
Generated gen(std::string_view src, std::map<std::string, std::string> files = {}) {
    TemplateLoader load = [files](const std::string& name) -> std::optional<std::string> {
        auto it = files.find(name);
        if (it == files.end()) return std::nullopt;
        return it->second;
    };
    ParseResult r = parse_template(src, "t.html", load);
    EXPECT_FALSE(r.error) << r.error->message;
    Generated g = generate(r.tpl, kOptions);
    EXPECT_EQ(check_line_directives(g.header, kOptions.header_path, kOptions.template_path, lines_of(src)),
              std::nullopt);
    EXPECT_EQ(check_line_directives(g.source, kOptions.source_path, kOptions.template_path, lines_of(src)),
              std::nullopt);
    return g;
}

// ---------------------------------------------------------------- literal text

TEST(KilncCodegenText, AdjacentTextIsOneAppendWithItsExactLength) {
    Generated g = gen("<p>\n<%# comment %>\n\"quoted\" \\ back\n</p>");
    EXPECT_EQ(count(g.source, "kiln_out.append("), 1u);
    EXPECT_NE(g.source.find("    kiln_out.append(\"<p>\\n\"\n"
                            "                    \"\\\"quoted\\\" \\\\ back\\n\"\n"
                            "                    \"</p>\", 24);\n"),
              std::string::npos)
        << g.source;
}

TEST(KilncCodegenText, StringLiteralEscapes) {
    EXPECT_EQ(string_literal("a\tb", ""), "\"a\\tb\"");
    EXPECT_EQ(string_literal(std::string("\0\x01\x7f\xc3\xa9", 5), ""), "\"\\000\\001\\177\\303\\251\"");
    EXPECT_EQ(string_literal("?" "?=?", ""), "\"\\?" "?=?\"");  // never a trigraph (GCC warns)
    EXPECT_EQ(string_literal("1\n2\n", "  "), "\"1\\n\"\n  \"2\\n\"");
    EXPECT_EQ(string_literal("", ""), "\"\"");
}

// ---------------------------------------------------------------- the struct

TEST(KilncCodegenHeader, RequiredParamsAreReferencesDefaultsAreValues) {
    Generated g = gen("<%@ include \"m.hpp\" %>\n<%@ param std::string_view a %>\n"
                      "<%@ param const Post& b %>\n<%@ param int c = 3 %>\n");
    EXPECT_NE(g.header.find("#include <kiln/view.hpp>\n"), std::string::npos);
    EXPECT_NE(g.header.find("#line 1 \"/src/views/t.html\"\n#include \"m.hpp\"\n"), std::string::npos);
    EXPECT_NE(g.header.find("namespace views {\n"), std::string::npos);
    EXPECT_NE(g.header.find("struct t {\n"), std::string::npos);
    EXPECT_NE(g.header.find("#line 2 \"/src/views/t.html\"\n    std::string_view const& a;\n"), std::string::npos);
    EXPECT_NE(g.header.find("#line 3 \"/src/views/t.html\"\n    const Post& b;\n"), std::string::npos);
    EXPECT_NE(g.header.find("#line 4 \"/src/views/t.html\"\n    int c = 3;\n"), std::string::npos);
    EXPECT_NE(g.header.find("    void render(::std::string& out) const;\n"), std::string::npos);
    EXPECT_EQ(g.header.find("render_body"), std::string::npos);
    EXPECT_EQ(g.header.find("content"), std::string::npos);
}

TEST(KilncCodegenHeader, LayoutGetsAContentMember) {
    Generated g = gen("<%@ param int n %>\n<main><%@ yield %></main>");
    EXPECT_NE(g.header.find("    ::kiln::view::Content content;"), std::string::npos);
    EXPECT_NE(g.source.find("    content.render(kiln_out);\n"), std::string::npos);
}

// ---------------------------------------------------------------- the body

TEST(KilncCodegenBody, ExpressionsAtTheirTemplateLineAndColumn) {
    Generated g = gen("<h1>\n  <%= title %> <%== html %></h1>");
    EXPECT_NE(g.source.find("#line 2 \"/src/views/t.html\"\n"
                            "    ::kiln::view::append(kiln_out, (\n"
                            "#line 2 \"/src/views/t.html\"\n"
                            "      title \n"
                            "#line 2 \"/src/views/t.html\"\n"
                            "    ));\n"
                            "#line "),
              std::string::npos)
        << g.source;
    EXPECT_NE(g.source.find("::kiln::view::append_raw(kiln_out, (\n"), std::string::npos);
    EXPECT_NE(g.source.find("\n" + std::string(20, ' ') + "html \n"), std::string::npos);  // at column 21
}

TEST(KilncCodegenBody, EachValueCallsTheEscaperOfItsContext) {
    Generated g = gen("<a href=\"<%= u %>?q=<%= q %>\" title=\"<%= t %>\" onclick=\"f(<%= a %>)\">"
                      "<%= s %></a><script>x = <%= j %>;</script>");
    for (std::string_view fn : {"append_url", "append_url_part", "append_attr", "append_js_attr", "append", "append_js"})
        EXPECT_EQ(count(g.source, "::kiln::view::" + std::string(fn) + "(kiln_out, (\n"), 1u) << fn << g.source;
}

TEST(KilncCodegenBody, CodeIsCopiedVerbatim) {
    Generated g = gen("<% for (int i = 0; i < 3; ++i) { %>x<% } %>");
    EXPECT_NE(g.source.find("\n   for (int i = 0; i < 3; ++i) { \n"), std::string::npos);
    EXPECT_NE(g.source.find("    using namespace ::kiln::helpers;\n"), std::string::npos);
}

TEST(KilncCodegenBody, PartialIsItsStructRenderedInPlace) {
    Generated g = gen("<%@ render \"shared/_nav\" .active = 2 %>", {{"shared/_nav", ""}});
    EXPECT_NE(g.source.find("#include \"views/shared/_nav.hpp\"\n"), std::string::npos);
    EXPECT_NE(g.source.find("    ::views::shared::_nav{\n"), std::string::npos);
    EXPECT_NE(g.source.find(" .active = 2 \n"), std::string::npos);
    EXPECT_NE(g.source.find("    }.render(kiln_out);\n"), std::string::npos);
}

TEST(KilncCodegenBody, PageWithLayoutRendersTheLayoutAroundItsBody) {
    std::map<std::string, std::string> files{{"layouts/app", "<%@ yield %>"}};
    Generated g = gen("<%@ layout \"layouts/app\" .title = \"T\" %>\nbody", files);
    EXPECT_NE(g.source.find("#include \"views/layouts/app.hpp\"\n"), std::string::npos);
    EXPECT_NE(g.source.find("void t::render(::std::string& kiln_out) const {\n"), std::string::npos);
    EXPECT_NE(g.source.find("    , .content = kiln_page}.render(kiln_out);\n"), std::string::npos);
    EXPECT_NE(g.source.find("void t::render_body([[maybe_unused]] ::std::string& kiln_out) const {\n"),
              std::string::npos);
    EXPECT_NE(g.header.find("    void render_body(::std::string& out) const;\n"), std::string::npos);

    Generated bare = gen("<%@ layout \"layouts/app\" %>\nbody", files);  // no initializers: no comma
    EXPECT_NE(bare.source.find("\n    .content = kiln_page}.render(kiln_out);\n"), std::string::npos);
}

TEST(KilncCodegenBody, NestedNamesMakeNestedNamespaces) {
    TemplateLoader none = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
    ParseResult r = parse_template("x", "admin/new.html", none);
    ASSERT_FALSE(r.error);
    Generated g = generate(r.tpl, kOptions);
    EXPECT_NE(g.header.find("namespace views::admin {\n"), std::string::npos);
    EXPECT_NE(g.header.find("struct new_ {\n"), std::string::npos);
    EXPECT_NE(g.source.find("#include \"views/admin/new.hpp\"\n"), std::string::npos);
    EXPECT_NE(g.source.find("void new_::render("), std::string::npos);
}

// ---------------------------------------------------------------- error paths

TEST(KilncCodegenErrorPaths, TrailingBackslashCannotSwallowTheNextDirective) {
    Generated g = gen("<% int a = 1; // ends in \\ %>\n<%= a %>");
    EXPECT_NE(g.source.find("// ends in \\ \n\n#line "), std::string::npos) << g.source;
}

TEST(KilncCodegenErrorPaths, LoneCarriageReturnInCodeDoesNotShiftLines) {
    Generated g = gen("<% int a = 1;\rint b = 2; %>\n<%= a + b %>");
    EXPECT_NE(g.source.find("int a = 1; int b = 2;"), std::string::npos);
}

TEST(KilncCodegenErrorPaths, HostilePathsAreQuotedInLineDirectives) {
    EXPECT_EQ(quote_path("a\"b\\c\nd"), "a\\\"b\\\\cd");
    TemplateLoader none = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
    ParseResult r = parse_template("<%= x %>", "t.html", none);
    CodegenOptions o{"views", "/src/\"evil\"\n.html", "/o/t.hpp", "/o/t.cpp"};
    Generated g = generate(r.tpl, o);
    EXPECT_NE(g.source.find("#line 1 \"/src/\\\"evil\\\".html\"\n"), std::string::npos);
    EXPECT_EQ(check_line_directives(g.source, o.source_path, o.template_path, 1), std::nullopt);
}

TEST(KilncCodegenErrorPaths, LineCheckRejectsBrokenDirectives) {
    EXPECT_NE(check_line_directives("#line 3 \"/o/t.cpp\"\n", "/o/t.cpp", "/t.html", 5), std::nullopt);
    EXPECT_NE(check_line_directives("#line 2 \"/t.html\"\nx\n", "/o/t.cpp", "/t.html", 5), std::nullopt);
    EXPECT_NE(check_line_directives("#line 9 \"/t.html\"\n#line 3 \"/o/t.cpp\"\n", "/o/t.cpp", "/t.html", 5),
              std::nullopt);
    EXPECT_NE(check_line_directives("#line 1 \"/t.html\"\n#line 9 \"/o/t.cpp\"\n", "/o/t.cpp", "/t.html", 5),
              std::nullopt);
    EXPECT_EQ(check_line_directives("#line 1 \"/t.html\"\n#line 3 \"/o/t.cpp\"\n", "/o/t.cpp", "/t.html", 5),
              std::nullopt);
}

}  // namespace
}  // namespace kiln::kilnc
