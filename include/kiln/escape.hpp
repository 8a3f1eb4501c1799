// Escaping for each context a view prints into. HTML text and quoted attribute values
// (& < > " ' as entities) are the default; kilnc picks the others from the HTML around
// a <%= %> (see kiln/view.hpp): URL components, the whole value of a URL attribute,
// JavaScript string literals. Pure functions; they only append to `out`.
#pragma once
#include <string>
#include <string_view>

namespace kiln {

void append_html_escaped(std::string& out, std::string_view text);
std::string html_escape(std::string_view text);

// Percent-encodes every byte but A-Z a-z 0-9 - . _ ~: one URL component (a path
// segment, a query name or value, a fragment), so "a&b=c" cannot start a parameter.
// The result holds no byte that HTML or URLs treat specially.
void append_url_component(std::string& out, std::string_view text);

// The whole value of a URL attribute: `url` HTML-escaped if is_safe_href(url) (its
// scheme, if any, is http, https, mailto or tel), else "#" (javascript:, data:, ...).
void append_safe_url(std::string& out, std::string_view url);

// `text` as a JavaScript (and JSON) string literal between two `quote`s: "\"" in a
// script, "&quot;" in an event-handler attribute. Every byte that could end the literal,
// a comment, a regex or the surrounding HTML is a backslash escape (" ' ` \ / < > & $,
// control bytes, U+2028 and U+2029), so between the quotes there is none of " ' < > &
// and no line break: "</script>" cannot close the element.
void append_js_string(std::string& out, std::string_view text, std::string_view quote);

}  // namespace kiln
