#include "kilnc/code_flow.hpp"

#include <string>

namespace kiln::kilnc {
namespace {

bool is_word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }  // C++'s whitespace

// Index just past the comment starting at code[i] (its newline, or its "*/"); i when
// none starts there.
size_t past_comment(std::string_view code, size_t i) {
    if (code.substr(i, 2) == "//") {
        size_t nl = code.find('\n', i);
        return nl == code.npos ? code.size() : nl + 1;
    }
    if (code.substr(i, 2) == "/*") {
        size_t end = code.find("*/", i + 2);
        return end == code.npos ? code.size() : end + 2;
    }
    return i;
}

// The first `n` words of a statement head (identifiers only; "} else if (" -> else, if).
std::vector<std::string_view> words(std::string_view head, size_t n) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (out.size() < n && i < head.size()) {
        while (i < head.size() && !is_word_char(head[i])) {
            if (size_t past = past_comment(head, i); past != i) {  // a comment is blank
                i = past;
                continue;
            }
            if (!is_blank(head[i])) return out;
            ++i;
        }
        size_t start = i;
        while (i < head.size() && is_word_char(head[i])) ++i;
        if (i > start) out.push_back(head.substr(start, i - start));
    }
    return out;
}

// The last character of `head` that is not blank or in a comment (0: none).
char last_char(std::string_view head) {
    char last = 0;
    for (size_t i = 0; i < head.size();) {
        if (size_t past = past_comment(head, i); past != i) {
            i = past;
            continue;
        }
        if (!is_blank(head[i])) last = head[i];
        ++i;
    }
    return last;
}

constexpr const char* kLambda =
    "a lambda's body cannot hold template text: kilnc escapes its values for where the lambda is written, not "
    "where it is called; use a partial (<%@ render %>) or a loop";
constexpr const char* kTry =
    "a try block cannot hold template text: a throw leaves what it wrote in whatever context it had reached "
    "(an open href, a <script>), and its catch would go on there; compute the value before the markup";

// What a '{' opens, from the head of its statement. `refused` says why the block must
// end within its own code block (nullptr: it may hold template text): a lambda, or a
// brace inside an expression, may run elsewhere than where it is written; a try may
// stop anywhere in its text.
Block classify(std::string_view head, bool in_parens, const char*& refused) {
    // A '{' inside parentheses is a lambda passed to a call (for_each(v, [&](x) {), or a
    // braced value (std::string{"x"}): it may run any number of times.
    refused = in_parens ? kLambda : nullptr;
    if (in_parens) return Block::Loop;
    std::vector<std::string_view> w = words(head, 2);
    if (w.empty()) return Block::Plain;
    if (w[0] == "try") refused = kTry;
    if (w[0] == "if" || w[0] == "try") return Block::If;
    if (w[0] == "else") return w.size() > 1 && w[1] == "if" ? Block::ElseIf : Block::Else;
    if (w[0] == "catch") return Block::ElseIf;
    if (w[0] == "for" || w[0] == "while" || w[0] == "do") return Block::Loop;
    if (w[0] == "switch") return Block::Switch;
    if (head.find(']') != head.npos) {
        refused = kLambda;  // auto row = [&](const Post& p) {
        return Block::Loop;
    }
    // Some other head that ends in its parenthesis (a macro: FOREACH(p, posts) {) may
    // run its block any number of times.
    return last_char(head) == ')' ? Block::Loop : Block::Plain;
}

bool is_word(std::string_view head, std::string_view word) {
    for (size_t at = head.find(word); at != head.npos; at = head.find(word, at + 1)) {
        bool starts = at == 0 || !is_word_char(head[at - 1]);
        bool ends = at + word.size() == head.size() || !is_word_char(head[at + word.size()]);
        if (starts && ends) return true;
    }
    return false;
}

// The last identifier of a statement head ("if (x) break" -> "break").
std::string_view last_word(std::string_view head) {
    size_t end = head.size();
    while (end > 0 && is_blank(head[end - 1])) --end;
    size_t start = end;
    while (start > 0 && is_word_char(head[start - 1])) --start;
    return head.substr(start, end - start);
}

// The event of a statement ended by ';' (none: kind Open, which the caller skips).
FlowEvent statement(std::string_view head) {
    std::vector<std::string_view> w = words(head, 1);
    if (w.empty()) return {FlowKind::Open};
    if (w[0] == "return") return {FlowKind::Return};
    if (w[0] == "break" && last_word(head) == "break") return {FlowKind::Break};
    if (w[0] == "continue" && last_word(head) == "continue") return {FlowKind::Continue};
    if (last_word(head) == "break") return {FlowKind::MaybeBreak};
    if (last_word(head) == "continue") return {FlowKind::MaybeContinue};
    if (is_word(head, "return")) return {FlowKind::MaybeReturn};  // if (x) return; (a lambda's too: safe)
    return {FlowKind::Open};
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
    std::vector<const char*> open;  // the blocks this code opens and has not closed: why each must close here
    for (size_t i = 0; i < code.size();) {
        char c = code[i];
        if (c == '"' || (c == '\'' && !(i > 0 && is_word_char(code[i - 1]) && i + 1 < code.size() &&
                                       is_word_char(code[i + 1])))) {  // 1'000'000 is a number
            i = skip_literal(code, i);
            continue;
        }
        if (size_t past = past_comment(code, i); past != i) {
            i = past;
            continue;
        }
        std::string_view head = code.substr(head_start, i - head_start);
        if (c == '(') {
            ++parens;
        } else if (c == ')') {
            if (parens > 0) --parens;
        } else if (c == '{') {
            const char* refused = nullptr;
            events.push_back({FlowKind::Open, classify(head, parens > 0, refused)});
            open.push_back(refused);
            if (parens == 0) head_start = i + 1;  // (inside a condition, the head goes on)
        } else if (c == '}') {
            events.push_back({FlowKind::Close});
            if (!open.empty()) open.pop_back();
            if (parens == 0) head_start = i + 1;
        } else if (c == ';' && parens == 0) {
            if (FlowEvent e = statement(head); e.kind != FlowKind::Open) events.push_back(e);
            if (is_word(head, "goto"))
                events.push_back({FlowKind::Refused, Block::Plain, "goto in a template's code cannot be followed: use "
                                                                   "an if or a loop"});
            head_start = i + 1;
        } else if (c == '#') {
            std::vector<std::string_view> d = words(code.substr(i + 1, 16), 1);
            if (!d.empty() && (d[0] == "if" || d[0] == "ifdef" || d[0] == "ifndef" || d[0] == "else" ||
                               d[0] == "elif" || d[0] == "endif"))
                events.push_back({FlowKind::Refused, Block::Plain,
                                  "a preprocessor conditional in a template's code cannot be followed: use an if"});
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
    // A lambda whose body holds template text writes it where it is called, a context
    // kilnc never sees; a try's catch goes on from wherever the throw came.
    for (const char* why : open)
        if (why) {
            events.push_back({FlowKind::Refused, Block::Plain, why});
            break;
        }
    // A block that ends in a control statement without its '{': the template text after
    // the block is what it governs (<% if (x) %> title="<%= t %>"), which kilnc would
    // follow as if it always ran.
    std::vector<std::string_view> tail = words(code.substr(head_start), 1);
    if (!tail.empty() && (tail[0] == "if" || tail[0] == "else" || tail[0] == "for" || tail[0] == "while" ||
                          tail[0] == "do" || tail[0] == "switch"))
        events.push_back({FlowKind::Refused, Block::Plain,
                          "this code block ends in a control statement without its '{': the template text after it "
                          "would be what it governs; write <% if (...) { %> ... <% } %>"});
    return events;
}

}  // namespace kiln::kilnc
