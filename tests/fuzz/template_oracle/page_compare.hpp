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
// outside it.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::oracle {

// Empty when the pages agree; otherwise what differs and where ("html > body > a[href]").
std::string compare_pages(std::string_view plain, std::string_view hostile);

// How many elements of `page` carry the attribute `name`; nullopt in a <frameset> page,
// which drops the elements it does not know.
std::optional<size_t> count_elements_with(std::string_view page, const char* name);

}  // namespace kiln::oracle
