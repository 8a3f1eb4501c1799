// The escaping oracle must be able to fail: kilnc's choices on templates that exercise
// each context pass it, and the same templates with one escaper swapped for a wrong one
// (what a kilnc bug would do) are caught, each for the reason expected. Also the runs:
// each branch of an if, switch and loop is taken on some seed, and code outside the
// grammar gives no paths. Run by tests/fuzz/run.sh beside the fuzz targets; exits 1
// naming the first case that went wrong.
#include <cstdio>
#include <initializer_list>
#include <set>
#include <string>

#include "kilnc/parser.hpp"
#include "template_oracle/js_tokens.hpp"
#include "template_oracle/oracle.hpp"
#include "template_oracle/page_compare.hpp"
#include "template_oracle/paths.hpp"

using namespace kiln;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
    if (!ok) {
        std::fprintf(stderr, "oracle selftest: %s\n", what.c_str());
        ++failures;
    }
}

kilnc::Template compile(const std::string& src) {
    kilnc::TemplateLoader none = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
    kilnc::ParseResult r = kilnc::parse_template(src, "t", none);
    expect(!r.error, "kilnc refuses: " + src + (r.error ? " (" + r.error->message + ")" : ""));
    return r.tpl;
}

// Every seed from 0 to 63 passes; and with the value at `nth` (0-based, among the
// <%= %>) escaped by `wrong` instead, some seed fails for a reason containing `why`
// (or, with `why` empty, none does: that escaper is wrong there but harmless).
void case_(const std::string& src, size_t nth, kilnc::Escaper wrong, const std::string& why) {
    kilnc::Template t = compile(src);
    for (uint64_t s = 0; s < 64; ++s) {
        std::string f = oracle::check_escaping(t, s);
        expect(f.empty(), "kilnc's escaping fails the oracle: " + src + "\n" + f);
    }
    size_t seen = 0;
    for (auto& n : t.body)
        if (n.kind == kilnc::NodeKind::Output && seen++ == nth) n.escaper = wrong;
    expect(seen > nth, "no value " + std::to_string(nth) + " in " + src);
    std::string found;
    for (uint64_t s = 0; s < 64 && found.empty(); ++s) found = oracle::check_escaping(t, s);
    if (why.empty()) {
        expect(found.empty(), "a harmless escaper is taken for a hole: " + src + "\n" + found);
        return;
    }
    expect(!found.empty() && found.find(why) != std::string::npos, "a wrong escaper is not caught as \"" + why +
                                                                       "\": " + src + "\n" +
                                                                       (found.empty() ? "(no finding)" : found));
}

// kilnc's escaping passes on every seed: a safe template the oracle must not flag.
void passes(const std::string& src) {
    kilnc::Template t = compile(src);
    for (uint64_t s = 0; s < 64; ++s) {
        std::string f = oracle::check_escaping(t, s);
        expect(f.empty(), "a safe template fails the oracle: " + src.substr(0, 200) + "\n" + f.substr(0, 2000));
    }
}

}  // namespace

int main() {
    using E = kilnc::Escaper;
    // Each context, and a wrong escaper in it.
    case_("<p><%= x %></p>", 0, E::UrlPart, "");  // percent-encoding in text is only wrong text: no finding
    case_("<p title=\"<%= x %>\">a</p>", 0, E::Js, "attribute");
    case_("<a href=\"<%= u %>\">l</a>", 0, E::Attr, "scheme");
    case_("<a href=\"/p?q=<%= u %>\">l</a>", 0, E::Js, "attribute");
    case_("<svg><a><set attributeName=\"href\" to=\"<%= u %>\"/></a></svg>", 0, E::Attr, "scheme");
    case_("<script>var a = <%= j %>;</script>", 0, E::Text, "JavaScript");
    case_("<script>var a = [<%= j %>, 2];</script><p><%= x %></p>", 0, E::Attr, "JavaScript");
    case_("<button onclick=\"go(<%= j %>)\">b</button>", 0, E::Attr, "JavaScript");
    case_("<button onclick=\"go(<%= j %>)\">b</button>", 0, E::Js, "attribute");
    case_("<div hx-vars=\"{a: <%= j %>}\">x</div>", 0, E::Attr, "JavaScript");
    case_("<script>var t = `${a}`; var x = <%= j %>;</script>", 0, E::Text, "JavaScript");
    case_("<textarea><%= t %></textarea><title><%= t %></title>", 1, E::Js, "");
    // Flow: the value in the second branch, or after a loop, is reached on some seed.
    case_("<% if (a) { %><b><% } else { %><i title=\"<%= x %>\"><% } %>x", 0, E::Js, "attribute");
    case_("<% switch (k) { case 1: %><p><% break; default: %><a href=\"<%= u %>\">l</a><% } %>", 0, E::Text,
          "scheme");
    case_("<% for (auto& n : names) { %><li><%= n %></li><% if (n.last) break; } %><script>f(<%= j %>)</script>",
          1, E::Text, "JavaScript");

    // Safe templates where a reading could part: a frameset (which drops text, not white
    // space), a prefixed attribute that is no URL, a division after a property or a
    // number, a URL that becomes "#" beside equal formatting elements (which the parser
    // matches by their attributes), nesting deeper than the oracle walks.
    passes(std::string("<a href=\"/<%= p %>\"\0onclick=\"go(<%= v %>)\">x</a>", 48));  // not a handler
    passes("<frameset><%= v %></frameset>");
    passes("<frameset></frameset><%= v %>");
    passes("<p data-x:href=\"<%= v %>\">x</p><script foo:src=\"<%= v %>\"></script>");
    passes("<script>var r = x.in / <%= v %> / 2, s = 1./<%= v %>/2;</script>");
    passes("<p><b href=\"#\"><b href=\"#\"><b href=\"#\"><b href=\"<%= u %>\"></p>x");
    std::string deep;
    for (int i = 0; i < 3000; ++i) deep += "<q>";
    passes(deep + "<%= v %>");

    // Markup (a partial, a layout's content) where a browser reads text is caught; in a
    // <select>, and in a <table> (taken out of it), it is an element.
    auto markup_in = [](const std::string& before, const std::string& after) {
        kilnc::Template t;
        t.body.push_back({kilnc::NodeKind::Text, before, {}, {}, {}});
        t.body.push_back({kilnc::NodeKind::Render, "", {}, {}, {}});
        t.body.push_back({kilnc::NodeKind::Text, after, {}, {}, {}});
        std::string f;
        for (uint64_t s = 0; s < 8 && f.empty(); ++s) f = oracle::check_escaping(t, s);
        return f;
    };
    expect(markup_in("<title>", "</title>").find("read as elements") != std::string::npos,
           "a partial inside <title> is not caught");
    expect(markup_in("<p title=\"", "\">").find("read as elements") != std::string::npos,
           "a partial inside an attribute is not caught");
    expect(markup_in("<svg>", "</svg>").find("read as elements") != std::string::npos,
           "a partial inside <svg> (an SVG element, not HTML) is not caught");
    expect(markup_in("<select>", "</select>").empty(), "a partial inside <select> is taken for text");
    {
        kilnc::Template t;  // a layout's <%= content %> is markup too
        t.body.push_back({kilnc::NodeKind::Text, "<title>", {}, {}, {}});
        t.body.push_back({kilnc::NodeKind::Output, "", {" content ", {}, {}}, {}, {}});
        t.body.push_back({kilnc::NodeKind::Text, "</title>", {}, {}, {}});
        expect(oracle::check_escaping(t, 0).find("read as elements") != std::string::npos,
               "a layout's content inside <title> is not caught");
    }
    expect(markup_in("<table>", "</table>").empty(), "a partial inside <table> is taken for text");

    // Pages side by side: a difference the oracle must report, or must not.
    struct Pair {
        const char *plain, *hostile;
        bool differs;
        const char* what;
    };
    for (const Pair& p : std::initializer_list<Pair>{
             {"<p>a1</p>", "<p><x></x></p>", true, "an added element"},
             {"<p title=\"a1\">", "<p title=\"\" onclick=\"x\">", true, "an added attribute"},
             {"<!--a1-->", "<!--b-->", true, "a changed comment"},
             {"<style>a1</style>", "<style>b</style>", true, "a changed style"},
             {"<p>a1</p>", "<frameset></frameset>", true, "a frameset the value alone brings"},
             {"<meta http-equiv=refresh content=\"0;url=a1\">",
              "<meta http-equiv=refresh content=\"0;url=javascript:x\">", true, "a refresh to javascript:"},
             {"<meta http-equiv=refresh content=\"0 a1\">", "<meta http-equiv=refresh content=\"0 javascript:x\">",
              true, "a refresh whose delay ends in a space"},
             {"<script src=\"/a1\"></script>", "<script src=\"//evil.example/x\"></script>", true,
              "a script from another origin"},
             {"<script src=\"/a1\"></script>", "<script src=\"///evil.example/x\"></script>", true,
              "three slashes before a host"},
             {"<base href=\"a1\">", "<base href=\"\\\\evil.example\">", true,
              "a base URL on another origin (backslashes)"},
             {"<base href=\"a1\">", "<base href=\"https:evil.example\">", true,
              "a special scheme's host without slashes"},
             {"<link rel=\"Alternate\tStyleSheet\" href=\"/a1\">",
              "<link rel=\"Alternate\tStyleSheet\" href=\"//evil.example/x\">", true, "a stylesheet from another origin"},
             {"<link rel=preload as=style href=\"/a1\" onload=\"this.rel='stylesheet'\">",
              "<link rel=preload as=style href=\"//evil.example/x\" onload=\"this.rel='stylesheet'\">", true,
              "a stylesheet loaded late from another origin"},
             {"<link rel=canonical href=\"/a1\">", "<link rel=canonical href=\"//evil.example/\">", false,
              "a canonical link"},
             {"<script src=\"/js/a1\"></script>", "<script src=\"/js/%2F%2Fevil\"></script>", false,
              "a path on the page's origin"},
             {"<p>a1 &amp;</p>", "<p>b &lt;x&gt;</p>", false, "changed text"},
             {"<script type=text/template>a1</script>", "<script type=text/template>b c</script>", false,
              "a script that does not run"},
         }) {
        oracle::Comparison c = oracle::compare_pages(p.plain, p.hostile);
        expect(c.judged && c.difference.empty() != p.differs,
               std::string(p.what) + (p.differs ? ": no difference found" : ": taken for a difference"));
    }

    // The JavaScript tokens.
    auto toks = oracle::js_tokens("a = 'x\\\r\ny' + \"q\" // c\u2028 b");
    expect(toks && toks->size() == 6, "a line continuation (backslash CR LF) ends a string");
    expect(!oracle::js_tokens("a = 'x\ny'"), "a line break inside a string is read");
    auto re = oracle::js_tokens("a = /x\"[/]y/g.test(b) / c; d = 1");
    expect(re && re->size() == 14 && (*re)[2].text == "/x\"[/]y/g", "a regular expression and a division");
    auto html = oracle::js_tokens("<!-- a ' b\n  --> c \"\nd --> e");
    expect(html && html->size() == 5, "HTML-like comments (\"-->\" only first on a line)");
    auto classic = oracle::js_tokens("x = a<!--b\nc"), module = oracle::js_tokens("x = a<!--b\nc", true);
    expect(classic && classic->size() == 4 && module && module->size() == 9, "\"<!--\" in a module is a comment");
    auto sub = oracle::js_tokens("`a${ {b: `c${d}`} }e` + f");
    expect(sub && sub->size() == 11, "template literals and their substitutions");
    expect(!oracle::js_tokens("`a${b`"), "an unfinished substitution is read");

    // The runs: both branches on some seed; code outside the grammar gives no paths.
    kilnc::Template t = compile("<% if (a) { %>A<% } else if (b) { %>B<% } else { %>C<% } %>");
    auto paths = oracle::TemplatePaths::read(t);
    expect(paths.has_value(), "an if chain is outside the grammar");
    std::set<size_t> taken;
    for (uint64_t s = 0; paths && s < 64; ++s)
        if (auto run = paths->run(s, 100))
            for (size_t i : *run) taken.insert(i);
    expect(taken.size() == 3, "an if chain's three branches are not all taken");
    expect(!oracle::TemplatePaths::read(compile("<% if (a) for (auto& n : v) { n++; } %><p>")),
           "a compound head is read");
    expect(oracle::TemplatePaths::read(compile("<% if (s == \"{\") { auto t = '}'; } %><p>")).has_value(),
           "braces inside literals are counted");
    expect(!oracle::TemplatePaths::read(compile("<% auto s = R\"(})\"; %><p>")), "a raw string is read");

    if (failures) std::fprintf(stderr, "oracle selftest: %d failed\n", failures);
    else std::printf("oracle selftest: ok\n");
    return failures ? 1 : 0;
}
