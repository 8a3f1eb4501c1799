// Positions and errors of the template compiler. Every error kilnc reports is one
// Diagnostic: a 1-based line and byte column in the template and a message, printed
// as "path:line:col: error: message" (the GNU format editors and IDEs jump to).
#pragma once
#include <string>
#include <string_view>

namespace kiln::kilnc {

struct Pos {
    int line = 1;
    int col = 1;
};

struct Diagnostic {
    Pos pos;
    std::string message;
};

inline std::string format_diagnostic(std::string_view path, const Diagnostic& d) {
    return std::string(path) + ":" + std::to_string(d.pos.line) + ":" + std::to_string(d.pos.col) +
           ": error: " + d.message;
}

}  // namespace kiln::kilnc
