// Writes generated C++ while counting its lines, so that after each piece of user
// code from the template (announced with `#line N "template"`) a `#line` directive
// can hand the following lines back to the generated file at their true numbers.
// Invariant of the output: every run of template #line directives is closed by a
// generated-file one, which names the physical line that follows it.
#pragma once
#include <string>
#include <string_view>

#include "kilnc/template_model.hpp"

namespace kiln::kilnc {

class CppWriter {
public:
    // `own_path`: where this output will be written; `template_path`: the template,
    // both as the C++ compiler should print them.
    CppWriter(std::string_view own_path, std::string_view template_path);

    void put(std::string_view s);
    // User code at its template line and column, on lines of its own. Non-empty
    // `lead` and `tail` (generated code opening and closing a call around it) go on
    // lines before and after it, also attributed to the template line, so compiler
    // messages about the call point there too.
    void code(const CodeSpan& span, std::string_view lead = {}, std::string_view tail = {});
    // A line of generated text attributed to template line `line` (param members, includes).
    void at_template_line(int line, std::string_view text);
    std::string take() { return std::move(out_); }

private:
    void line_directive_template(int line);
    void line_directive_back();
    void put_user(std::string_view text);  // then a line break

    std::string out_;
    int line_ = 1;  // the physical line being written
    std::string own_, template_;  // quoted for #line
};

// `s` as adjacent C++ string literals, one per source line, each line after the
// first starting with `indent`. Bytes outside printable ASCII are octal escapes.
std::string string_literal(std::string_view s, std::string_view indent);

// `path` as the body of a C++ string literal ("\" and '"' escaped, controls dropped).
std::string quote_path(std::string_view path);

}  // namespace kiln::kilnc
