#include "kilnc/line_check.hpp"

#include <charconv>

#include "kilnc/cpp_writer.hpp"

namespace kiln::kilnc {

std::optional<std::string> check_line_directives(std::string_view generated, std::string_view own_path,
                                                 std::string_view template_path, int template_lines) {
    const std::string own = "\"" + quote_path(own_path) + "\"", tpl = "\"" + quote_path(template_path) + "\"";
    bool in_template_run = false;
    int physical = 0;
    size_t start = 0;
    while (start < generated.size()) {
        size_t end = generated.find('\n', start);
        if (end == generated.npos) end = generated.size();
        std::string_view line = generated.substr(start, end - start);
        start = end + 1;
        ++physical;
        if (line.substr(0, 6) != "#line ") continue;
        std::string at = "line " + std::to_string(physical) + ": ";
        int n = 0;
        auto [p, ec] = std::from_chars(line.data() + 6, line.data() + line.size(), n);
        if (ec != std::errc() || p == line.data() + line.size() || *p != ' ') return at + "no line number";
        std::string_view file = line.substr(static_cast<size_t>(p - line.data()) + 1);
        if (file == tpl) {
            if (n < 1 || n > template_lines) return at + "template line " + std::to_string(n) + " out of range";
            in_template_run = true;
        } else if (file == own) {
            if (!in_template_run) return at + "generated-file #line without a template one before it";
            if (n != physical + 1) return at + "names line " + std::to_string(n) + ", next line is " +
                                          std::to_string(physical + 1);
            in_template_run = false;
        } else {
            return at + "#line names an unknown file";
        }
    }
    if (in_template_run) return std::string("the last #line names the template");
    return std::nullopt;
}

}  // namespace kiln::kilnc
