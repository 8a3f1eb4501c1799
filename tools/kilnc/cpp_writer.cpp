#include "kilnc/cpp_writer.hpp"

#include <algorithm>

namespace kiln::kilnc {

CppWriter::CppWriter(std::string_view own_path, std::string_view template_path)
    : own_(quote_path(own_path)), template_(quote_path(template_path)) {}

void CppWriter::put(std::string_view s) {
    out_.append(s);
    line_ += static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

void CppWriter::line_directive_template(int line) {
    put("#line " + std::to_string(line) + " \"" + template_ + "\"\n");
}

void CppWriter::line_directive_back() {
    // Written on physical line line_; the next line is line_ + 1.
    put("#line " + std::to_string(line_ + 1) + " \"" + own_ + "\"\n");
}

void CppWriter::put_user(std::string_view text) {
    std::string copy(text);
    // A lone CR ends a line for the C++ compiler but not for the line count.
    for (size_t i = 0; i < copy.size(); ++i)
        if (copy[i] == '\r' && (i + 1 == copy.size() || copy[i + 1] != '\n')) copy[i] = ' ';
    put(copy);
    put("\n");
    // A trailing backslash (even before blanks) splices the next line: give it an
    // empty one so the #line after it stays a directive.
    std::string_view c = copy;
    while (!c.empty() && (c.back() == ' ' || c.back() == '\t' || c.back() == '\r')) c.remove_suffix(1);
    if (!c.empty() && c.back() == '\\') put("\n");
}

void CppWriter::code(const CodeSpan& span, std::string_view lead, std::string_view tail) {
    if (!lead.empty()) {
        line_directive_template(span.pos.line);
        put(lead);
        put("\n");
    }
    line_directive_template(span.pos.line);
    put(span.indent);
    put_user(span.code);
    if (!tail.empty()) {
        line_directive_template(span.pos.line);
        put(tail);
        put("\n");
    }
    line_directive_back();
}

void CppWriter::at_template_line(int line, std::string_view text) {
    line_directive_template(line);
    put_user(text);
    line_directive_back();
}

std::string string_literal(std::string_view s, std::string_view indent) {
    static constexpr char kOctal[] = "01234567";
    std::string out = "\"";
    for (size_t i = 0; i < s.size(); ++i) {
        auto b = static_cast<unsigned char>(s[i]);
        switch (s[i]) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\t': out += "\\t"; break;
            case '?': out += (i + 1 < s.size() && s[i + 1] == '?') ? "\\?" : "?"; break;  // no trigraphs
            case '\n':
                out += "\\n\"";
                if (i + 1 < s.size()) {
                    out += "\n";
                    out += indent;
                    out += "\"";
                } else {
                    return out;
                }
                break;
            default:
                if (b < 0x20 || b >= 0x7f) {
                    out += '\\';
                    out += kOctal[b >> 6];
                    out += kOctal[(b >> 3) & 7];
                    out += kOctal[b & 7];
                } else {
                    out += s[i];
                }
        }
    }
    return out + "\"";
}

std::string quote_path(std::string_view path) {
    std::string out;
    for (char c : path) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) continue;
        if (c == '\\' || c == '"') out += '\\';
        out += c;
    }
    return out;
}

}  // namespace kiln::kilnc
