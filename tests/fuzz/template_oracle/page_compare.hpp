// The template oracle's judge: two renderings of one run of a template, the same but
// for its values (a plain "a1" in one, a hostile string in the other, each escaped as
// kilnc chose), parsed by an HTML5 parser (Gumbo, tested against html5lib's suite;
// kilnc's own reading is tools/kilnc/html_state.cpp). An escaped value may change
// text, never markup, so the two documents must have the same shape:
//   - the same nodes: elements (name, namespace), their attributes (names, order),
//     text, comments and CDATA, the doctype;
//   - comments, CDATA, <style> text and style and srcdoc attributes (where kilnc
//     refuses values) unchanged;
//   - a script that runs (no type, or a JavaScript or JSON type), an on* attribute and
//     hx-vals: the same JavaScript tokens outside string literals (js_tokens.hpp);
//   - a URL attribute (href, src, action, ... and SVG's animated to/from/values) and a
//     refresh <meta>'s URL: the same scheme, and no value inside a javascript:,
//     vbscript: or data: URL; a script's src, a <base>'s href and a stylesheet
//     <link>'s href (also a preload as=style, or a link with a handler), the same origin.
// What a library reads from an attribute (Alpine's x-*, Vue's v-*, htmx's hx-*) is
// outside it. A plain page holding a NUL or a <frameset>, or nesting past 256 elements,
// is not judged (see compare_pages).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::oracle {

struct Comparison {
    bool judged = false;     // see above: false, and nothing else is set, for a page not judged
    std::string difference;  // empty when the pages agree; else what differs and where ("html > body > a[href]")
    size_t marked = 0;       // the plain page's HTML elements carrying the attribute `marker`
};

Comparison compare_pages(std::string_view plain, std::string_view hostile, const char* marker = nullptr);

}  // namespace kiln::oracle
