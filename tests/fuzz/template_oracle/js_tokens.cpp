#include "template_oracle/js_tokens.hpp"

namespace kiln::oracle {

namespace {

// Bytes of a line terminator at s[i] (LF, CR, U+2028, U+2029), or 0.
size_t line_end(std::string_view s, size_t i) {
    if (s[i] == '\n' || s[i] == '\r') return 1;
    if (s.substr(i, 3) == "\xe2\x80\xa8" || s.substr(i, 3) == "\xe2\x80\xa9") return 3;
    return 0;
}

// Bytes of white space at s[i] (ECMAScript's WhiteSpace, and line terminators), or 0.
size_t blank(std::string_view s, size_t i) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\v' || c == '\f') return 1;
    if (size_t n = line_end(s, i)) return n;
    if (s.substr(i, 2) == "\xc2\xa0") return 2;      // U+00A0
    if (s.substr(i, 3) == "\xef\xbb\xbf") return 3;  // U+FEFF
    if (s.substr(i, 3) == "\xe3\x80\x80" || s.substr(i, 3) == "\xe1\x9a\x80") return 3;  // U+3000, U+1680
    if (s.substr(i, 2) == "\xe2\x80" && i + 2 < s.size()) {
        auto c2 = static_cast<unsigned char>(s[i + 2]);
        if (c2 <= 0x8a || c2 == 0xaf) return 3;  // U+2000..U+200A, U+202F
    }
    if (s.substr(i, 3) == "\xe2\x81\x9f") return 3;  // U+205F
    return 0;
}

bool name_byte(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           static_cast<unsigned char>(c) >= 0x80;
}

// Past a quoted string starting at s[i] (its quote); npos when a line ends inside it
// or the text does.
size_t skip_string(std::string_view s, size_t i) {
    char q = s[i++];
    while (i < s.size()) {
        char c = s[i];
        if (c == q) return i + 1;
        if (c == '\\') {
            if (i + 1 >= s.size()) return std::string_view::npos;
            i += s.substr(i + 1, 2) == "\r\n" ? 3 : 2;  // an escape, or a line continuation
            continue;
        }
        if (c == '\n' || c == '\r') return std::string_view::npos;  // U+2028/9 may stand in a string
        ++i;
    }
    return std::string_view::npos;
}

// Past a part of a template literal starting at s[i] (just after its backtick or the
// '}' ending a substitution): past the closing backtick, or past a "${" (then
// `substitution` is set); npos when the text ends inside it.
size_t skip_template(std::string_view s, size_t i, bool& substitution) {
    while (i < s.size()) {
        char c = s[i];
        if (c == '`') {
            substitution = false;
            return i + 1;
        }
        if (c == '\\') {
            i += 2;
            continue;
        }
        if (c == '$' && i + 1 < s.size() && s[i + 1] == '{') {
            substitution = true;
            return i + 2;
        }
        ++i;
    }
    return std::string_view::npos;
}

// Past a regular expression literal starting at s[i] (its '/'), with its flags; npos
// when a line or the text ends inside it.
size_t skip_regex(std::string_view s, size_t i) {
    bool in_class = false;
    for (++i; i < s.size(); ++i) {
        char c = s[i];
        if (line_end(s, i)) return std::string_view::npos;
        if (c == '\\') {
            if (++i == s.size() || line_end(s, i)) return std::string_view::npos;
        } else if (c == '[') {
            in_class = true;
        } else if (c == ']') {
            in_class = false;
        } else if (c == '/' && !in_class) {
            for (++i; i < s.size() && name_byte(s[i]); ++i) {
            }
            return i;
        }
    }
    return std::string_view::npos;
}

// Whether a '/' after `prev` starts a regular expression (not a division): the usual
// reading by the previous token. Both pages are read alike, so where it errs, it errs
// the same way in each, but at the value itself, which is a string in both.
bool regex_after(const std::vector<JsToken>& out) {
    if (out.empty()) return true;
    const JsToken& t = out.back();
    if (t.kind == JsToken::Punct) return t.text != ")" && t.text != "]" && t.text != "}";
    if (t.kind == JsToken::String) return false;
    if (out.size() >= 2 && out[out.size() - 2] == JsToken{JsToken::Punct, "."}) return false;  // a property: x.in / 2
    for (std::string_view k : {"return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case",
                               "do", "else", "yield", "await"})
        if (t.text == k) return true;
    return false;
}

}  // namespace

std::optional<std::vector<JsToken>> js_tokens(std::string_view s, bool module) {
    std::vector<JsToken> out;
    std::vector<int> braces;  // per open template substitution, the '{' open inside it
    size_t i = 0;
    bool line_start = true;  // only white space and comments so far on this line
    // A template literal's part from s[i]: a String token, and maybe a substitution.
    auto template_part = [&]() {
        bool substitution = false;
        size_t e = skip_template(s, i, substitution);
        if (e == s.npos) return false;
        out.push_back({JsToken::String, {}});
        if (substitution) braces.push_back(0);
        i = e;
        line_start = false;
        return true;
    };
    while (i < s.size()) {
        char c = s[i];
        if (size_t n = blank(s, i)) {
            line_start = line_start || line_end(s, i);
            i += n;
        } else if (s.substr(i, 2) == "//" ||
                   (!module && (s.substr(i, 4) == "<!--" || (line_start && s.substr(i, 3) == "-->")))) {
            while (i < s.size() && !line_end(s, i)) ++i;  // a line comment, or an HTML-like one
        } else if (s.substr(i, 2) == "/*") {
            size_t e = s.find("*/", i + 2);
            if (e == s.npos) return std::nullopt;
            for (size_t k = i; k < e; ++k) line_start = line_start || line_end(s, k);
            i = e + 2;
        } else if (c == '/' && regex_after(out)) {
            size_t e = skip_regex(s, i);
            if (e == s.npos) return std::nullopt;
            out.push_back({JsToken::Word, std::string(s.substr(i, e - i))});
            i = e;
            line_start = false;
        } else if (c == '`' || (c == '}' && !braces.empty() && braces.back() == 0)) {
            if (c == '}') braces.pop_back();
            ++i;
            if (!template_part()) return std::nullopt;
        } else if (c == '"' || c == '\'') {
            size_t e = skip_string(s, i);
            if (e == s.npos) return std::nullopt;
            out.push_back({JsToken::String, {}});
            i = e;
            line_start = false;
        } else if (name_byte(c)) {
            size_t b = i;
            bool number = c >= '0' && c <= '9';
            while (i < s.size() && ((name_byte(s[i]) && !blank(s, i)) || (number && s[i] == '.'))) ++i;
            out.push_back({JsToken::Word, std::string(s.substr(b, i - b))});
            line_start = false;
        } else {
            if (!braces.empty() && (c == '{' || c == '}')) braces.back() += c == '{' ? 1 : -1;
            out.push_back({JsToken::Punct, std::string(1, c)});
            ++i;
            line_start = false;
        }
    }
    if (!braces.empty()) return std::nullopt;  // a substitution left open
    return out;
}

}  // namespace kiln::oracle
