#include "kilnc/code_flow.hpp"

#include <string>

namespace kiln::kilnc {
namespace {

bool is_word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The first `n` words of a statement head (identifiers only; "} else if (" -> else, if).
std::vector<std::string_view> words(std::string_view head, size_t n) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (out.size() < n && i < head.size()) {
        while (i < head.size() && !is_word_char(head[i])) {
            if (head[i] != ' ' && head[i] != '\t' && head[i] != '\n' && head[i] != '\r') return out;
            ++i;
        }
        size_t start = i;
        while (i < head.size() && is_word_char(head[i])) ++i;
        if (i > start) out.push_back(head.substr(start, i - start));
    }
    return out;
}

Block classify(std::string_view head, bool in_parens) {
    // A '{' inside parentheses opens a lambda passed to a call (for_each(v, [&](x) {):
    // it may run any number of times.
    if (in_parens || head.find(']') != head.npos) return Block::Loop;
    std::vector<std::string_view> w = words(head, 2);
    if (w.empty()) return Block::Plain;
    if (w[0] == "if" || w[0] == "try") return Block::If;
    if (w[0] == "else") return w.size() > 1 && w[1] == "if" ? Block::ElseIf : Block::Else;
    if (w[0] == "catch") return Block::ElseIf;
    if (w[0] == "for" || w[0] == "while" || w[0] == "do") return Block::Loop;
    if (w[0] == "switch") return Block::Switch;
    return Block::Plain;
}

// Index just past the literal starting at code[i] (a '"' or '\'').
size_t skip_literal(std::string_view code, size_t i) {
    const char quote = code[i];
    // A raw string R"delim( ... )delim".
    if (quote == '"' && i > 0 && code[i - 1] == 'R') {
        size_t open = code.find('(', i);
        if (open == code.npos) return code.size();
        std::string close = ")" + std::string(code.substr(i + 1, open - i - 1)) + "\"";
        size_t end = code.find(close, open);
        return end == code.npos ? code.size() : end + close.size();
    }
    for (++i; i < code.size(); ++i) {
        if (code[i] == '\\') ++i;
        else if (code[i] == quote || code[i] == '\n') return i + 1;
    }
    return code.size();
}

}  // namespace

std::vector<FlowEvent> scan_code_flow(std::string_view code) {
    std::vector<FlowEvent> events;
    size_t head_start = 0;  // where the current statement's words begin
    int parens = 0;
    for (size_t i = 0; i < code.size();) {
        char c = code[i];
        if (c == '"' || (c == '\'' && !(i > 0 && is_word_char(code[i - 1]) && i + 1 < code.size() &&
                                       is_word_char(code[i + 1])))) {  // 1'000'000 is a number
            i = skip_literal(code, i);
            continue;
        }
        if (c == '/' && i + 1 < code.size() && code[i + 1] == '/') {
            size_t nl = code.find('\n', i);
            i = nl == code.npos ? code.size() : nl + 1;
            continue;
        }
        if (c == '/' && i + 1 < code.size() && code[i + 1] == '*') {
            size_t end = code.find("*/", i + 2);
            i = end == code.npos ? code.size() : end + 2;
            continue;
        }
        std::string_view head = code.substr(head_start, i - head_start);
        if (c == '(') {
            ++parens;
        } else if (c == ')') {
            if (parens > 0) --parens;
        } else if (c == '{') {
            events.push_back({FlowKind::Open, classify(head, parens > 0)});
            head_start = i + 1;
        } else if (c == '}') {
            events.push_back({FlowKind::Close});
            head_start = i + 1;
        } else if (c == ';' && parens == 0) {
            std::vector<std::string_view> w = words(head, 2);
            if (w.size() == 1 && w[0] == "break") events.push_back({FlowKind::Break});
            if (w.size() == 1 && w[0] == "continue") events.push_back({FlowKind::Continue});
            head_start = i + 1;
        } else if (c == ':' && parens == 0) {
            bool scope = (i + 1 < code.size() && code[i + 1] == ':') || (i > 0 && code[i - 1] == ':');
            std::vector<std::string_view> w = words(head, 1);
            if (!scope && !w.empty() && (w[0] == "case" || w[0] == "default")) {
                events.push_back({FlowKind::Case});
                head_start = i + 1;
            }
        }
        ++i;
    }
    return events;
}

}  // namespace kiln::kilnc
