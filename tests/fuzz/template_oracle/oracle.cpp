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

// What the generated code prints for one node, given the value every <%= %> holds.
void print(std::string& out, const kilnc::Node& n, std::string_view value) {
    using kilnc::Escaper;
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
        case kilnc::NodeKind::Render:  // markup: an element (one a <select> keeps), and the value as text
        case kilnc::NodeKind::Yield:
            out += "<option data-kiln-markup>";
            append_html_escaped(out, value);
            out += "</option>";
            break;
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
            values += n.kind == kilnc::NodeKind::Output;
            markup += n.kind == kilnc::NodeKind::Render || n.kind == kilnc::NodeKind::Yield;
            print(plain, n, "a1");
            print(hostile, n, k == 1 ? kHostileOrigin : kHostileValue);
        }
        if (values + markup == 0) continue;
        std::string why = compare_pages(plain, hostile);
        // Partials and a layout's content are markup: kilnc lets them stand only where
        // a browser reads markup, so each element printed must be one.
        if (why.empty() && markup > 0)
            if (auto elements = count_elements_with(plain, "data-kiln-markup"); elements && *elements != markup)
                why = std::to_string(markup) + " partials or contents printed, but " + std::to_string(*elements) +
                      " read as elements";
        if (!why.empty())
            return why + "\n--- with \"a1\":\n" + plain + "\n--- with the hostile value:\n" + hostile + "\n";
    }
    return "";
}

}  // namespace kiln::oracle
