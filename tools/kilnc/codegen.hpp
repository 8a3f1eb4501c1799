// Template -> C++: one header (the template's struct: its parameters as members and
// render()) and one source (render()'s body). Literal HTML is appended with as few
// append calls as the template allows; each <%= %> calls the kiln::view escaper its
// HTML context chose (Node::escaper); every piece of user C++ is wrapped in #line
// directives so the C++ compiler's messages name the template's file and line.
// Pure: the caller writes the files.
#pragma once
#include <string>

#include "kilnc/template_model.hpp"

namespace kiln::kilnc {

struct CodegenOptions {
    std::string root_ns = "views";  // namespace and include directory of all templates
    std::string template_path;      // the template, as compiler messages should show it
    std::string header_path;        // where the header will be written
    std::string source_path;        // where the source will be written
};

struct Generated {
    std::string header;
    std::string source;
};

Generated generate(const Template& tpl, const CodegenOptions& options);

}  // namespace kiln::kilnc
