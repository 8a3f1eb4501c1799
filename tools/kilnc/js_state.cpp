#include "kilnc/js_state.hpp"

#include <string_view>

namespace kiln::kilnc {
namespace {

bool is_word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           static_cast<unsigned char>(c) >= 0x80;
}

// After these words a '/' starts a regular expression (`return /x/`); after any other
// identifier or number it divides (`n / 2`).
bool regex_may_follow(std::string_view word) {
    for (std::string_view k : {"return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case",
                               "do", "else", "yield", "await", "default", "extends"})
        if (word == k) return true;
    return false;
}

constexpr size_t kLongestKeyword = 10;  // "instanceof"

}  // namespace

void JsState::remember(char c) {
    tail_ += c;
    if (tail_.size() > 4) tail_.erase(0, 1);
}

void JsState::end_word() {
    if (word_.empty()) return;
    // A keyword after '.' is a property name (`obj.return / 2`). A word with bytes
    // past ASCII may hold a space JavaScript knows (U+00A0 after `return`): unsure.
    divides_ = after_dot_ || !regex_may_follow(word_);
    // of, yield and await are also names a sloppy script may give a variable (`of / 2`).
    unsure_ = word_unicode_ || (!after_dot_ && (word_ == "of" || word_ == "yield" || word_ == "await"));
    after_dot_ = false;
    word_unicode_ = false;
    word_.clear();
}

// `c`, just remembered, ends a line: LF, CR, U+2028 or U+2029 (E2 80 A8, E2 80 A9).
bool JsState::ends_line(char c) const {
    return c == '\n' || c == '\r' || tail_.ends_with("\xe2\x80\xa8") || tail_.ends_with("\xe2\x80\xa9");
}

void JsState::line_end() {
    line_bytes_ = 0;
    line_unicode_ = 0;
    if (doubt_ != Doubt::Line) return;
    // A '\' before the line's end continues a string in one reading only; and the next
    // line's first '/' may be read either way, as the readings may end the line apart.
    doubt_ = backslash_before_ ? Doubt::Script : Doubt::None;
    unsure_ = true;
}

void JsState::code(char c) {
    const bool plus_plus = (c == '+' || c == '-') && !tail_.empty() && tail_.back() == c;
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    // Bytes past ASCII before anything else on the line may be a space JavaScript knows
    // (U+00A0, U+FEFF, U+3000): a "-->" after them may open a comment, or not.
    // (5: more than 4 such bytes, a "-->" anywhere after them is doubted.)
    if (static_cast<unsigned char>(c) >= 0x80 && line_bytes_ == line_unicode_ && line_unicode_ < 5) ++line_unicode_;
    if (!space && line_bytes_ < 4 + line_unicode_) ++line_bytes_;  // (4 for a line begun in ASCII, as ever)
    remember(c);
    if (ends_line(c)) line_end();
    // HTML-like comments of classic scripts: "<!--" anywhere, "-->" first on its line
    // (after spaces and comments only).
    if (!module_ && c == '>' && tail_.ends_with("-->") && line_unicode_ > 0 &&
        (line_unicode_ == 5 || line_bytes_ == 3 + line_unicode_))
        comment_doubt_ = true;  // the two readings part for the rest of the script
    if (!module_ && (tail_ == "<!--" || (c == '>' && tail_.ends_with("-->") && line_bytes_ == 3))) {
        mode_ = Mode::LineComment;
        word_.clear();
        return;
    }
    // A number's '.' is part of it ("1./2" divides): a word that starts with a digit.
    if (is_word_char(c) || (c == '.' && !word_.empty() && word_[0] >= '0' && word_[0] <= '9')) {
        // A word longer than any keyword is kept as "longer than a keyword" only, so
        // that the state stays small and equal states compare equal.
        if (word_.size() <= kLongestKeyword) word_ += c;
        if (static_cast<unsigned char>(c) >= 0x80) word_unicode_ = true;
        return;
    }
    end_word();
    // What the next '/' follows, when its meaning is a guess: ')' (a call, or an if's
    // head), '}' (an object, or a block), "++"/"--" (postfix, or prefix after a line
    // end). Spaces and comments keep it; any other token ends it.
    if (c != '/' && !space) unsure_ = c == ')' || c == '}' || plus_plus;
    if (c == '.') after_dot_ = true;
    else if (!space) after_dot_ = false;
    switch (c) {
        case ' ': case '\t': case '\n': case '\r': case '\f': case '\v': return;
        case '"': mode_ = Mode::DqString; return;
        case '\'': mode_ = Mode::SqString; return;
        case '`': mode_ = Mode::Template; prev_ = 0; return;
        case '/': pending_slash_ = true; slash_unsure_ = unsure_; return;
        case '{': braces_ += '{'; divides_ = false; return;
        case '}':
            if (!braces_.empty()) {
                char open = braces_.back();
                braces_.pop_back();
                if (open == '$') {  // the end of a template literal's ${...}
                    mode_ = Mode::Template;
                    prev_ = 0;
                    return;
                }
            }
            divides_ = false;  // the end of a block: `} /re/.test(s)`
            return;
        case ')': case ']': divides_ = true; return;
        case '+': case '-': divides_ = plus_plus; return;  // `i++ / 2` divides; `a + /re/` is a regex
        default: divides_ = false; return;  // an operator or punctuation: a regex may follow
    }
}

void JsState::slash(char c) {
    if (c == '/') {
        mode_ = Mode::LineComment;
    } else if (c == '*') {
        mode_ = Mode::BlockComment;
        prev_ = 0;  // so "/*/" does not close it
        if (line_bytes_ > 0) --line_bytes_;  // the '/' opened a comment: "/* */ -->" is first on its line
    } else {
        // Where the meaning was a guess, the readings may part until the line ends:
        // `(a + b) / 2` divides, `if (a) /re/.test(s)` is a regex.
        if (slash_unsure_ && doubt_ == Doubt::None) doubt_ = Doubt::Line;
        unsure_ = false;
        if (divides_) {
            divides_ = false;
            code(c);
        } else {
            mode_ = Mode::Regex;
            feed(c);
        }
    }
}

void JsState::feed(char c) {
    if (escaped_cr_) {  // '\' CR LF (from &#13;&#10; in an event handler) continues the line as '\' LF does
        escaped_cr_ = false;
        if (c == '\n') return;
    }
    backslash_before_ = last_ == '\\';
    if (doubt_ == Doubt::Line && (c == '`' || (last_ == '/' && c == '*'))) doubt_ = Doubt::Script;
    last_ = c;
    if (mode_ != Mode::Code && escaped_) {
        escaped_ = false;
        escaped_cr_ = c == '\r';
        prev_ = 0;  // "\${" is not a substitution
        return;
    }
    switch (mode_) {
        case Mode::Code:
            if (pending_slash_) {
                pending_slash_ = false;
                slash(c);
            } else {
                code(c);
            }
            return;
        case Mode::DqString:
        case Mode::SqString:
            if (c == '\\') escaped_ = true;
            else if (c == (mode_ == Mode::DqString ? '"' : '\'')) mode_ = Mode::Code, divides_ = true, unsure_ = false;
            else if (c == '\n' || c == '\r') mode_ = Mode::Code, line_end();  // no string holds one: resynchronise
            return;
        case Mode::Template:
            if (c == '\\') {
                escaped_ = true;
            } else if (c == '`') {
                mode_ = Mode::Code;
                divides_ = true;
                unsure_ = false;
            } else if (c == '{' && prev_ == '$') {
                braces_ += '$';
                mode_ = Mode::Code;
                divides_ = false;
            }
            prev_ = c;
            return;
        case Mode::LineComment:
            // A line ends at LF, CR, U+2028 or U+2029 (E2 80 A8, E2 80 A9).
            remember(c);
            if (ends_line(c)) {
                mode_ = Mode::Code;
                tail_.clear();
                line_end();
            }
            return;
        case Mode::BlockComment:
            if (prev_ == '*' && c == '/') mode_ = Mode::Code;
            remember(c);
            if (ends_line(c)) line_end();  // a comment that holds one ends a line
            prev_ = c;
            return;
        case Mode::Regex:
            if (c == '\\') escaped_ = true;
            else if (c == '[') mode_ = Mode::RegexClass;
            else if (c == '/') mode_ = Mode::Code, divides_ = true, unsure_ = false;  // its flags are read as a word
            else if (c == '\n') mode_ = Mode::Code;  // not a regex after all: resynchronise
            return;
        case Mode::RegexClass:
            if (c == '\\') escaped_ = true;
            else if (c == ']') mode_ = Mode::Regex;
            return;
    }
}

JsSpot JsState::spot() const {
    if (comment_doubt_) return JsSpot::UnsureComment;
    if (doubt_ != Doubt::None) return JsSpot::Unsure;
    switch (mode_) {
        case Mode::Code: return pending_slash_ && !divides_ ? JsSpot::Regex : JsSpot::Code;
        case Mode::DqString:
        case Mode::SqString:
        case Mode::Template: return JsSpot::String;
        case Mode::LineComment:
        case Mode::BlockComment: return JsSpot::Comment;
        case Mode::Regex:
        case Mode::RegexClass: return JsSpot::Regex;
    }
    return JsSpot::Code;
}

void JsState::after_value() {
    if (mode_ != Mode::Code) return;
    if (pending_slash_) {
        pending_slash_ = false;
        if (!divides_) {  // `/<%= x %>`: the value began a regex (refused; keep reading it as one)
            mode_ = Mode::Regex;
            return;
        }
    }
    word_.clear();
    unsure_ = false;
    after_dot_ = false;
    divides_ = true;  // a literal: `<%= n %> / 2` divides
}

}  // namespace kiln::kilnc
