#include "kilnc/code_flow.hpp"

#include <algorithm>
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

// Index just past the attribute ("[[likely]]") starting at code[i]; i when none starts
// there. (No statement or head begins with "[[" otherwise.)
size_t past_attribute(std::string_view code, size_t i) {
    if (code.substr(i, 2) != "[[") return i;
    size_t end = code.find("]]", i + 2);
    return end == code.npos ? code.size() : end + 2;
}

// Whether code[i] opens a string or character literal: a '"', or a '\'' that is not a
// digit separator inside a number (1'000'000, 0xFF'FF; but L'x', u8'x', case'a').
bool starts_literal(std::string_view code, size_t i) {
    if (code[i] == '"') return true;
    if (code[i] != '\'') return false;
    size_t token = i;
    while (token > 0 && (is_word_char(code[token - 1]) || code[token - 1] == '.' || code[token - 1] == '\'')) --token;
    const bool in_number = token < i && code[token] >= '0' && code[token] <= '9';
    return !(in_number && i + 1 < code.size() && is_word_char(code[i + 1]));
}

// The first `n` words of a statement head (identifiers only; "} else if (" -> else, if),
// comments and attributes read as blanks.
std::vector<std::string_view> words(std::string_view head, size_t n) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (out.size() < n && i < head.size()) {
        while (i < head.size() && !is_word_char(head[i])) {
            size_t past = past_comment(head, i);
            if (past == i) past = past_attribute(head, i);
            if (past != i) {
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

bool is_control(std::string_view w) {
    return w == "if" || w == "else" || w == "for" || w == "while" || w == "do" || w == "switch" || w == "try" ||
           w == "catch";
}

constexpr const char* kLambda =
    "a lambda's body cannot hold template text: kilnc escapes its values for where the lambda is written, not "
    "where it is called; use a partial (<%@ render %>) or a loop";
constexpr const char* kTry =
    "a try block or its catch cannot hold template text: a throw leaves what the try wrote in whatever context "
    "it had reached (an open href, a <script>), and the catch would go on there; compute the value before the "
    "markup";
constexpr const char* kCatch = "catch";  // a catch: refused as kTry when its try wrote to the page (kiln_out)
constexpr const char* kCompound =
    "kilnc follows one control statement per '{' (if, else if, else, for, while, do, switch): this block's head "
    "holds more (`if (a) for (...) {`) or words around one (a label, a macro), so how often its template text runs "
    "cannot be told; write a '{' for each: <% if (a) { for (...) { %> ... <% } } %>";
constexpr const char* kLocalClass =
    "a local class's body cannot hold template text: its member functions write it wherever they are called, a "
    "context kilnc does not see; use a partial (<%@ render %>)";

// The words of a statement head outside parentheses, brackets and braces ("if (a) for
// (auto& x : v)" -> if, for), comments, literals and attributes skipped.
std::vector<std::string_view> top_words(std::string_view head);

// Whether a ']' stands in `code` outside comments, literals and attributes: a lambda's
// introducer ([&]).
bool has_bracket(std::string_view code);

// What a '{' opens, from the head of its statement. `refused` says why the block must
// end within its own code block (nullptr: it may hold template text): a lambda, or a
// brace inside an expression, may run elsewhere than where it is written; a try may
// stop anywhere in its text; a head kilnc cannot read as one control statement may run
// its block any number of times, in ways the kinds below do not say.
Block classify(std::string_view head, bool in_parens, const char*& refused) {
    // A '{' inside parentheses is a lambda passed to a call (for_each(v, [&](x) {), or a
    // braced value (std::string{"x"}): it may run any number of times.
    refused = in_parens ? kLambda : nullptr;
    if (in_parens) return Block::Loop;
    std::vector<std::string_view> w = top_words(head);
    if (std::find_if(w.begin(), w.end(), is_control) != w.end()) {
        // One control statement: its keyword first, else before if, constexpr or
        // consteval after it.
        const bool qualified = w.size() > 1 && w[w.size() - 2] == "if" && (w.back() == "constexpr" || w.back() == "consteval");
        const size_t n = w.size() - qualified;
        const bool one = n == 1 || (n == 2 && w[0] == "else" && w[1] == "if");
        if (!one || !is_control(w[0])) {
            refused = kCompound;
            return Block::Loop;
        }
        if (w[0] == "try") refused = kTry;
        if (w[0] == "if" || w[0] == "try") return Block::If;
        if (w[0] == "else") return n == 2 ? Block::ElseIf : Block::Else;
        if (w[0] == "catch") {
            refused = kCatch;  // (the caller knows whether its try wrote)
            return Block::ElseIf;
        }
        if (w[0] == "switch") return Block::Switch;
        return Block::Loop;  // for, while, do
    }
    // A local class's member functions, like a lambda, run where they are called (and
    // their return is theirs): any number of times.
    if (!w.empty() && (w[0] == "struct" || w[0] == "class" || w[0] == "union")) {
        refused = kLocalClass;  // struct Row { void print() const {
        return Block::Loop;
    }
    if (has_bracket(head)) {
        refused = kLambda;  // auto row = [&](const Post& p) {, or row{[&] {
        return Block::Loop;
    }
    if (w.empty()) return Block::Plain;
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

// The events of a statement ended by ';'. An unbraced `if (x) ...;` or `else ...;` is a
// branch of its own (Open, its jump, Close), empty of template text, so that an `else`
// after it belongs to its chain: without it, `} else if (b) n++; else {` read as the
// chain's last branch dropped the path where no branch writes.
void statement(std::string_view head, std::vector<FlowEvent>& events) {
    std::vector<std::string_view> w = words(head, 2);
    if (w.empty()) return;
    const bool branch = w[0] == "if" || w[0] == "else";
    if (branch)
        events.push_back({FlowKind::Open, w[0] == "if"                    ? Block::If
                                          : w.size() > 1 && w[1] == "if" ? Block::ElseIf
                                                                         : Block::Else});
    const std::string_view last = last_word(head);
    if (w[0] == "return") events.push_back({FlowKind::Return});
    else if (w[0] == "break" && last == "break") events.push_back({FlowKind::Break});
    else if (w[0] == "continue" && last == "continue") events.push_back({FlowKind::Continue});
    else if (last == "break") events.push_back({FlowKind::MaybeBreak});
    else if (last == "continue") events.push_back({FlowKind::MaybeContinue});
    else if (is_word(head, "return")) events.push_back({FlowKind::MaybeReturn});  // if (x) return; (a lambda's: safe)
    if (branch) events.push_back({FlowKind::Close});
}

// Index just past the literal starting at code[i] (a '"' or '\''); `closed` is false
// when the code ends inside it, or its line does.
size_t skip_literal(std::string_view code, size_t i, bool& closed) {
    const char quote = code[i];
    closed = false;
    // A raw string R"delim( ... )delim".
    if (quote == '"' && i > 0 && code[i - 1] == 'R') {
        size_t open = code.find('(', i);
        if (open == code.npos) return code.size();
        std::string close = ")" + std::string(code.substr(i + 1, open - i - 1)) + "\"";
        size_t end = code.find(close, open);
        closed = end != code.npos;
        return end == code.npos ? code.size() : end + close.size();
    }
    for (++i; i < code.size(); ++i) {
        if (code[i] == '\\') {
            ++i;
        } else if (code[i] == quote || code[i] == '\n') {
            closed = code[i] == quote;
            return i + 1;
        }
    }
    return code.size();
}

// Index just past the comment, attribute or literal starting at code[i]; i when none
// starts there.
size_t past_skipped(std::string_view code, size_t i) {
    size_t past = past_comment(code, i);
    if (past == i) past = past_attribute(code, i);
    if (past == i && starts_literal(code, i)) {
        bool closed;
        past = skip_literal(code, i, closed);
    }
    return past;
}

std::vector<std::string_view> top_words(std::string_view head) {
    std::vector<std::string_view> out;
    int depth = 0;
    for (size_t i = 0; i < head.size();) {
        const char c = head[i];
        if (size_t past = past_skipped(head, i); past != i) {
            i = past;
        } else if (is_word_char(c)) {
            const size_t start = i;
            while (i < head.size() && is_word_char(head[i])) ++i;
            if (depth == 0) out.push_back(head.substr(start, i - start));
        } else {
            if (c == '(' || c == '[' || c == '{') ++depth;
            else if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
            ++i;
        }
    }
    return out;
}

bool has_bracket(std::string_view code) {
    for (size_t i = 0; i < code.size();) {
        if (size_t past = past_skipped(code, i); past != i) {
            i = past;
        } else if (code[i++] == ']') {
            return true;
        }
    }
    return false;
}

// Whether a backslash ends a line of the code (blanks may follow it): the compiler joins
// the next line to it, so a // comment goes on there, which a scan line by line misses.
bool splices_lines(std::string_view code) {
    for (size_t at = code.find('\\'); at != code.npos; at = code.find('\\', at + 1)) {
        size_t k = at + 1;
        while (k < code.size() && (code[k] == ' ' || code[k] == '\t' || code[k] == '\r')) ++k;
        if (k < code.size() && code[k] == '\n') return true;
    }
    return false;
}

}  // namespace

std::vector<FlowEvent> scan_code_flow(std::string_view code) {
    std::vector<FlowEvent> events;
    auto refuse = [&](const char* why) { events.push_back({FlowKind::Refused, Block::Plain, why}); };
    if (splices_lines(code))
        refuse("a backslash at the end of a line joins the next line to it (a // comment goes on there): kilnc reads "
               "the code as the compiler does only without it");
    size_t head_start = 0;  // where the current statement's words begin
    // The statement's first word (case, default), found when its first character is.
    std::string_view first_word;
    bool first_seen = false;
    int parens = 0;
    // The blocks this code opens and has not closed: why each must close here (nullptr:
    // it need not), where it begins, and whether it is a try.
    struct OpenBlock {
        const char* why;
        size_t at;
        bool is_try;
    };
    std::vector<OpenBlock> open;
    bool try_wrote = false;  // the last try closed in this code wrote to the page itself (render(kiln_out))
    auto next_statement = [&](size_t at) {
        head_start = at;
        first_word = {};
        first_seen = false;
    };
    for (size_t i = 0; i < code.size();) {
        char c = code[i];
        if (starts_literal(code, i)) {
            bool closed;
            i = skip_literal(code, i, closed);
            if (!closed) refuse("a string or character literal that its line or code block does not close");
            continue;
        }
        if (size_t past = past_comment(code, i); past != i) {
            if (code.substr(i, 2) == "/*" && code.find("*/", i + 2) == code.npos)
                refuse("a /* comment that its code block does not close: what the compiler skips would not be what "
                       "kilnc follows");
            i = past;
            continue;
        }
        if (!first_seen && !is_blank(c)) {
            if (size_t past = past_attribute(code, i); past != i) {  // [[likely]] case 1:
                i = past;
                continue;
            }
            first_seen = true;
            if (is_word_char(c)) {
                size_t end = i;
                while (end < code.size() && is_word_char(code[end])) ++end;
                first_word = code.substr(i, end - i);
            }
        }
        // (<:: before anything but ':' or '>' is '<' then '::', as in vector<::T>.)
        const std::string_view two = code.substr(i, 2);
        const bool scope_after_less = code.substr(i, 3) == "<::" && i + 3 < code.size() && code[i + 3] != ':' &&
                                      code[i + 3] != '>';
        if (two == "<%" || two == "%>" || two == "%:" || two == ":>" || (two == "<:" && !scope_after_less))
            refuse("a digraph (<% for '{', %> for '}', %: for '#', <: and :> for '[' and ']') in a template's code: "
                   "write what it stands for, which kilnc follows");
        std::string_view head = code.substr(head_start, i - head_start);
        if (c == '(') {
            ++parens;
        } else if (c == ')') {
            if (parens > 0) --parens;
        } else if (c == '{') {
            const char* refused = nullptr;
            events.push_back({FlowKind::Open, classify(head, parens > 0, refused)});
            // A catch goes on where a throw left its try's output: refused only when
            // that try wrote some (its template text is refused by itself).
            const bool is_try = refused == kTry;
            if (refused == kCatch) refused = try_wrote ? kTry : nullptr;
            open.push_back({refused, i, is_try});
            if (parens == 0) next_statement(i + 1);  // (inside a condition, the head goes on)
        } else if (c == '}') {
            events.push_back({FlowKind::Close});
            if (!open.empty()) {
                if (open.back().is_try) try_wrote = is_word(code.substr(open.back().at, i - open.back().at), "kiln_out");
                open.pop_back();
            }
            if (parens == 0) next_statement(i + 1);
        } else if (c == ';' && parens == 0) {
            statement(head, events);
            if (is_word(head, "goto")) refuse("goto in a template's code cannot be followed: use an if or a loop");
            next_statement(i + 1);
        } else if (c == '#') {
            std::vector<std::string_view> d = words(code.substr(i + 1, 16), 1);
            if (!d.empty() && (d[0] == "if" || d[0] == "ifdef" || d[0] == "ifndef" || d[0] == "else" ||
                               d[0] == "elif" || d[0] == "endif"))
                refuse("a preprocessor conditional in a template's code cannot be followed: use an if");
        } else if (c == ':' && parens == 0) {
            bool scope = (i + 1 < code.size() && code[i + 1] == ':') || (i > 0 && code[i - 1] == ':');
            if (!scope && (first_word == "case" || first_word == "default")) {
                events.push_back({FlowKind::Case});
                next_statement(i + 1);
            }
        }
        ++i;
    }
    // A lambda whose body holds template text writes it where it is called, a context
    // kilnc never sees; a try's catch goes on from wherever the throw came.
    for (const OpenBlock& b : open)
        if (b.why) {
            refuse(b.why);
            break;
        }
    // A block that ends in a control statement without its '{': the template text after
    // the block is what it governs (<% if (x) %> title="<%= t %>"), which kilnc would
    // follow as if it always ran; also behind a label or an attribute.
    // A macro call there (UNLESS(done)) may be one too.
    std::string_view tail = code.substr(head_start);
    std::vector<std::string_view> tail_words = top_words(tail);
    if (has_bracket(tail))  // a lambda's introducer: `<% auto row = [&] %>` then `<% { %>`
        refuse(kLambda);
    else if (std::find_if(tail_words.begin(), tail_words.end(), is_control) != tail_words.end() ||
             last_char(tail) == ')')
        refuse("this code block ends in a control statement (or a macro call) without its '{': the template text "
               "after it would be what it governs; write <% if (...) { %> ... <% } %>");
    return events;
}

}  // namespace kiln::kilnc
