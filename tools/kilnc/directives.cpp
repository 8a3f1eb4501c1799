#include "kilnc/directives.hpp"

namespace kiln::kilnc {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The first '=' outside brackets that is an assignment (not ==, <=, >=, !=).
size_t find_default_sign(std::string_view s) {
    int depth = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c == '(' || c == '[' || c == '{' || c == '<') ++depth;
        else if (c == ')' || c == ']' || c == '}' || c == '>') --depth;
        else if (c == '=' && depth == 0) {
            bool compound = (i + 1 < s.size() && s[i + 1] == '=') ||
                            (i > 0 && (s[i - 1] == '<' || s[i - 1] == '>' || s[i - 1] == '!' || s[i - 1] == '='));
            if (!compound) return i;
        }
    }
    return s.npos;
}

const char kParamUsage[] =
    "malformed param: expected <%@ param TYPE NAME %> or <%@ param TYPE NAME = DEFAULT %>";

}  // namespace

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

DirectiveHead split_directive(std::string_view text) {
    size_t i = 0;
    while (i < text.size() && is_space(text[i])) ++i;
    size_t start = i;
    while (i < text.size() && is_ident_char(text[i])) ++i;
    return {text.substr(start, i - start), i};
}

bool is_reserved_param_name(std::string_view name) {
    return name == "render" || name == "render_body" || name == "content" || name.substr(0, 5) == "kiln_";
}

std::optional<std::string> parse_param(std::string_view args, Param& out) {
    args = trim(args);
    if (args.find(';') != args.npos) return std::string(kParamUsage) + " (no ';')";
    size_t eq = find_default_sign(args);
    std::string_view decl = trim(args.substr(0, eq));
    std::string_view def = eq == args.npos ? std::string_view() : trim(args.substr(eq + 1));
    size_t n = decl.size();
    while (n > 0 && is_ident_char(decl[n - 1])) --n;
    std::string_view name = decl.substr(n), type = trim(decl.substr(0, n));
    if (name.empty() || type.empty() || !is_identifier(name)) return std::string(kParamUsage);
    char last = type.back();
    if (!(is_ident_char(last) || last == '>' || last == '*' || last == '&')) return std::string(kParamUsage);
    if (is_cpp_keyword(name)) return "parameter name '" + std::string(name) + "' is a C++ keyword";
    if (is_reserved_param_name(name))
        return "parameter name '" + std::string(name) + "' is reserved by kilnc (render, render_body, content, kiln_*)";
    if (eq != args.npos && def.empty()) return "param '" + std::string(name) + "' has '=' but no default value";
    if (type.size() >= 2 && type.substr(type.size() - 2) == "&&")
        return "param '" + std::string(name) + "': rvalue references are not supported; take it by value or const&";
    if (last == '&' && !def.empty())
        return "param '" + std::string(name) + "': a reference parameter cannot have a default value";
    out.type.assign(type);
    out.name.assign(name);
    out.default_value.assign(def);
    return std::nullopt;
}

std::optional<std::string> parse_include(std::string_view args, std::string& target) {
    args = trim(args);
    bool quoted = args.size() > 2 && args.front() == '"' && args.back() == '"' &&
                  args.substr(1, args.size() - 2).find_first_of("\"\n\r") == args.npos;
    bool angled = args.size() > 2 && args.front() == '<' && args.back() == '>' &&
                  args.substr(1, args.size() - 2).find_first_of("<>\n\r") == args.npos;
    if (!quoted && !angled) return "malformed include: expected <%@ include \"file.hpp\" %> or <%@ include <header> %>";
    target.assign(args);
    return std::nullopt;
}

std::optional<std::string> parse_template_ref(std::string_view what, std::string_view args, std::string& name,
                                              size_t& init_offset) {
    size_t i = 0;
    while (i < args.size() && is_space(args[i])) ++i;
    size_t close = i < args.size() && args[i] == '"' ? args.find('"', i + 1) : args.npos;
    if (close == args.npos || close == i + 1 || args.substr(i + 1, close - i - 1).find('\n') != args.npos)
        return "malformed " + std::string(what) + ": expected <%@ " + std::string(what) +
               " \"name\" %>, optionally followed by designated initializers (.title = title)";
    name.assign(args.substr(i + 1, close - i - 1));
    init_offset = close + 1;
    return std::nullopt;
}

}  // namespace kiln::kilnc
