// Unit tests of kilnc's contextual auto-escaping (tools/kilnc/escape_contexts.cpp and
// the scanners under it: html_state, js_state, code_flow): which escaper each <%= %>
// gets from the HTML around it, how branches and loops merge contexts, and that text
// kilnc does not understand never stops a template by itself; then the error paths,
// each refusal with its position.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kilnc/code_flow.hpp"
#include "kilnc/js_state.hpp"
#include "kilnc/parser.hpp"

namespace kiln::kilnc {
namespace {

TemplateLoader views() {
    return [](const std::string& name) -> std::optional<std::string> {
        if (name == "_p") return std::string("<p>partial</p>");
        return std::nullopt;
    };
}

// The escaper of every <%= %>, in order, or "line:col: message" of the error.
std::string escapers(std::string_view src) {
    ParseResult r = parse_template(src, "t.html", views());
    if (r.error)
        return std::to_string(r.error->pos.line) + ":" + std::to_string(r.error->pos.col) + ": " + r.error->message;
    std::string out;
    for (const Node& n : r.tpl.body) {
        if (n.kind != NodeKind::Output) continue;
        static const char* const kNames[] = {"text", "attr", "url", "url-part", "js", "js-attr"};
        out += (out.empty() ? "" : " ") + std::string(kNames[static_cast<int>(n.escaper)]);
    }
    return out;
}

// Just where the error is, for the error-path tests.
std::string error_at(std::string_view src) {
    std::string e = escapers(src);
    size_t colon = e.find(':', e.find(':') + 1);
    return colon == e.npos ? "no error: " + e : e.substr(0, colon);
}

// ---------------------------------------------------------------- one context each

// Inside <title>, <textarea> and the other raw-text elements, tags are not markup: a
// value there is escaped as in an attribute (the same for text), so a markup value
// (kiln::Html, printed as is in element text) does not compile instead of showing its tags.
TEST(KilncContexts, TextUsesTheTextEscaperAndRawTextElementsTheAttributeOne) {
    EXPECT_EQ(escapers("<p><%= a %></p><title><%= b %></title><textarea><%= c %></textarea>"), "text attr attr");
    EXPECT_EQ(escapers("a < <%= b %> <b>c</b> <%= d %>"), "text text");
    EXPECT_EQ(escapers("<noembed><%= a %></noembed><iframe><%= b %></iframe>"), "attr attr");
}

// A browser's input stream turns CR LF into LF: a '\' then CR LF continues a string.
TEST(KilncContexts, CrLfIsOneLineEnd) {
    EXPECT_NE(escapers("<script>\r\n  var intro = \"Welcome to the \\\r\nshop\", greeting = \"Hi <%= name %>\";\r\n</script>")
                  .find("inside a quoted JavaScript string"),
              std::string::npos);
    EXPECT_NE(escapers("<p onclick='var a = \"x\\&#13;&#10;y\", b = \"Hi <%= x %>\"'>").find("JavaScript string"),
              std::string::npos);
    EXPECT_EQ(escapers("<script>\r\nvar a = 1;\r\r\nf(<%= v %>);\r\n</script><p>\r\n<%= w %></p>"), "js text");
}

// Alpine, Vue, htmx and AngularJS run these attributes as JavaScript.
TEST(KilncContextsErrorPaths, AttributesALibraryRunsAsJavaScriptRefuseValues) {
    for (const char* attr : {"x-on:click", "@click", "x-data", ":href", "v-bind:title", "hx-on:click",
                             "ng-click", "data-ng-init"}) {
        EXPECT_NE(escapers(std::string("<button ") + attr + "=\"go(<%= id %>)\">").find("client-side library"),
                  std::string::npos)
            << attr;
    }
    EXPECT_EQ(escapers("<button hx-get=\"/posts/<%= id %>\" hx-target=\"#p<%= id %>\" data-x=\"<%= x %>\">"),
              "attr attr attr");
    for (const char* attr : {"data-hx-on:click", "ng:bind", "ng_click", "data-bind", "#default"})
        EXPECT_NE(escapers(std::string("<b ") + attr + "=\"<%= s %>\">").find("client-side library"), std::string::npos)
            << attr;
    // Not: SVG's font attributes, Alpine's transition classes, WebKit's airplay.
    EXPECT_EQ(escapers("<svg><font-face v-alphabetic=\"<%= n %>\"/></svg><div x-transition:enter=\"<%= c %>\" "
                       "x-webkit-airplay=\"<%= a %>\">"),
              "attr attr attr");
    // hx-vals is JSON, or JavaScript after "js:": a script's literal, in quotes or not.
    EXPECT_EQ(escapers("<b hx-vals='{\"id\": <%= id %>}' data-hx-vals='js:{a: <%= a %>}'>"), "js-attr js-attr");
    EXPECT_NE(escapers("<b hx-vals='{\"id\": \"<%= id %>\"}'>").find("JavaScript string"), std::string::npos);
}

// A page that leaves its <noscript> open would put the layout's next markup in it.
TEST(KilncContextsErrorPaths, ATemplateDoesNotEndInsideANoscript) {
    EXPECT_NE(escapers("<noscript><p>Enable JS</p>").find("ends inside a <noscript>"), std::string::npos);
    EXPECT_EQ(escapers("<noscript><p>Enable JS</p></noscript>"), "");
}

// JavaScript spaces past ASCII, "&nbsp" without its ';', and of/yield/await as names.
TEST(KilncJsState, WhatTheScannerCannotTellIsDoubted) {
    EXPECT_NE(escapers("<script>\n\xC2\xA0--> /* legacy\nvar g = \"Hi <%= name %>\";</script>").find("past ASCII begin"),
              std::string::npos);
    // A one-line loop in a script: its states settle (a line begun in ASCII counts to 4).
    EXPECT_EQ(escapers("<script>\nvar ids = [\n<% for (int id : ids) { %><%= id %>,<% } %>\n];\n</script>"
                       "<p onclick=\"f(<% for (auto& x : xs) { %><%= x %>,<% } %>0)\">"),
              "js js-attr");
    EXPECT_NE(escapers("<a onclick='return&nbsp/\"/ + \"; f(<%= v %>); //\"'>").find("kilnc cannot tell"),
              std::string::npos);
    EXPECT_NE(escapers("<script>var of = 4, n = of /\"/ + <%= v %>; // \"</script>").find("kilnc cannot tell"),
              std::string::npos);
    EXPECT_EQ(escapers("<script>var n = of + 1;\nfor (const x of /a/.exec(s)) f(n);\nf(<%= v %>);</script>"), "js");
}

// A browser without scripts reads a <noscript> as markup, one with scripts as raw text up
// to "</noscript": kilnc follows the markup (no escaper writes '<', so the raw text holds
// every value), and refuses where the two readings part.
TEST(KilncContexts, ANoscriptIsFollowedAsMarkup) {
    EXPECT_EQ(escapers("<noscript><%= a %><a href=\"<%= u %>\"><img src=\"/p?<%= q %>\"></a></noscript><p><%= b %>"),
              "attr url url-part text");
    // Markup there (sanitized HTML with "</noscript>" in an attribute) would end it for
    // a browser with scripts: a view or kiln::Html does not compile, nor does a partial.
    EXPECT_NE(escapers("<noscript><%@ render \"_p\" %></noscript>").find("inside a <noscript>"), std::string::npos);
    EXPECT_EQ(escapers("<noscript>a<</noscript><p><%= v %>"), "text");  // "<<": the second starts the end tag
    EXPECT_NE(escapers("<noscript><meta http-equiv=\"refresh\" content=\"0;url=<%= u %>\"></noscript>").find("refresh"),
              std::string::npos);
    // "</noscript" in an attribute ends the element there for a browser with scripts.
    EXPECT_NE(escapers("<noscript><p title=\"</noscript><script>\">x</p></noscript><%= v %>").find("cannot follow"),
              std::string::npos);
    EXPECT_NE(escapers("<noscript><p title=\"</nos<%= v %>\"></p></noscript>").find("inside a <noscript>"),
              std::string::npos);
    EXPECT_EQ(escapers("<noscript><noscript>x</noscript></noscript><script>f(<%= v %>)</script>"), "js");
}

// A numeric character reference ends at its first non-digit, as browsers read it:
// "javascript&#58alert(" is the javascript: scheme.
TEST(KilncContexts, NumericReferencesWithoutASemicolonAreDecodedAsBrowsersDo) {
    EXPECT_NE(escapers("<a href=\"javascript&#58alert(<%= v %>)\">x</a>").find("javascript"), std::string::npos);
    EXPECT_NE(escapers("<a href=\"javascript&#x3A/**/alert(<%= v %>)\">x</a>").find("javascript"), std::string::npos);
    EXPECT_EQ(escapers("<a href=\"/p?a=1&#38b=<%= v %>\">x</a>"), "url-part");
}

// Named references count as browsers decode them: case matters (&QUOT; is a quote as
// much as &quot;), the legacy few count without ';' (not before '='), and a name kilnc
// does not know, ended by ';', stops an event handler's values (the browser may decode
// it to a character kilnc's scanner would read otherwise). Zeros padding a numeric one
// are read past, however many.
TEST(KilncContexts, NamedReferencesAreDecodedAsBrowsersDo) {
    EXPECT_NE(escapers("<a onclick=\"s = &QUOT; + <%= v %>\">").find("string"), std::string::npos);
    EXPECT_NE(escapers("<a onclick=\"s = &quot + <%= v %>\">").find("string"), std::string::npos);
    EXPECT_EQ(escapers("<a onclick=\"f(&quot=1, <%= v %>)\">"), "js-attr");  // "&quot=" stays as written
    EXPECT_NE(escapers("<a onclick=\"x = caf&eacute; /'/ + <%= v %>\">").find("does not decode"), std::string::npos);
    EXPECT_EQ(escapers("<a onclick=\"a&&b(<%= v %>)\"><a href=\"/p?x=caf&eacute;&amp;y=<%= w %>\">"),
              "js-attr url-part");
    EXPECT_NE(escapers("<a href=\"javascript&#000000000000000000000000000000000000000058;alert(<%= v %>)\">")
                  .find("javascript"),
              std::string::npos);
    EXPECT_NE(escapers("<a href=\"java&Tab;script&colon;f(<%= v %>)\">").find("javascript"), std::string::npos);
}

// A <script src> or <base href> says where code comes from: a value may not choose
// the origin, whatever its scheme (an https URL of another host runs its code too).
TEST(KilncContexts, AScriptsOriginIsWrittenInTheTemplate) {
    EXPECT_NE(escapers("<script src=\"<%= u %>\"></script>").find("where code comes from"), std::string::npos);
    EXPECT_NE(escapers("<script src=\"https://<%= host %>/app.js\"></script>").find("where code comes from"),
              std::string::npos);
    EXPECT_NE(escapers("<script src=\"//<%= host %>/app.js\"></script>").find("where code comes from"),
              std::string::npos);
    EXPECT_NE(escapers("<base href=\"<%= u %>\">").find("where code comes from"), std::string::npos);
    // An SVG script's href; "/" then a value (empty, it makes "//host"); a scheme without
    // "//" (on a page of another scheme, "https:x" is a host); tabs a URL parser drops.
    for (const char* t : {"<svg><script href=\"//<%= v %>/a.js\"></script></svg>",
                          "<svg><script xlink:href=\"<%= v %>\"></script></svg>", "<script src=\"/<%= a %>/x.js\">",
                          "<script src=\"https:x<%= v %>\">", "<script src=\"https:/<%= v %>\">",
                          "<script src=\"/\t\t/<%= v %>/x.js\">"})
        EXPECT_NE(escapers(t).find("where code comes from"), std::string::npos) << t;
    EXPECT_EQ(escapers("<script src=\"/assets/<%= a %>\"></script><script src=\"https://cdn.example/<%= b %>\">"
                       "</script><script src=\"js/<%= c %>\"></script><a href=\"<%= d %>\">x</a>"),
              "url-part url-part url-part url");
}

// A stylesheet's origin too: a stylesheet can restyle the page and read its attributes
// out (why <style> takes no values). The rel may come before or after the href; a
// preload as=style, and a link whose handler may make it a stylesheet, count; other
// links (canonical, alternate, icon, a font's preload) take a whole URL as an <a> does.
TEST(KilncContexts, AStylesheetsOriginIsWrittenInTheTemplate) {
    for (const char* t : {"<link rel=\"stylesheet\" href=\"<%= u %>\">", "<link href=\"<%= u %>\" rel=\"stylesheet\">",
                          "<link rel=\"alternate stylesheet\" href=\"//<%= host %>/a.css\">",
                          "<link href=\"<%= u %>\" rel=\"<%= r %>\">", "<link rel=\"&#115;tylesheet\" href=\"<%= u %>\">",
                          "<link href=\"<%= u %>\" title=\"x\" REL=\"Stylesheet\">",
                          "<link rel=\"preload                                                        stylesheet\" "
                          "href=\"<%= u %>\">",
                          // A preloaded stylesheet, and the usual way to load one late.
                          "<link rel=\"preload\" href=\"<%= u %>\" as=\"style\">",
                          "<link rel=\"preload\" as=\"style\" href=\"<%= u %>\" onload=\"this.rel='stylesheet'\">",
                          "<link href=\"<%= u %>\" rel=\"prefetch\" onload=\"this.rel='stylesheet'\">"})
        EXPECT_NE(escapers(t).find("where the page's style comes from"), std::string::npos) << t;
    EXPECT_EQ(escapers("<link rel=\"stylesheet\" href=\"/assets/<%= a %>\"><link href=\"https://cdn.example/<%= b %>\" "
                       "rel=\"stylesheet\"><link rel=\"canonical\" href=\"<%= c %>\"><link href=\"<%= d %>\" "
                       "rel=\"icon\"><link rel=\"stylesheet\" href=\"/a.css\"><link rel=\"preload\" as=\"font\" "
                       "href=\"<%= f %>\"><a href=\"<%= e %>\">x</a>"),
              "url-part url-part url url url url");
}

// A refresh <meta> goes to the URL its content names, which no escaper makes safe
// (a quote or "url=" in the value would hide its scheme): values there are refused,
// also when the http-equiv comes after the content. Other <meta> content is text.
TEST(KilncContexts, ARefreshMetaTakesNoValues) {
    // A browser decodes the character reference: this is a refresh.
    EXPECT_NE(escapers("<meta http-equiv=\"&#82;efresh\" content=\"0;url=<%= u %>\">").find("refresh"),
              std::string::npos);
    EXPECT_NE(escapers("<meta http-equiv=\"refresh\" content=\"5; url=<%= u %>\">").find("refresh <meta>"),
              std::string::npos);
    EXPECT_EQ(error_at("<meta content=\"0;URL='<%= v %>'\" http-equiv=\"Refresh\">"), "1:23");
    EXPECT_EQ(error_at("<meta http-equiv=\"<%= h %>\" content=\"0; url=<%= v %>\">"), "1:45");  // may be one
    EXPECT_EQ(escapers("<meta name=\"description\" content=\"<%= d %>\"><meta content=\"<%= e %>\">"), "attr attr");
}

// A client-side template (<script type="text/x-template">) is read as HTML by its
// library: a JS literal there is no escaping at all.
TEST(KilncContexts, AScriptThatIsNotJavaScriptOrJsonRefusesValues) {
    EXPECT_NE(escapers("<script type=\"text/x-template\"><div <%= cls %>></div></script>").find("data- attribute"),
              std::string::npos);
    EXPECT_NE(escapers("<script type=\"text/javascript; charset=utf-8\"><%= a %></script>").find("not JavaScript"),
              std::string::npos);  // with parameters a browser does not run it either
    EXPECT_NE(escapers("<script type=\"<%= t %>\"><%= a %></script>").find("not JavaScript"), std::string::npos);
    // Only the first type counts, as in a browser: a classic script, where "<!--" starts
    // a comment line (read as a module, the "/*" after it would hide the string).
    EXPECT_NE(escapers("<script type=\"text/javascript\" type=\"module\">x = 1 <!-- /*\ny = \"<%= v %>\" // */"
                       "</script>")
                  .find("string"),
              std::string::npos);
    // Unquoted, the type is read whole (its first byte was lost: "odule" is no type).
    EXPECT_EQ(escapers("<script type=module>f(<%= a %>)</script>"), "js");
    EXPECT_NE(escapers("<script type=text/x-template><%= a %></script>").find("not JavaScript"), std::string::npos);
    EXPECT_EQ(escapers("<script type=\"module\">f(<%= a %>)</script><script type=\" TEXT/JavaScript \">f(<%= b %>)"
                       "</script><script type=\"application/json\"><%= c %></script><script>f(<%= d %>)</script>"),
              "js js js js");
    EXPECT_EQ(escapers("<script type=\"text/x-template\"></script><p><%= a %></p>"), "text");  // and after it
    // An import map or speculation rules would let a value choose where code comes from.
    EXPECT_NE(escapers("<script type=\"importmap\">{\"imports\":{\"app\":<%= url %>}}</script>").find("import map"),
              std::string::npos);
    EXPECT_NE(escapers("<script type=\"speculationrules\">{\"prerender\":[{\"urls\":[<%= u %>]}]}</script>")
                  .find("not JavaScript"),
              std::string::npos);
}

// A lazy loader copies data-src into src: the value is checked as a URL, as in src.
TEST(KilncContexts, DataAttributesNamingAUrlAttributeAreUrls) {
    EXPECT_EQ(escapers("<iframe data-src=\"<%= u %>\"></iframe><a data-href=\"/p/<%= id %>\" data-url=\"<%= v %>\""
                       " data-name=\"<%= n %>\">"),
              "url url-part url attr");
    // Only those: data-action (Stimulus) and data-icon (Iconify) hold no URL.
    EXPECT_EQ(escapers("<div data-action=\"turbo:load-><%= c %>#go\" data-icon=\"mdi:<%= i %>\">"), "attr attr");
    EXPECT_NE(escapers("<script type=\"text/plain\" data-src=\"<%= cdn %>/a.js\"></script>").find("where code comes from"),
              std::string::npos);
}

TEST(KilncContexts, QuotedAttributesOfBothKindsUseTheAttributeEscaper) {
    EXPECT_EQ(escapers("<a title=\"<%= a %>\" class='x <%= b %>' data-id=\"<%= c %>\">"), "attr attr attr");
    EXPECT_EQ(escapers("<input disabled value=\"<%= a %>\"></input title=\"<%= b %>\">"), "attr attr");
}

TEST(KilncContexts, UrlAttributesCheckAWholeValueAndEncodeParts) {
    EXPECT_EQ(escapers("<a href=\"<%= a %>\">"), "url");
    EXPECT_EQ(escapers("<a href=\" \t<%= a %>\">"), "url");  // leading spaces are dropped by browsers
    EXPECT_EQ(escapers("<a href=\"/p/<%= a %>?q=<%= b %>#<%= c %>\">"), "url-part url-part url-part");
    EXPECT_EQ(escapers("<a href=\"https://x.example/<%= a %>\">"), "url-part");
    EXPECT_EQ(escapers("<a href=\"mailto:<%= a %>\">"), "url-part");
    EXPECT_EQ(escapers("<a href=\"<%= a %>/<%= b %>\">"), "url url-part");
    EXPECT_EQ(escapers("<img src='<%= a %>'><form action=\"<%= b %>\"><button formaction=\"<%= c %>\">"),
              "url url url");
    EXPECT_EQ(escapers("<svg><use xlink:href=\"<%= a %>\"/></svg><A HREF=\"<%= b %>\">"), "url url");
    EXPECT_EQ(escapers("<video poster=\"<%= a %>\"><blockquote cite=\"<%= b %>\"><object data=\"<%= c %>\">"),
              "url url url");
}

TEST(KilncContexts, ScriptsAndEventHandlersUseJsLiterals) {
    EXPECT_EQ(escapers("<script>var a = <%= a %>;</script><p><%= b %></p>"), "js text");
    EXPECT_EQ(escapers("<script type=\"module\">f(<%= a %>, `${<%= b %>}`)</script>"), "js js");
    EXPECT_EQ(escapers("<button onclick=\"f(<%= a %>)\" ONMOUSEOVER='g(<%= b %>)'>"), "js-attr js-attr");
    EXPECT_EQ(escapers("<script>// <%= a %>\n/* <%= b %> */ x = 1 / <%= c %> / 2;</script>"), "js js js");
}

TEST(KilncContexts, ScriptEndsOnlyAtItsEndTagInAnyCase) {
    EXPECT_EQ(escapers("<script>if (a < b) x = '</p>';</SCRIPT ><p><%= a %></p>"), "text");
    EXPECT_EQ(escapers("<script>x = '</scripts>'; y = <%= a %>;</script>"), "js");
}

TEST(KilncContexts, CommentsAndDeclarationsEndWhereBrowsersEndThem) {
    EXPECT_EQ(escapers("<!DOCTYPE html><!-- a --><%= a %><!--><%= b %><!---><%= c %><!-- x --!><%= d %>"),
              "text text text text");
    EXPECT_EQ(escapers("<?xml version=\"1.0\"?><![CDATA[ <b> ]]><%= a %>"), "text");
    // In HTML, "<![CDATA[" is a bogus comment that its first '>' ends: the script is one.
    EXPECT_EQ(escapers("<![CDATA[ x > <script> ]]> var a = <%= a %>;</script>"), "js");
    EXPECT_EQ(escapers("<svg><![CDATA[ x ]]></svg><%= a %>"), "text");  // in an <svg>, a CDATA section
}

// Inside <svg> or <math> (foreign content) a <script>, <title> or <style> is an element
// like any other, whose text is markup, and "/>" closes it; an HTML parser reads raw
// text up to the end tag. kilnc follows what both readings agree on: plain text, then
// the element's own end tag. <svg/> closes itself, </svg> ends the foreign content.
TEST(KilncContexts, RawTextInsideSvgOrMathIsFollowedWhereBothReadingsAgree) {
    EXPECT_EQ(escapers("<svg><title><%= a %></title></svg><p><%= b %></p>"), "attr text");
    EXPECT_EQ(escapers("<svg><script href=\"/x.js\"></script></svg><a href=\"<%= u %>\">x</a>"), "url");
    EXPECT_EQ(escapers("<svg/><script>var a = <%= v %>;</script>"), "js");
    EXPECT_EQ(escapers("<svg viewBox=\"0 0 1 1\"><g/></svg><script>var a = <%= v %>;</script>"), "js");
    EXPECT_EQ(escapers("<math><mi>x</mi></math><script>f(<%= v %>)</script>"), "js");
    // HTML inside <foreignObject> or <desc>, each element closed where it was opened.
    EXPECT_EQ(escapers("<svg><foreignObject><div><b>x</b><br></div></foreignObject></svg><script>f(<%= v %>)</script>"
                       "<svg><desc>an <b/>icon</b></desc></svg><p><%= w %></p>"),
              "js text");
    EXPECT_EQ(escapers("<svg><style>.a{}</style><text><%= v %></text></svg>"), "attr");  // (svg's text: see below)
}

// ---------------------------------------------------------------- code blocks

TEST(KilncContextsFlow, EachBranchStartsFromTheContextBeforeTheIf) {
    EXPECT_EQ(escapers("<% if (x) { %><a href=\"<%= a %>\"><% } else { %><p title=\"<%= b %>\"><% } %><%= c %>"),
              "url attr text");
    EXPECT_EQ(escapers("<% if (x) { %><script><% } else if (y) { %><p><% } else { %><b><% } %><%= a %>"),
              "1:71: this value stands in a script or in element text, depending on which branch of the code above "
              "runs: open and close each tag and attribute within one branch");
}

TEST(KilncContextsFlow, BranchesLeavingCompatibleContextsTakeTheStricterEscaper) {
    // Text or attribute: attribute escaping is right in both.
    EXPECT_EQ(escapers("<% if (x) { %><p title=\"<% } %><%= a %>\">"), "attr");
    // The start of a URL or its middle: percent-encoding is right in both.
    EXPECT_EQ(escapers("<a href=\"<% if (x) { %>/p/<% } %><%= a %>\">"), "url-part");
}

TEST(KilncContextsFlow, ALoopBodyIsAlsoEnteredFromWhereItsEndLeavesOff) {
    EXPECT_EQ(escapers("<ul><% for (auto& x : xs) { %><li><%= x %></li><% } %></ul>"), "text");
    // Text on the first pass, in title's value on the second, inside the tag on the third.
    EXPECT_EQ(error_at("<% while (more()) { %><%= a %><p title=\"<% } %>\">"), "1:23");
    EXPECT_EQ(error_at("<% for (;;) { %>\n<%= a %><script>\n<% } %>"), "2:1");
}

TEST(KilncContextsErrorPaths, ALambdaThatHoldsTemplateTextIsRefused) {
    // Its value would be escaped as element text where the lambda is written, and
    // written inside the <script> where it is called.
    const std::string why = "a lambda's body cannot hold template text";
    EXPECT_EQ(escapers("<% auto name = [&] { %><%= user %><% }; %><script>var n = <% name(); %>;</script>")
                  .find(why),
              5u);
    EXPECT_EQ(error_at("<p></p><% std::for_each(v.begin(), v.end(), [&](int i) { %><%= i %><% }); %>"), "1:8");
    EXPECT_EQ(error_at("<% auto f = std::function<void()>([&] { %><%= x %><% }); %>"), "1:1");
    // A throw in a try block leaves its output in the href; its catch went on there.
    EXPECT_NE(escapers("<% try { %><a href=\"<%= link(i) %>\">o</a><% } catch (...) { %><%= m %><% } %>")
                  .find("a try block or its catch cannot hold template text"),
              std::string::npos);
    EXPECT_EQ(escapers("<% std::string u; try { u = link(i); } catch (...) { } %><a href=\"<%= u %>\">"), "url");
    // A catch goes on where the throw left the try's output (inside a partial's <script>);
    // after a try that wrote nothing, it is judged as the code before it.
    EXPECT_EQ(escapers("<% int v = 0; try { v = std::stoi(s); } catch (...) { %><p class=\"err\"><%= s %></p><% } %>"),
              "text");
    EXPECT_NE(escapers("<% try { views::_w{}.render(kiln_out); } catch (const std::exception& e) { %><%= e.what() %>"
                       "<% } %>")
                  .find("its catch cannot hold template text"),
              std::string::npos);
    // A lambda whose introducer ends a block, and the digraphs of '[' and ']'.
    EXPECT_NE(escapers("<% auto row = [&] %>\n<% { %><td><%= p %></td><% }; %>").find("a lambda's body"),
              std::string::npos);
    EXPECT_NE(escapers("<% auto row = <:&:>(const P& p) { %><td><%= p.name %></td><% }; %>").find("digraph"),
              std::string::npos);
    EXPECT_EQ(escapers("<% std::vector<::ns::T> v; %><p><%= v.size() %></p>"), "text");
    EXPECT_EQ(escapers("<% int m = n; // like a[i] %><p><%= m %></p><% if (a) { /* [1] */ %>x<% } // [x] %>"
                       "<% /* see [1] */ { %><p><%= m %></p><% } %>"),
              "text text");
    // One that ends in its own block writes nothing of the template's.
    EXPECT_EQ(escapers("<% auto n = std::count_if(v.begin(), v.end(), [](int i) { return i > 0; }); %><p><%= n %>"),
              "text");
}

TEST(KilncContextsFlow, ABlocksKeywordIsFoundPastCommentsAndBracesInItsCondition) {
    // Each if below may leave a <script> open: the value after it is refused, as it is
    // without the comment or the braces.
    const std::string branch = "depending on which branch of the code above runs";
    EXPECT_NE(escapers("<% // inline?\n if (inline_cfg) { %><script><% } %><%= v %>").find(branch), std::string::npos);
    EXPECT_NE(escapers("<%\f if (a) { %><script><% } %><%= v %>").find(branch), std::string::npos);  // C++ blank
    // (Read as a block that always runs after the if's, the else would close the if's <script>.)
    EXPECT_NE(escapers("<% if (a) { %><script>x<% } /* no */ else { %><script src=\"/c.js\"></script><% } %><%= v %>")
                  .find(branch),
              std::string::npos);
    EXPECT_NE(escapers("<% if (m == std::string{\"x\"}) { %><script><% } %><%= v %>").find(branch), std::string::npos);
    EXPECT_NE(escapers("<% if (std::ranges::any_of(v, [](auto& p) { return p.d; })) { %><script><% } %><%= v %>")
                  .find(branch),
              std::string::npos);
    // A macro's block may run any number of times.
    EXPECT_NE(escapers("<% FOREACH(p, ps) /* each */ { %><%= p %><script><% } %></script>").find(branch),
              std::string::npos);
    std::vector<FlowEvent> ev = scan_code_flow("} /* c */ else if (s == std::string{\"}\"}) {");
    ASSERT_EQ(ev.size(), 4u);
    EXPECT_EQ(ev[3].kind, FlowKind::Open);
    EXPECT_EQ(ev[3].block, Block::ElseIf);
}

TEST(KilncContextsFlow, SwitchCasesEachStartFromTheTopOfTheSwitch) {
    EXPECT_EQ(escapers("<% switch (k) { %><% case K::A: %><script><% break; %><% default: %><%= a %><% } %></script>"),
              "text");
    // Without a break, case 1 falls through: case 2 is reached in text or in an attribute.
    EXPECT_EQ(escapers("<% switch (k) { case 1: %><p title=\"<% case 2: %><%= a %><% } %>\">"), "attr");
    EXPECT_EQ(escapers("<% switch (k) { case 1: %><script><% break; } %><%= a %>"),
              "1:49: this value stands in a script or in element text, depending on which branch of the code "
              "above runs: open and close each tag and attribute within one branch");
}

TEST(KilncContextsFlow, CodeBlocksScanSkipsLiteralsAndComments) {
    std::vector<FlowEvent> ev = scan_code_flow("if (s == \"{\" || c == '}') { // }\n /* { */");
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].kind, FlowKind::Open);
    EXPECT_EQ(ev[0].block, Block::If);
    ev = scan_code_flow("} else if (a) {");
    ASSERT_EQ(ev.size(), 2u);
    EXPECT_EQ(ev[0].kind, FlowKind::Close);
    EXPECT_EQ(ev[1].block, Block::ElseIf);
    ev = scan_code_flow("for (int i = 0; i < n; ++i) { case_x: ; } do {");
    ASSERT_EQ(ev.size(), 3u);
    EXPECT_EQ(ev[0].block, Block::Loop);
    EXPECT_EQ(ev[2].block, Block::Loop);
    ev = scan_code_flow("case kiln::Kind::A: default: auto s = R\"x({)x\";");
    ASSERT_EQ(ev.size(), 2u);
    EXPECT_EQ(ev[0].kind, FlowKind::Case);
    EXPECT_EQ(ev[1].kind, FlowKind::Case);
}

TEST(KilncContextsFlow, RawOutputAndUnfamiliarTextNeverStopATemplate) {
    // Generator templates print C++ with <%== %>: kilnc reads it as odd HTML and says nothing.
    EXPECT_EQ(escapers("#include <vector>\nstd::vector<<%== t %>> v; if (a<b && c>d) { <%== x %> }\n"
                       "<style><%== css %></style><p style=<%== s %> <%== attrs %>><script>\"<%== y %>\"</script>"
                       "<!-- <%== z %> --><a href=\"javascript:<%== j %>\">"),
              "");
    EXPECT_EQ(escapers("<% } } { %><%= a %><% { %>"), "text");  // unbalanced braces: followed in order
}

// A layout that prints its page with <%== content %> is judged as one with yield: the
// page is markup, and in a <script> or an attribute it would be read otherwise.
TEST(KilncContextsErrorPaths, ALayoutsRawContentStandsInElementTextAsYieldDoes) {
    EXPECT_NE(escapers("<script>var page = '<%== content %>';</script>").find("the page (<%== content %>) renders markup"),
              std::string::npos);
    EXPECT_EQ(escapers("<main><%== content %></main><p><%= a %></p>"), "text");
    EXPECT_EQ(escapers("<script>var c = <%== contents %>;</script>"), "");  // another value: raw, unjudged
}

TEST(KilncContextsFlow, PartialsAndYieldStandInElementText) {
    EXPECT_EQ(escapers("<ul><li><%@ render \"_p\" %></li></ul><main><%@ yield %></main><%= content %>"), "text");
}

// ---------------------------------------------------------------- the JS scanner

JsSpot spot_after(std::string_view js) {
    JsState s;
    for (char c : js) s.feed(c);
    return s.spot();
}

TEST(KilncJsState, TellsStringsRegexesAndCommentsFromCode) {
    EXPECT_EQ(spot_after("var a = "), JsSpot::Code);
    EXPECT_EQ(spot_after("var a = \"x"), JsSpot::String);
    EXPECT_EQ(spot_after("var a = 'x\\'"), JsSpot::String);
    EXPECT_EQ(spot_after("var a = 'x\\''; b = "), JsSpot::Code);
    EXPECT_EQ(spot_after("`a ${"), JsSpot::Code);
    EXPECT_EQ(spot_after("`a ${ {b: 1} } "), JsSpot::String);
    EXPECT_EQ(spot_after("`a \\${"), JsSpot::String);
    EXPECT_EQ(spot_after("x = /"), JsSpot::Regex);
    EXPECT_EQ(spot_after("x = a /"), JsSpot::Code);  // division
    EXPECT_EQ(spot_after("x = f(a) / "), JsSpot::Unsure);  // a division, or a regex as after `if (a)`
    EXPECT_EQ(spot_after("x = f(a) / 2;\n y = "), JsSpot::Code);
    EXPECT_EQ(spot_after("return /["), JsSpot::Regex);
    EXPECT_EQ(spot_after("x = /[/]\"/; y = "), JsSpot::Code);
    EXPECT_EQ(spot_after("// \"\n x = "), JsSpot::Code);
    EXPECT_EQ(spot_after("/* ' */ x = "), JsSpot::Code);
    EXPECT_EQ(spot_after("/* ' "), JsSpot::Comment);
}

// Where the scanner could lose sync with the browser, and with it the string the
// browser has open (a value's own quotes would then close it).
TEST(KilncJsState, FollowsPostfixIncrementsHtmlLikeCommentsAndUnicodeLineEnds) {
    // "++" is postfix here (divides), or prefix after a line end: doubted to the line's end.
    EXPECT_EQ(spot_after("half = count++ / 2, label = \"a/"), JsSpot::Unsure);
    EXPECT_EQ(spot_after("half = count-- / 2;\nlabel = \"a/"), JsSpot::String);
    EXPECT_EQ(spot_after("x = a + /\"/"), JsSpot::Code);  // a regex after a binary +
    EXPECT_EQ(spot_after("a = b <!-- \""), JsSpot::Comment);  // "<!--" starts a line comment
    EXPECT_EQ(spot_after("a = b <!-- \"\nvar m = \"Hi "), JsSpot::String);
    EXPECT_EQ(spot_after("x = 1;\n  --> \""), JsSpot::Comment);  // "-->" first on its line
    EXPECT_EQ(spot_after("x = a --> \""), JsSpot::String);       // elsewhere: a-- > "
    EXPECT_EQ(spot_after("x = !--a; y = \""), JsSpot::String);
    EXPECT_EQ(spot_after("// c\xe2\x80\xa8 x = \""), JsSpot::String);  // U+2028 ends the line
    EXPECT_EQ(spot_after("// c\xe2\x80\xa9 x = "), JsSpot::Code);
    EXPECT_EQ(spot_after("// c\xe2\x80\xa0 x = "), JsSpot::Comment);
    // "-->" after a U+2028, or after spaces and comments only, is first on its line.
    EXPECT_EQ(spot_after("x = 1;\xe2\x80\xa8 --> \""), JsSpot::Comment);
    EXPECT_EQ(spot_after("x = 1;\n /* c */ --> \""), JsSpot::Comment);
    EXPECT_EQ(spot_after("x = 1 /* c\n */ --> \""), JsSpot::Comment);
    EXPECT_EQ(spot_after("x = 1 /* c */ --> \""), JsSpot::String);  // x = 1 -- > "
    // A number's '.' is part of it: "1./2" divides.
    EXPECT_EQ(spot_after("x = 1./2; y = \""), JsSpot::String);
    // No HTML-like comments in a module.
    JsState module;
    module.module(true);
    for (char c : std::string_view("a = b <!-- \"")) module.feed(c);
    EXPECT_EQ(module.spot(), JsSpot::String);
}

// After ')' a '/' divides, or begins a regex (`if (a) /"/.test(s)`), where a string
// the one reading sees the other does not: kilnc doubts until the line ends, and for
// good if that line could carry either reading onto the next ('`', "/*", '\').
TEST(KilncJsState, ASlashAfterAParenthesisIsDoubtedToTheLinesEnd) {
    EXPECT_EQ(spot_after("if (a) /\"/.test(s); x = \""), JsSpot::Unsure);
    EXPECT_EQ(spot_after("if (a) /\"/.test(s); x = 1;\n y = "), JsSpot::Code);
    EXPECT_EQ(spot_after("y = (a + b) / `\n;\n z = "), JsSpot::Unsure);
    EXPECT_EQ(spot_after("y = (a + b) / 2 /* \n */;\n z = "), JsSpot::Unsure);
    EXPECT_EQ(spot_after("y = (a + b) / 2;\n z = "), JsSpot::Code);
    EXPECT_EQ(spot_after("y = (a) + b / 2; z = "), JsSpot::Code);  // the '/' follows b, not ')'
    EXPECT_EQ(error_at("<script>\nvar avg = (a + b) / 2, name = <%= v %>;\n</script>"), "2:31");
    EXPECT_EQ(escapers("<script>\nvar avg = (a + b) / 2;\nvar name = <%= v %>;\n</script>"), "js");
    EXPECT_EQ(escapers("<script type=\"module\">a = b <!-- c\nf(<%= v %>)</script>"), "js");
    // Spaces, line ends and comments between the ')' and the '/' keep the doubt.
    EXPECT_EQ(spot_after("if (a)\n  /\"/.test(s) ? g(\""), JsSpot::Unsure);
    EXPECT_EQ(spot_after("if (a) /* c */ /\"/.test(s) ? g(\""), JsSpot::Unsure);
    // A '\\' before the line's end: for good.
    EXPECT_EQ(spot_after("if (a) /\"/.test(s) ? f(\"\\\nx = "), JsSpot::Unsure);
    // The next line's first '/' may be read either way too.
    EXPECT_EQ(spot_after("if (a) /\"/.test(s) || f(\"x\") ||\n  /\"/.test(t) ? g(\""), JsSpot::Unsure);
    // '}' (an object, or a block), "+++", and a word with a no-break space in it.
    EXPECT_EQ(spot_after("x = {} / \"/; y = "), JsSpot::Unsure);
    EXPECT_EQ(spot_after("a+++/\"/.source; y = \"; z = "), JsSpot::Unsure);
    EXPECT_EQ(spot_after("return\xc2\xa0/\"/.test(s) ? g(\""), JsSpot::Unsure);
    // A keyword after '.' is a property name: it divides. `default` is a keyword.
    EXPECT_EQ(spot_after("x = obj.return / \"/; y = "), JsSpot::String);
    EXPECT_EQ(spot_after("export default /\"/.source; g(\""), JsSpot::String);
    // In an event handler, &#x2028; is a line end and &nbsp; a space.
    EXPECT_NE(escapers("<button onclick=\"// c&#x2028;g(&quot;<%= v %>&quot;)\">b</button>").find("string"),
              std::string::npos);
    EXPECT_NE(escapers("<button onclick=\"return&nbsp;/&quot;/.test(s) ? g(&quot;<%= v %>&quot;) : 0\">")
                  .find("division"),
              std::string::npos);
}

TEST(KilncContextsErrorPaths, AValueInAStringTheScannerMightHaveMissedIsRefused) {
    // The reviewer's case: read as a regex from "/ 2, label = \"a/", the quote parity
    // flipped and the value stood in code, where its quotes closed the browser's string.
    EXPECT_EQ(error_at("<script>var half = count++ / 2, label = \"a/b\";\nvar msg = \"Hi <%= name %>\";</script>"),
              "2:15");
    EXPECT_EQ(error_at("<script>a = b <!-- \"\nvar msg = \"Hi <%= name %>\";</script>"), "2:15");
}

TEST(KilncJsState, AValueIsALiteralSoASlashAfterItDivides) {
    JsState s;
    for (char c : std::string_view("x = ")) s.feed(c);
    s.after_value();
    s.feed(' ');
    s.feed('/');
    EXPECT_EQ(s.spot(), JsSpot::Code);
}

// ---------------------------------------------------------------- error paths

TEST(KilncContextsErrorPaths, EachRefusedContextAtTheValuesPosition) {
    EXPECT_EQ(error_at("<p>\n<style> p { color: <%= c %> }</style>"), "2:20");
    EXPECT_EQ(error_at("<p style=\"color: <%= c %>\">"), "1:18");
    EXPECT_EQ(error_at("<input value=<%= v %>>"), "1:14");
    EXPECT_EQ(error_at("<input value=x<%= v %>>"), "1:15");
    EXPECT_EQ(error_at("<input <%= attrs %>>"), "1:8");
    EXPECT_EQ(error_at("<<%= tag %>>"), "1:2");
    EXPECT_EQ(error_at("</<%= tag %>>"), "1:3");
    EXPECT_EQ(error_at("<!-- <%= x %> -->"), "1:6");
    EXPECT_EQ(error_at("<!DOCTYPE <%= x %>>"), "1:11");
    EXPECT_EQ(error_at("<iframe srcdoc=\"<%= doc %>\">"), "1:17");
    EXPECT_EQ(error_at("<script>s = '<%= s %>'</script>"), "1:14");
    EXPECT_EQ(error_at("<a onclick=\"f(&quot;<%= s %>&quot;)\">"), "1:21");  // quotes decoded first
    EXPECT_EQ(error_at("<script>r = /<%= s %>/</script>"), "1:14");
    EXPECT_EQ(error_at("<title>a <<%= s %></title>"), "1:11");
}

TEST(KilncContextsErrorPaths, UnsafeUrlSchemesRefuseValuesAfterThem) {
    EXPECT_EQ(error_at("<a href=\"javascript:go(<%= id %>)\">"), "1:24");
    EXPECT_EQ(error_at("<a href=\" JavaScript:go(<%= id %>)\">"), "1:25");
    EXPECT_EQ(error_at("<a href=\"java\tscript:go(<%= id %>)\">"), "1:25");
    EXPECT_EQ(error_at("<a href=\"javascript&colon;go(<%= id %>)\">"), "1:30");
    EXPECT_EQ(error_at("<a href=\"&#106;avascript:go(<%= id %>)\">"), "1:29");
    EXPECT_EQ(error_at("<iframe src=\"data:text/html,<%= id %>\">"), "1:29");
    EXPECT_EQ(escapers("<a href=\"tel:<%= a %>\"><a href=\"HTTPS://x/<%= b %>\">"), "url-part url-part");
}

TEST(KilncContextsErrorPaths, AValueThatWouldSupplyTheSchemeIsRefused) {
    EXPECT_EQ(error_at("<a href=\"<%= scheme %>://example.com/\">"), "1:10");
    EXPECT_EQ(error_at("<a href=\"java<%= rest %>:x\">"), "1:14");
    EXPECT_EQ(error_at("<a href=\"<%= a %><%= b %>&#58;x\">"), "1:10");
    EXPECT_EQ(escapers("<a href=\"<%= base %>/p:1\"><a href=\"<%= base %>?a=b:c\">"), "url url");
}

TEST(KilncContextsErrorPaths, AValueRightAfterAnUnfinishedCharacterReference) {
    EXPECT_EQ(error_at("<a href=\"/x?a=1&amp<%= v %>\">"), "1:20");
    EXPECT_EQ(error_at("<a href=\"javascript&#58<%= v %>\">"), "1:24");
    EXPECT_EQ(escapers("<p title=\"&amp<%= v %>\">"), "attr");  // harmless in a plain attribute
}

TEST(KilncContextsErrorPaths, MarkupOutsideElementText) {
    EXPECT_EQ(escapers("<p title=\"<%@ render \"_p\" %>\">"),
              "1:11: the partial '_p' renders markup, which belongs in element text, not in the value of attribute "
              "'title'");
    EXPECT_EQ(error_at("<script>\n<%@ yield %></script>"), "2:1");
    EXPECT_EQ(error_at("<style><%= content %></style>"), "1:8");
}

// Rendered into another template (a partial, or a page into its layout), a template
// that ended in a script or an attribute would put the next value there, judged by
// kilnc as element text.
TEST(KilncContextsErrorPaths, ATemplateMustEndInElementTextOnEveryPath) {
    EXPECT_EQ(escapers("<script src=\"/a.js\"></script><script>"),
              "1:38: the template ends in a <script> element: close every tag, attribute, comment and script it "
              "opens, on every path through its code (rendered into another template, the next value would stand "
              "there)");
    EXPECT_EQ(error_at("<a href=\"/x\n"), "2:1");
    EXPECT_EQ(error_at("<p onclick=\"go("), "1:16");
    EXPECT_EQ(error_at("<p><!-- "), "1:9");
    EXPECT_EQ(error_at("<plaintext><%= a %>"), "1:20");  // never closes
    EXPECT_EQ(error_at("<% if (x) { %><script><% } %>"), "1:30");
    EXPECT_EQ(error_at("<p title=\"<% if (x) return; %>\">"), "1:33");  // the return ends it in the attribute
    EXPECT_EQ(error_at("<p title=\"<% return; %>\">"), "1:26");
    EXPECT_EQ(escapers("<% if (x) { %><p><%= a %></p><% } %><script>go()</script>"), "text");
    EXPECT_EQ(escapers("<% if (!x) return; %><p><%= a %></p>"), "text");
}

TEST(KilncContextsErrorPaths, CodeKilncCannotFollowIsRefused) {
    const std::string unbraced =
        "this code block ends in a control statement (or a macro call) without its '{': the template text after it "
        "would be what it governs; write <% if (...) { %> ... <% } %>";
    // `if` governs the text after the block: title=" opens only when has_tip is true.
    EXPECT_EQ(escapers("<div class=\"c\"<% if (has_tip) %> title=\"<%= tip %>\">"), "1:15: " + unbraced);
    EXPECT_EQ(error_at("<% if (a) { %>x<% } else %>y"), "1:16");
    EXPECT_EQ(error_at("<% for (auto& x : xs) // each\n %><li>"), "1:1");
    EXPECT_EQ(error_at("<% while (more()) %><li>"), "1:1");
    EXPECT_NE(escapers("<% goto end; %><p title=\"<% end: %><%= a %>\">").find("goto"), std::string::npos);
    EXPECT_NE(escapers("<%\n#if DEBUG\n%><p title=\"<%\n#endif\n%><%= a %>\">").find("preprocessor"),
              std::string::npos);
    // A whole statement inside one block is fine, as are braces.
    EXPECT_EQ(escapers("<% if (x) y = 1; %><p><%= a %></p><% for (auto& i : v) n += i; %>"), "text");
}

// A head with two control statements, `if (a) for (...) {`, was read by its first word:
// the loop's body was followed as an if's, run once, so a value judged in element text
// was printed again after the <script> its first run opened.
TEST(KilncContextsErrorPaths, OneControlStatementPerBrace) {
    const std::string why = "kilnc follows one control statement per '{'";
    EXPECT_NE(escapers("<% if (show) for (const auto& n : names) { %><%= n %><script><% } %></script>").find(why),
              std::string::npos);
    EXPECT_NE(escapers("<script>var a=1;<% if (on) switch (k) { case 1: %></script><% break; default: %><%= v %>"
                       "<% } %></script>")
                  .find(why),
              std::string::npos);
    EXPECT_NE(escapers("<% if (a) { %>x<% } else for (auto& i : v) { %><%= i %><% } %>").find(why), std::string::npos);
    EXPECT_NE(escapers("<% for (auto& p : ps) if (p.ok) { %><li><%= p %></li><% } %>").find(why), std::string::npos);
    EXPECT_NE(escapers("<% FOR_EACH(p, ps) if (p.ok) { %><%= p %><% } %>").find(why), std::string::npos);  // a macro
    // Inside one code block, or written with a '{' each, it is followed.
    EXPECT_EQ(escapers("<% if (a) for (auto& i : v) { n += i; } %><p><%= n %></p>"), "text");
    EXPECT_EQ(escapers("<% if (show) { for (auto& n : names) { %><li><%= n %></li><% } } %>"), "text");
    EXPECT_EQ(escapers("<% if constexpr (kDebug) { %><p><%= a %></p><% } else if constexpr (kTest) { %><%= b %>"
                       "<% } %>"),
              "text text");
    // An attribute is no word: the if below is an if, and the break still jumps.
    EXPECT_NE(escapers("<% [[likely]] if (c) { %><script><% } %><%= v %>").find("depending on which branch"),
              std::string::npos);
    EXPECT_EQ(error_at("<% for (auto& p : ps) { %><a href=\"/p/<%= p.id %><% [[unlikely]] if (p.last) break; %>"
                       "\">.</a><% } %><p title=\"<%= note %>\">"),
              "1:111");
    // An unbraced branch is a branch: `} else if (hidden) n++; else {` is no chain's last
    // else, and with `hidden` true no branch closes the <a ...> tag.
    EXPECT_NE(escapers("<a href=\"/x\" <% if (big) { %>class=\"big\"><% } else if (hidden) n++; else { %>><% } %>"
                       "<%= title %></a>")
                  .find("inside the tag <a>"),
              std::string::npos);
    EXPECT_NE(escapers("<% if (a) x(); else if (b) { %><script><% } else { %><script><% } %><%= v %>")
                  .find("depending on which branch"),
              std::string::npos);
    EXPECT_EQ(escapers("<% if (a) x(); else if (b) { %><p>b</p><% } else { %><p>c</p><% } %><%= v %>"), "text");
    // A lambda that opens a braced value is still a lambda.
    EXPECT_NE(escapers("<% std::function<void()> row{[&] { %><p><%= x %></p><% }}; %><script><% row(); %></script>")
                  .find("a lambda's body cannot hold template text"),
              std::string::npos);
    // Prefixed character literals are literals, digit separators are not.
    EXPECT_NE(escapers("<script>var a = 1;<% wchar_t w = L'x'; if (ok) { total = 1'000; %></script><% } %><%= v %>")
                  .find("depending on which branch"),
              std::string::npos);
    EXPECT_EQ(escapers("<% if (c == L'a' || c == u8'b' || n > 0x7F'FF) { %><p><%= v %></p><% } %>"
                       "<% switch (c) { case'a': %><b><%= w %></b><% } %>"),
              "text text");
    EXPECT_EQ(escapers("<% if consteval { %><p><%= a %></p><% } %>"), "text");
    // A local class's member functions write where they are called.
    EXPECT_NE(escapers("<% struct Row { void print() const { %><%= v %><% } }; %><script><% Row{}.print(); %>")
                  .find("a local class's body cannot hold template text"),
              std::string::npos);
    EXPECT_EQ(escapers("<% struct P { int x; }; P p{1}; %><p><%= p.x %></p>"), "text");
    EXPECT_EQ(escapers("<% struct Row { int f() const { return 1; } }; %><p><%= x %></p>"), "text");  // its own return
}

// What the compiler reads differently from a scan of each code block is refused.
TEST(KilncContextsErrorPaths, CodeTheCompilerReadsOtherwiseIsRefused) {
    // The `}` is in the comment the backslash continues: for a non-admin the <script> stays open.
    EXPECT_NE(escapers("<script>x=1;<% if (admin) { // note \\\n} %></script><% } %><%= v %>")
                  .find("a backslash at the end of a line"),
              std::string::npos);
    EXPECT_NE(escapers("<%\n#\\\nif 0\n%><p title=\"<%\n#endif\n%><%= a %>\">").find("backslash"), std::string::npos);
    // A comment or a raw string that spans template text hides it from the compiler.
    EXPECT_NE(escapers("<script>x=1;<% /* %></script><% */ %><%= v %>").find("a /* comment"), std::string::npos);
    EXPECT_NE(escapers("<% auto s = R\"(%></script><% )\"; %><%= v %>").find("literal"), std::string::npos);
    // <% and %%> (written %> in the code) are the compiler's '{' and '}'.
    EXPECT_NE(escapers("<% if (a) <% %><script><% %%> %><%= v %>").find("digraph"), std::string::npos);
    EXPECT_NE(escapers("<% std::string s = \"%\"; // b \\\n %><p><%= s %></p>").find("backslash"), std::string::npos);
    // Comments and literals that close are fine, as is a trailing backslash (kilnc's
    // output gives it an empty line to join).
    EXPECT_EQ(escapers("<% /* a */ std::string s = \"%\"; char q = '\\\\'; // b \\ %><p><%= s %></p>"), "text");
    // A label or an attribute before an unbraced control statement.
    EXPECT_EQ(error_at("<% lbl: if (x) %><p title=\"<%= t %>\">"), "1:1");
    EXPECT_EQ(error_at("<% [[likely]] if (x) %><p title=\"<%= t %>\">"), "1:1");
    EXPECT_EQ(error_at("<script>var a = 1;<% UNLESS(done) %></script><%= v %>"), "1:19");  // a macro's
}

TEST(KilncContextsFlow, AConditionalBreakOrContinueMayJump) {
    // `if (p.last) break;` may leave the loop inside href's value: after the loop, the
    // quote of title=" may close href, and note stand inside the tag <a>.
    EXPECT_EQ(error_at("<% for (auto& p : ps) { %><a href=\"/p/<%= p.id %><% if (p.last) break; %>\">.</a><% } %>"
                       "<p title=\"<%= note %>\">"),
              "1:98");
    EXPECT_NE(escapers("<% for (auto& p : ps) { %><%= p %><a href=\"/p/<% if (p.skip) continue; %>\">.</a><% } %>")
                  .find("depending on which branch"),
              std::string::npos);
    EXPECT_EQ(escapers("<% for (auto& p : ps) { %><% if (p.skip) continue; %><li><%= p %></li><% } %>"), "text");
}

TEST(KilncContextsFlow, WhatNoPathReachesIsRefusedAndNotFollowed) {
    // A value or a partial after a jump has no context to be judged in.
    EXPECT_EQ(escapers("<% for (auto& p : ps) { %><% break; %><li><%= p %></li><% } %>"),
              "1:43: no path through the code blocks reaches this (it follows a break, continue or return): remove it");
    EXPECT_EQ(error_at("<% for (auto& p : ps) { %><% continue; %><%@ render \"_p\" %><% } %>"), "1:42");
    // Nothing after it is followed: 300 nested blocks no path reaches are not too deep.
    std::string src = "<% if (done) { %><p>done</p><% return; %>";
    for (int i = 0; i < 300; ++i) src += "<% if (x) { %>";
    for (int i = 0; i < 300; ++i) src += "<% } %>";
    src += "<% } %><p><%= a %></p>";
    EXPECT_EQ(escapers(src), "text");
    // A case label is a way back in: the block after the break is followed for it.
    EXPECT_EQ(escapers("<% switch (k) { case 1: %><b>1</b><% break; %><% { %><% case 2: %><%= a %><% } %><% } %>"),
              "text");
}

// A <select> ignores <title>, <style> and the like: their text is markup there.
TEST(KilncContexts, RawTextNamesInASelectAreAmbiguous) {
    EXPECT_EQ(error_at("<select><title><option onclick=\"x=1;/*</title>*/<%= u %>\">"), "1:49");
    EXPECT_EQ(escapers("<select><option>a</option></select><title><%= t %></title>"), "attr");
    // In a <template> in a <select>, </select> is ignored: the select stays open, for good.
    EXPECT_EQ(error_at("<select><template></select></template><title><option onclick=\"x=1;/*</title>*/<%= u %>\">"),
              "1:79");
    EXPECT_EQ(escapers("<select><textarea><%= t %></textarea>"), "attr");  // a textarea ends the select
}

// Before, kilnc took these as raw text to the end tag, where a browser reads markup:
// the unquoted href after <script/> was "inside the script", and so on.
TEST(KilncContextsErrorPaths, ForeignContentWhereTheReadingsPartIsRefused) {
    EXPECT_EQ(error_at("<svg><script href=\"/x.js\"/><text><%= u %></text></svg>"), "1:34");
    EXPECT_EQ(error_at("<svg><title><a href=<%= u %>>x</a></title></svg>"), "1:21");
    EXPECT_EQ(error_at("<svg><script>var a = <%= v %>;</script></svg>"), "1:22");
    EXPECT_EQ(error_at("<math><style>a</style><script/><p><%= v %></p>"), "1:35");
    EXPECT_EQ(escapers("<math><script/>x</script></math><p><%= v %></p>"), "text");  // both read text
    EXPECT_EQ(error_at("<script src=\"/x.js\" /><p><%= v %></p>"), "1:26");  // HTML: the <p> is script text
    EXPECT_EQ(error_at("<svg><![CDATA[ a > b ]]></svg><%= v %>"), "1:31");
    // A </svg> while an HTML element is open in its <desc> (or <foreignObject>, <mi>...)
    // is ignored by a browser: the svg goes on, and so does kilnc, for good.
    EXPECT_EQ(error_at("<svg><desc><b></svg></b></desc><title><img src=\"x\" onerror=\"<%= u %>\"></title>"),
              "1:61");
    EXPECT_EQ(error_at("<svg><desc><p></svg></p></desc><script>var s = &quot;<%= u %>&quot;;</script>"), "1:54");
    EXPECT_EQ(error_at("<svg><desc><b></desc></svg>"), "1:28");  // and the template cannot end there
    // A partial (or the layout's page) inside an <svg> would be judged as HTML; a
    // template that leaves one open would make the next template's markup foreign.
    EXPECT_EQ(error_at("<svg viewBox=\"0 0 1 1\"><%@ render \"_p\" %></svg>"), "1:24");
    EXPECT_EQ(error_at("<math><mi>x</mi>"), "1:17");
    // Only a point's own end tag leaves it: a stray </mi> in a <desc> is ignored.
    EXPECT_NE(escapers("<svg><a><desc></mi><b></svg></b></desc><set attributeName=\"href\" to=\"<%= u %>\"/>"
                       "</a></svg>")
                  .find("cannot tell whether"),
              std::string::npos);
    // An <svg> opened in a <math>'s <mi> is one: its animations are checked.
    EXPECT_EQ(error_at("<math><mi><svg><a><animate values=\"<%= u %>\"/>"), "1:36");
    // A raw-text element closed in a <foreignObject> is counted closed.
    EXPECT_EQ(escapers("<svg><foreignObject><textarea>x</textarea></foreignObject></svg><p><%= v %></p>"), "text");
    // <set> and <animate> can give an href its value.
    EXPECT_EQ(escapers("<svg><a><set attributeName=\"href\" to=\"<%= u %>\"/></a></svg>"), "url");
    EXPECT_EQ(error_at("<svg><a><animate attributeName=\"href\" values=\"<%= u %>\"/></a></svg>"), "1:47");
    // Past three levels kilnc stops counting, and the content stays maybe foreign.
    EXPECT_EQ(error_at("<svg><svg><svg><svg></svg></svg></svg></svg><script>f(<%= v %>)</script>"), "1:55");
}

// A view printed with <%= %> inside an <svg> would bring markup judged outside it (a
// partial's <set attributeName="href" to="<%= url %>"/>, a plain attribute there).
TEST(KilncContexts, ValuesInsideSvgOrMathAreEscapedAsInAnAttributeSoMarkupDoesNotCompile) {
    EXPECT_EQ(escapers("<svg><a><%= anim %><text y=\"20\"><%= label %></text></a></svg><p><%= after %></p>"),
              "attr attr text");
    EXPECT_EQ(escapers("<math><mi><%= x %></mi></math>"), "attr");
}

// -1 is printed " -1" in a script: right after "</script" (in a comment, where values
// may stand) its space would end the element there.
TEST(KilncContextsErrorPaths, AValueRightAfterAScriptTagsNameInAScript) {
    EXPECT_EQ(error_at("<script>// </script<%= n %>\nf();</script>"), "1:20");
    EXPECT_EQ(error_at("<script>/* <!--<SCRIPT<%= n %> */</script>"), "1:23");
    EXPECT_EQ(escapers("<script>// </scripts <%= n %>\n var s = \"<\\/script\" + <%= n %>;</script>"), "js js");
}

TEST(KilncContextsErrorPaths, AScriptInTheDoubleEscapedStateLosesTheContextForGood) {
    EXPECT_EQ(error_at("<script><!--<script></script></script><p><%= a %></p>"), "1:42");
}

// The work bound stops pathological templates, not large ones: half a megabyte of
// markup and 2,500 values, in a loop and its branches, are followed to the end; so are
// 20,000 values with little text between them.
TEST(KilncContextsErrorPaths, ALargeTemplateIsFollowedToTheEnd) {
    std::string src = "<% for (auto& p : ps) { %>";
    for (int i = 0; i < 1000; ++i) {
        src += "<div class=\"row\"><p>" + std::string(500, 'x') + "</p><a href=\"/p/<%= p %>\">";
        src += i % 2 ? "<% if (p.a) { %><b><%= p %></b><% } else { %><i><%= p %></i><% } %>" : "<%= p %>";
        src += "</a></div>";
    }
    src += "<% } %>";
    std::string e = escapers(src);
    ASSERT_EQ(e.find(':'), std::string::npos) << e.substr(0, 200);  // not an error
    auto count = [&](std::string_view word) {
        size_t n = 0;
        for (size_t at = 0; (at = e.find(word, at)) != std::string::npos; at += word.size()) ++n;
        return n;
    };
    EXPECT_EQ(count("url-part"), 1000u);
    EXPECT_EQ(count("text"), 1500u);

    std::string table = "<table><% for (auto& r : rows) { %><tr>";
    for (int i = 0; i < 20000; ++i) table += "<td><%= v %></td>";
    table += "</tr><% } %></table>";
    e = escapers(table);
    ASSERT_EQ(e.find(':'), std::string::npos) << e.substr(0, 200);
    EXPECT_EQ(count("text"), 20000u);
}

TEST(KilncContextsErrorPaths, TooDeeplyNestedBlocksGiveUpInsteadOfGuessing) {
    std::string src;
    for (int i = 0; i < 300; ++i) src += "<% for (;;) { %>";
    src += "<%= a %>";
    for (int i = 0; i < 300; ++i) src += "<% } %>";
    EXPECT_EQ(escapers(src).substr(0, 40), "1:4801: kilnc gave up following the HTML");
}

// A context can be large (a tag name has no bound), and each one met is kept: their
// bytes count as work, or 20,000 of them, each 200 KB, would be kept (4 GB).
TEST(KilncContextsErrorPaths, LargeContextsGiveUpInsteadOfFillingMemory) {
    std::string src = "<x" + std::string(200'000, 'a');
    for (int i = 0; i < 20'000; ++i) src += "<%== r %>b";
    EXPECT_EQ(escapers(src).substr(0, 50), "1:400003: kilnc gave up following the HTML context");
}

TEST(KilncContextsErrorPaths, TheFirstRefusedValueInTheTemplateIsReported) {
    EXPECT_EQ(error_at("<p><%= ok %></p>\n<a href=<%= a %>><style><%= b %>"), "2:9");
}

}  // namespace
}  // namespace kiln::kilnc
