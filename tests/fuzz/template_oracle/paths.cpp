#include "template_oracle/paths.hpp"

#include <string_view>

namespace kiln::oracle {

struct TemplatePaths::Stmt {
    enum Kind : uint8_t {
        Leaf, Case, Default, Break, Continue, Return, MaybeBreak, MaybeContinue, MaybeReturn, If, Loop, Switch, Plain,
    };
    Kind kind;
    size_t node = 0;          // Leaf: the body node
    std::vector<Seq> blocks;  // If: its branches; Loop, Switch, Plain: one body
    bool has_else = false;    // If: the last branch is an `else`
};

namespace {

using Stmt = TemplatePaths::Stmt;
using Seq = TemplatePaths::Seq;

// ---- Reading one code block ----

enum class Ev : uint8_t { OpenIf, OpenElseIf, OpenElse, OpenLoop, OpenSwitch, OpenPlain, Close, Case, Default,
                          Break, Continue, Return, MaybeBreak, MaybeContinue, MaybeReturn };

struct Token {
    enum Kind : uint8_t { Word, Group, Sym } kind;
    std::string_view text;
};

// Bytes past ASCII and '$' count as a name's (GCC takes both in identifiers; anything
// else a compiler refuses never runs).
bool word_byte(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           static_cast<unsigned char>(c) >= 0x80;
}

bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Operators a plain statement may hold. Anything not listed puts the block outside the
// grammar: '/' (a comment), '#', '\\' (a line continuation), '?', '%' (the digraphs <%
// and %> are braces).
bool operator_byte(char c) { return std::string_view("=+-*<>&|!.,[]~^@").find(c) != std::string_view::npos; }

// Past a string or character literal starting at code[i] (its quote), escapes skipped;
// npos for one the block does not close on its line, and for a prefixed one (R"(...)"
// is raw; after a digit, a quote is a digit separator).
size_t skip_literal(std::string_view code, size_t i) {
    if (i > 0 && word_byte(code[i - 1])) return std::string_view::npos;
    char q = code[i];
    for (++i; i < code.size(); ++i) {
        if (code[i] == q) return i + 1;
        if (code[i] == '\\') ++i;
        if (i < code.size() && (code[i] == '\n' || code[i] == '\r')) return std::string_view::npos;
    }
    return std::string_view::npos;
}

bool tokenize(std::string_view code, std::vector<Token>& out) {
    size_t i = 0;
    while (i < code.size()) {
        char c = code[i];
        if (space(c)) {
            ++i;
        } else if (c == '"' || c == '\'') {
            size_t e = skip_literal(code, i);
            if (e == code.npos) return false;
            out.push_back({Token::Word, code.substr(i, e - i)});
            i = e;
        } else if (word_byte(c)) {
            size_t b = i;
            while (i < code.size() && word_byte(code[i])) ++i;
            out.push_back({Token::Word, code.substr(b, i - b)});
        } else if (c == '(') {
            size_t b = i;
            int depth = 0;
            for (; i < code.size(); ++i) {
                char g = code[i];
                if (g == '(') {
                    ++depth;
                } else if (g == ')' && --depth == 0) {
                    break;
                } else if (g == '"' || g == '\'') {
                    size_t e = skip_literal(code, i);
                    if (e == code.npos) return false;
                    i = e - 1;
                } else if (!word_byte(g) && !space(g) && !operator_byte(g) && g != ';' && g != ':') {
                    return false;
                }
            }
            if (i == code.size()) return false;
            ++i;
            out.push_back({Token::Group, code.substr(b, i - b)});
        } else if (c == ':' && i + 1 < code.size() && code[i + 1] == ':') {
            out.push_back({Token::Sym, code.substr(i, 2)});
            i += 2;
        } else if (c == '{' || c == '}' || c == ';' || c == ':' || operator_byte(c)) {
            out.push_back({Token::Sym, code.substr(i, 1)});
            ++i;
        } else {
            return false;
        }
    }
    return true;
}

bool is(const std::vector<Token>& t, size_t i, std::string_view text) { return i < t.size() && t[i].text == text; }

bool keyword(std::string_view w) {
    for (std::string_view k : {"if", "else", "for", "while", "do", "switch", "case", "default", "break", "continue",
                               "return", "goto", "try", "catch", "throw", "co_await", "co_return", "co_yield", "struct",
                               "class", "union", "enum", "namespace", "template", "typedef", "using", "operator",
                               "asm", "requires", "concept", "constexpr", "consteval", "static_assert", "line"})
        if (w == k) return true;
    return false;
}

// A statement that only computes (`n++;`, `int k = 0;`, `f(x);`): up to its ';', or
// the block's end unless an `if` governs it (`if (c) f(), %><%= v %>`: the comma would
// make the value's print part of it).
bool plain_statement(const std::vector<Token>& t, size_t& i, bool governed) {
    size_t b = i;
    for (; i < t.size() && !is(t, i, ";"); ++i) {
        if (t[i].kind == Token::Word && keyword(t[i].text)) return false;
        if (is(t, i, "{") || is(t, i, "}") || is(t, i, ":")) return false;
    }
    if (i == b || (governed && i == t.size())) return false;
    if (i < t.size()) ++i;
    return true;
}

// `break;`, `continue;` or `return;` at t[i]: its event, past the ';'.
std::optional<Ev> jump(const std::vector<Token>& t, size_t& i, bool maybe) {
    if (!is(t, i + 1, ";")) return std::nullopt;
    std::string_view w = t[i].text;
    i += 2;
    if (w == "break") return maybe ? Ev::MaybeBreak : Ev::Break;
    if (w == "continue") return maybe ? Ev::MaybeContinue : Ev::Continue;
    if (w == "return") return maybe ? Ev::MaybeReturn : Ev::Return;
    return std::nullopt;
}

bool read_code(std::string_view code, std::vector<Ev>& out) {
    std::vector<Token> t;
    if (!tokenize(code, t)) return false;
    size_t i = 0;
    while (i < t.size()) {
        std::string_view w = t[i].text;
        bool group_brace = i + 2 < t.size() && t[i + 1].kind == Token::Group && is(t, i + 2, "{");
        if (w == "}") {
            out.push_back(Ev::Close), ++i;
        } else if (w == "{") {
            out.push_back(Ev::OpenPlain), ++i;
        } else if (w == "if" && group_brace) {
            out.push_back(Ev::OpenIf), i += 3;
        } else if (w == "if" && i + 1 < t.size() && t[i + 1].kind == Token::Group) {
            i += 2;
            if (i < t.size() && t[i].kind == Token::Word && keyword(t[i].text)) {
                auto e = jump(t, i, true);
                if (!e) return false;
                out.push_back(*e);
            } else if (!plain_statement(t, i, true)) {
                return false;
            }
        } else if (w == "else" && is(t, i + 1, "if") && i + 3 < t.size() && t[i + 2].kind == Token::Group &&
                   is(t, i + 3, "{")) {
            out.push_back(Ev::OpenElseIf), i += 4;
        } else if (w == "else" && is(t, i + 1, "{")) {
            out.push_back(Ev::OpenElse), i += 2;
        } else if ((w == "for" || w == "while") && group_brace) {
            out.push_back(Ev::OpenLoop), i += 3;
        } else if (w == "switch" && group_brace) {
            out.push_back(Ev::OpenSwitch), i += 3;
        } else if (w == "case" && i + 2 < t.size() && t[i + 1].kind == Token::Word && is(t, i + 2, ":")) {
            out.push_back(Ev::Case), i += 3;
        } else if (w == "default" && is(t, i + 1, ":")) {
            out.push_back(Ev::Default), i += 2;
        } else if (w == "break" || w == "continue" || w == "return") {
            auto e = jump(t, i, false);
            if (!e) return false;
            out.push_back(*e);
        } else if (!plain_statement(t, i, false)) {
            return false;
        }
    }
    return true;
}

// ---- Pairing the braces of the whole body ----

struct Item {
    bool leaf;
    size_t node;
    Ev ev;
};

struct Builder {
    const std::vector<Item>& items;
    size_t at = 0;
    bool ok = true;

    bool next_is(Ev e) const { return at < items.size() && !items[at].leaf && items[at].ev == e; }

    // Up to the '}' that closes this block (consumed), or the end when `top`.
    Seq seq(bool top, bool loop, bool breakable, bool switch_top, int depth) {
        Seq out;
        if (depth > 64) ok = false;
        while (ok && at < items.size()) {
            const Item& it = items[at++];
            if (it.leaf) {
                out.push_back({Stmt::Leaf, it.node, {}, false});
                continue;
            }
            switch (it.ev) {
                case Ev::Close:
                    if (top) ok = false;
                    return out;
                case Ev::OpenIf: {
                    Stmt s{Stmt::If, 0, {}, false};
                    s.blocks.push_back(seq(false, loop, breakable, false, depth + 1));
                    while (ok && next_is(Ev::OpenElseIf)) {
                        ++at;
                        s.blocks.push_back(seq(false, loop, breakable, false, depth + 1));
                    }
                    if (ok && next_is(Ev::OpenElse)) {
                        ++at;
                        s.blocks.push_back(seq(false, loop, breakable, false, depth + 1));
                        s.has_else = true;
                    }
                    out.push_back(std::move(s));
                    break;
                }
                case Ev::OpenLoop:
                    out.push_back({Stmt::Loop, 0, {seq(false, true, true, false, depth + 1)}, false});
                    break;
                case Ev::OpenSwitch:
                    out.push_back({Stmt::Switch, 0, {seq(false, loop, true, true, depth + 1)}, false});
                    break;
                case Ev::OpenPlain:
                    out.push_back({Stmt::Plain, 0, {seq(false, loop, breakable, false, depth + 1)}, false});
                    break;
                case Ev::OpenElseIf:
                case Ev::OpenElse:
                    ok = false;  // not right after its if's '}'
                    break;
                case Ev::Case:
                case Ev::Default:
                    if (!switch_top) ok = false;  // a label in a nested block (Duff's device): not followed
                    out.push_back({it.ev == Ev::Case ? Stmt::Case : Stmt::Default, 0, {}, false});
                    break;
                case Ev::Break:
                case Ev::MaybeBreak:
                    if (!breakable) ok = false;
                    out.push_back({it.ev == Ev::Break ? Stmt::Break : Stmt::MaybeBreak, 0, {}, false});
                    break;
                case Ev::Continue:
                case Ev::MaybeContinue:
                    if (!loop) ok = false;
                    out.push_back({it.ev == Ev::Continue ? Stmt::Continue : Stmt::MaybeContinue, 0, {}, false});
                    break;
                case Ev::Return:
                    out.push_back({Stmt::Return, 0, {}, false});
                    break;
                case Ev::MaybeReturn:
                    out.push_back({Stmt::MaybeReturn, 0, {}, false});
                    break;
            }
        }
        if (!top) ok = false;  // a block the body never closes
        return out;
    }
};

// ---- Running ----

enum class Signal : uint8_t { Normal, Break, Continue, Return, Full };

struct Runner {
    uint64_t state;
    size_t max_nodes;
    std::vector<size_t> out;
    size_t steps = 0;  // statements run: loops that print nothing are bounded by this

    uint64_t next() {  // splitmix64
        uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    size_t pick(size_t n) { return static_cast<size_t>(next() % n); }

    Signal seq(const Seq& s, size_t from) {
        for (size_t i = from; i < s.size(); ++i)
            if (Signal r = stmt(s[i]); r != Signal::Normal) return r;
        return Signal::Normal;
    }

    Signal stmt(const Stmt& s) {
        if (++steps > 64 * max_nodes) return Signal::Full;
        switch (s.kind) {
            case Stmt::Leaf:
                out.push_back(s.node);
                return out.size() > max_nodes ? Signal::Full : Signal::Normal;
            case Stmt::Case:
            case Stmt::Default: return Signal::Normal;
            case Stmt::Break: return Signal::Break;
            case Stmt::Continue: return Signal::Continue;
            case Stmt::Return: return Signal::Return;
            case Stmt::MaybeBreak: return pick(2) ? Signal::Break : Signal::Normal;
            case Stmt::MaybeContinue: return pick(2) ? Signal::Continue : Signal::Normal;
            case Stmt::MaybeReturn: return pick(2) ? Signal::Return : Signal::Normal;
            case Stmt::Plain: return seq(s.blocks[0], 0);
            case Stmt::If: {
                size_t k = pick(s.blocks.size() + (s.has_else ? 0 : 1));
                return k < s.blocks.size() ? seq(s.blocks[k], 0) : Signal::Normal;
            }
            case Stmt::Loop: {
                for (size_t n = pick(3); n > 0; --n) {
                    Signal r = seq(s.blocks[0], 0);
                    if (r == Signal::Break) break;
                    if (r == Signal::Return || r == Signal::Full) return r;
                }
                return Signal::Normal;
            }
            case Stmt::Switch: {
                const Seq& body = s.blocks[0];
                std::vector<size_t> entries;
                bool has_default = false;
                for (size_t i = 0; i < body.size(); ++i) {
                    if (body[i].kind == Stmt::Case || body[i].kind == Stmt::Default) entries.push_back(i);
                    has_default = has_default || body[i].kind == Stmt::Default;
                }
                size_t k = pick(entries.size() + (has_default ? 0 : 1));
                if (k == entries.size()) return Signal::Normal;  // no label matches
                Signal r = seq(body, entries[k] + 1);
                return r == Signal::Break ? Signal::Normal : r;
            }
        }
        return Signal::Normal;
    }
};

}  // namespace

TemplatePaths::TemplatePaths() = default;
TemplatePaths::~TemplatePaths() = default;
TemplatePaths::TemplatePaths(TemplatePaths&&) noexcept = default;
TemplatePaths& TemplatePaths::operator=(TemplatePaths&&) noexcept = default;

std::optional<TemplatePaths> TemplatePaths::read(const kilnc::Template& tpl) {
    std::vector<Item> items;
    std::vector<Ev> evs;
    for (size_t i = 0; i < tpl.body.size(); ++i) {
        const kilnc::Node& n = tpl.body[i];
        if (n.kind != kilnc::NodeKind::Code) {
            items.push_back({true, i, Ev::Close});
            continue;
        }
        evs.clear();
        if (!read_code(n.code.code, evs)) return std::nullopt;
        for (Ev e : evs) items.push_back({false, 0, e});
    }
    Builder b{items};
    Seq body = b.seq(true, false, false, false, 0);
    if (!b.ok) return std::nullopt;
    TemplatePaths p;
    p.body_ = std::move(body);
    return p;
}

std::optional<std::vector<size_t>> TemplatePaths::run(uint64_t seed, size_t max_nodes) const {
    Runner r{seed, max_nodes, {}};
    if (r.seq(body_, 0) == Signal::Full) return std::nullopt;
    return std::move(r.out);
}

}  // namespace kiln::oracle
