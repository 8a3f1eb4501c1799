#include "kilnc/names.hpp"

#include <algorithm>
#include <iterator>

namespace kiln::kilnc {
namespace {

constexpr std::string_view kKeywords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case",
    "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval",
    "constexpr", "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype",
    "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern",
    "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new",
    "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
    "register", "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true",
    "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
    "wchar_t", "while", "xor", "xor_eq",
};

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// One path segment to one identifier; returns why not.
std::optional<std::string> map_segment(std::string_view seg, std::string& out) {
    if (seg.empty()) return "empty path segment";
    if (seg.front() == '.') return "path segment '" + std::string(seg) + "' starts with '.'";
    out.clear();
    if (is_digit(seg.front())) out += '_';
    for (char c : seg) {
        if (is_alpha(c) || is_digit(c) || c == '_') out += c;
        else if (c == '-' || c == '.') out += '_';
        else return "names may hold only letters, digits, '_', '-' and '.' (found '" + std::string(1, c) + "')";
    }
    if ((out.size() > 1 && out[0] == '_' && out[1] >= 'A' && out[1] <= 'Z') || out.find("__") != out.npos)
        return "'" + std::string(seg) + "' would become the reserved C++ identifier '" + out + "'";
    if (is_cpp_keyword(out) || out == "std" || out == "kiln") out += '_';
    return std::nullopt;
}

}  // namespace

bool is_cpp_keyword(std::string_view word) {
    return std::find(std::begin(kKeywords), std::end(kKeywords), word) != std::end(kKeywords);
}

bool is_identifier(std::string_view word) {
    if (word.empty() || !(is_alpha(word[0]) || word[0] == '_')) return false;
    return std::all_of(word.begin(), word.end(), [](char c) { return is_alpha(c) || is_digit(c) || c == '_'; });
}

std::optional<std::string> map_template_name(std::string_view name, TemplateName& out) {
    if (name.size() >= 5 && name.substr(name.size() - 5) == ".html") name.remove_suffix(5);
    if (name.empty()) return "empty template name";
    if (name.front() == '/') return "template name '" + std::string(name) + "' must be relative to the views directory";
    out = TemplateName{};
    out.path.assign(name);
    size_t start = 0;
    while (true) {
        size_t slash = name.find('/', start);
        std::string_view seg = name.substr(start, slash == name.npos ? name.npos : slash - start);
        std::string ident;
        if (auto err = map_segment(seg, ident)) return "bad template name '" + std::string(name) + "': " + *err;
        if (slash == name.npos) {
            out.ident = std::move(ident);
            return std::nullopt;
        }
        out.scopes.push_back(std::move(ident));
        start = slash + 1;
    }
}

std::string qualified_name(std::string_view root_ns, const TemplateName& name) {
    std::string q = "::" + std::string(root_ns);
    for (const auto& s : name.scopes) q += "::" + s;
    return q + "::" + name.ident;
}

std::string header_include(std::string_view root_ns, const TemplateName& name) {
    return std::string(root_ns) + "/" + name.path + ".hpp";
}

}  // namespace kiln::kilnc
