// Checks a page's layout before any C++ is generated, so the mistakes are reported at
// the layout directive: the layout exists, it is a layout (it yields), and following
// layouts from it never comes back to the page (which would recurse forever at run
// time). Other templates are read through the loader; a layout that fails to lex is
// left for its own compilation to report.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "kilnc/loader.hpp"

namespace kiln::kilnc {

struct LayoutInfo {
    bool yields = false;                // has <%@ yield %> or <%= content %> / <%== content %>
    std::optional<std::string> layout;  // its own layout's name, as written
};

// nullopt if the source does not lex.
std::optional<LayoutInfo> scan_layout_info(std::string_view source);

// `self` uses layout `layout` (both names without ".html"); returns what is wrong.
std::optional<std::string> check_layout_chain(const std::string& self, const std::string& layout,
                                              const TemplateLoader& load);

// True for the expression "content" (spaces around allowed): a layout printing its page.
bool is_content_expression(std::string_view code);

}  // namespace kiln::kilnc
