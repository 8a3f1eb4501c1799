// Template source -> Template (template_model.hpp), or the first error with its
// position. Checks everything kilnc can check without a C++ compiler: directive
// syntax and placement (param, include and layout come before any content),
// parameter names, that layouts and partials exist (through the loader), and the HTML
// context of every <%= %>, which picks its escaper (escape_contexts.hpp).
// Pure apart from the loader.
#pragma once
#include <optional>
#include <string_view>

#include "kilnc/diagnostic.hpp"
#include "kilnc/loader.hpp"
#include "kilnc/template_model.hpp"

namespace kiln::kilnc {

struct ParseResult {
    Template tpl;
    std::optional<Diagnostic> error;  // set: tpl is incomplete
};

// `name` is the template's path under the views directory ("posts/index.html").
ParseResult parse_template(std::string_view source, std::string_view name, const TemplateLoader& load);

}  // namespace kiln::kilnc
