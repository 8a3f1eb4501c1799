// HTML escaping, the default for everything a view prints. Escapes & < > " ' so
// the result is safe in element text and in quoted attribute values.
#pragma once
#include <string>
#include <string_view>

namespace kiln {

void append_html_escaped(std::string& out, std::string_view text);
std::string html_escape(std::string_view text);

}  // namespace kiln
