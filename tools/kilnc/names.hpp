// Template names and the C++ names kilnc gives them (the mapping is documented in
// include/kiln/view.hpp): "posts/index" -> namespace posts, struct index, under the
// root namespace ("views"). Names are checked here so that generated code never holds
// an identifier the C++ compiler would misread. Pure functions.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::kilnc {

struct TemplateName {
    std::string path;                 // "posts/index": relative to the views root, no ".html"
    std::vector<std::string> scopes;  // C++ namespaces below the root: {"posts"}
    std::string ident;                // the struct: "index"
};

// Fills `out` from a name like "posts/index" or "posts/index.html"; on failure
// returns why the name is refused.
std::optional<std::string> map_template_name(std::string_view name, TemplateName& out);

// "::views::posts::index" for root namespace "views".
std::string qualified_name(std::string_view root_ns, const TemplateName& name);
// "views/posts/index.hpp": how generated code includes the template's header.
std::string header_include(std::string_view root_ns, const TemplateName& name);

bool is_cpp_keyword(std::string_view word);
bool is_identifier(std::string_view word);  // [A-Za-z_][A-Za-z0-9_]*

}  // namespace kiln::kilnc
