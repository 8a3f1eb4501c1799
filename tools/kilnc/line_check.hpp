// Checks the #line invariant of generated code (see cpp_writer.hpp), for the fuzzer
// and the codegen tests: directives come in runs naming the template, each closed by
// one naming the generated file, whose number is the physical line that follows it;
// template line numbers lie within the template.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace kiln::kilnc {

// nullopt if `generated` (written to `own_path`, from a template of `template_lines`
// lines at `template_path`) keeps the invariant; otherwise what breaks it.
std::optional<std::string> check_line_directives(std::string_view generated, std::string_view own_path,
                                                 std::string_view template_path, int template_lines);

}  // namespace kiln::kilnc
