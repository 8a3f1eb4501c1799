#include "template_oracle/oracle.hpp"

#include "kiln/escape.hpp"
#include "template_oracle/page_compare.hpp"
#include "template_oracle/paths.hpp"

namespace kiln::oracle {

const char* const kHostileValue =
    "javascript:alert(1)//\"'`<x a=1></script></style></title></textarea></noscript></xmp></iframe>"
    "</noembed></noframes></template></svg></math></select>--><!--]]><svg/onload=alert(2)>${a}\r\n"
    "\xe2\x80\xa8\\&amp;&quot x</script";
const char* const kHostileOrigin = "//evil.example/x?a=1&b=<y>\"'";

namespace {

// A layout's `<%= content %>` or `<%== content %>`: the page, markup.
bool prints_content(const kilnc::Node& n) {
    if (n.kind != kilnc::NodeKind::Output && n.kind != kilnc::NodeKind::RawOutput) return false;
    std::string_view c = n.code.code;
    while (!c.empty() && std::string_view(" \t\r\n\f\v").find(c.front()) != c.npos) c.remove_prefix(1);
    while (!c.empty() && std::string_view(" \t\r\n\f\v").find(c.back()) != c.npos) c.remove_suffix(1);
    return c == "content";
}

bool prints_markup(const kilnc::Node& n) {
    return n.kind == kilnc::NodeKind::Render || n.kind == kilnc::NodeKind::Yield || prints_content(n);
}

// What the generated code prints for one node, given the value every <%= %> holds.
void print(std::string& out, const kilnc::Node& n, std::string_view value) {
    using kilnc::Escaper;
    if (prints_markup(n)) {  // an element (one a <select> keeps), and the value as text
        out += "<option data-kiln-markup>";
        append_html_escaped(out, value);
        out += "</option>";
        return;
    }
    switch (n.kind) {
        case kilnc::NodeKind::Text: out += n.text; break;
        case kilnc::NodeKind::Output:
            switch (n.escaper) {
                case Escaper::Text:
                case Escaper::Attr: append_html_escaped(out, value); break;
                case Escaper::Url: append_safe_url(out, value); break;
                case Escaper::UrlPart: append_url_component(out, value); break;
                case Escaper::Js: append_js_string(out, value, "\""); break;
                case Escaper::JsAttr: append_js_string(out, value, "&quot;"); break;
            }
            break;
        case kilnc::NodeKind::RawOutput: break;  // assumed by kilnc to leave the context as it was
        case kilnc::NodeKind::Render:
        case kilnc::NodeKind::Yield:
        case kilnc::NodeKind::Code: break;
    }
}

}  // namespace

std::string check_escaping(const kilnc::Template& tpl, uint64_t seed) {
    auto paths = TemplatePaths::read(tpl);
    if (!paths) return "";
    for (uint64_t k = 0; k < 3; ++k) {
        auto nodes = paths->run(seed + k, 2000);
        if (!nodes) continue;
        size_t values = 0, markup = 0;
        std::string plain, hostile;
        for (size_t i : *nodes) {
            const kilnc::Node& n = tpl.body[i];
            markup += prints_markup(n);
            values += n.kind == kilnc::NodeKind::Output && !prints_markup(n);
            print(plain, n, "a1");
            print(hostile, n, k == 1 ? kHostileOrigin : kHostileValue);
        }
        if (values + markup == 0) continue;
        Comparison page = compare_pages(plain, hostile, "data-kiln-markup");
        if (!page.judged) continue;
        std::string why = page.difference;
        if (!why.empty()) {
            // Where the hostile value escaped happens to equal literal text (a URL that
            // became "#" beside href="#"), the parser may treat the two pages apart
            // (formatting elements are matched by their attributes): a difference counts
            // only if a second plain value, "#", shows it too.
            std::string plain2;
            for (size_t i : *nodes) print(plain2, tpl.body[i], "#");
            if (compare_pages(plain2, hostile).difference.empty()) why.clear();
        }
        // Partials and a layout's content are markup: kilnc lets them stand only where
        // a browser reads markup, so each element printed must be one.
        if (why.empty() && markup > 0 && page.marked != markup)
            why = std::to_string(markup) + " partials or contents printed, but " + std::to_string(page.marked) +
                  " read as elements";
        if (!why.empty())
            return why + "\n--- with \"a1\":\n" + plain + "\n--- with the hostile value:\n" + hostile + "\n";
    }
    return "";
}

}  // namespace kiln::oracle
