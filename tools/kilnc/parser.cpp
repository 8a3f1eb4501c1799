#include "kilnc/parser.hpp"

#include <algorithm>

#include "kilnc/directives.hpp"
#include "kilnc/escape_contexts.hpp"
#include "kilnc/layout_check.hpp"
#include "kilnc/lexer.hpp"

namespace kiln::kilnc {
namespace {

bool all_space(std::string_view s) { return trim(s).empty(); }

// The position just past the last byte of `source`.
Pos end_of(std::string_view source) {
    Pos p;
    for (char c : source) {
        if (c == '\n') {
            ++p.line;
            p.col = 1;
        } else {
            ++p.col;
        }
    }
    return p;
}

// The code of tag `t` from byte `offset` of its text, with its position and indent.
CodeSpan span_at(const Token& t, size_t offset) {
    CodeSpan span{t.text.substr(offset), t.body_pos, t.indent};
    std::string_view before = std::string_view(t.text).substr(0, offset);
    size_t nl = before.rfind('\n');
    if (nl == before.npos) {
        span.pos.col += static_cast<int>(offset);
        span.indent += indent_for(before);
        if (span.indent.size() > kMaxIndent) span.indent.resize(kMaxIndent);
    } else {
        span.pos.line += static_cast<int>(std::count(before.begin(), before.end(), '\n'));
        span.pos.col = static_cast<int>(before.size() - nl);
        span.indent = indent_for(before.substr(nl + 1));
    }
    return span;
}

class Parser {
public:
    Parser(const TemplateLoader& load) : load_(load) {}

    ParseResult run(std::string_view source, std::string_view name) {
        if (auto err = map_template_name(name, result_.tpl.name)) return fail({1, 1}, *err);
        LexResult lexed = lex(source);
        if (lexed.error) {
            result_.error = lexed.error;
            return std::move(result_);
        }
        for (const Token& t : lexed.tokens)
            if (!token(t)) return std::move(result_);
        result_.error = assign_escapers(result_.tpl, end_of(source));
        return std::move(result_);
    }

private:
    Template& tpl() { return result_.tpl; }

    ParseResult fail(Pos pos, std::string message) {
        result_.error = Diagnostic{pos, std::move(message)};
        return std::move(result_);
    }
    bool error(Pos pos, std::string message) {
        result_.error = Diagnostic{pos, std::move(message)};
        return false;
    }

    void add(Node n) {
        header_open_ = false;
        if (n.kind == NodeKind::Text && !tpl().body.empty() && tpl().body.back().kind == NodeKind::Text)
            tpl().body.back().text += n.text;
        else
            tpl().body.push_back(std::move(n));
    }

    bool token(const Token& t) {
        switch (t.kind) {
            case TokenKind::Comment: return true;
            case TokenKind::Text:
                if (!(header_open_ && all_space(t.text))) add(Node{NodeKind::Text, t.text, {}, {}, t.pos});
                return true;
            case TokenKind::Code: add(Node{NodeKind::Code, {}, span_at(t, 0), {}, t.pos}); return true;
            case TokenKind::Output:
            case TokenKind::RawOutput:
                if (all_space(t.text)) return error(t.pos, "empty expression in output tag");
                if (is_content_expression(t.text)) tpl().is_layout = true;
                add(Node{t.kind == TokenKind::Output ? NodeKind::Output : NodeKind::RawOutput, {}, span_at(t, 0), {},
                         t.pos});
                return true;
            case TokenKind::Directive: return directive(t);
        }
        return true;
    }

    bool directive(const Token& t) {
        DirectiveHead head = split_directive(t.text);
        std::string_view args = std::string_view(t.text).substr(head.args_offset);
        if (head.name.empty()) return error(t.pos, "empty directive: expected param, include, layout, render or yield");
        bool header = head.name == "param" || head.name == "include" || head.name == "layout";
        if (header && !header_open_)
            return error(t.pos, "'" + std::string(head.name) +
                                    "' must come before the template's content (at the top of the file)");
        if (head.name == "param") return param(t, args);
        if (head.name == "include") {
            Include inc{{}, t.pos};
            if (auto err = parse_include(args, inc.target)) return error(t.pos, *err);
            tpl().includes.push_back(std::move(inc));
            return true;
        }
        if (head.name == "layout") return layout(t, head);
        if (head.name == "render") return render(t, head);
        if (head.name == "yield") {
            if (!all_space(args)) return error(t.pos, "yield takes no arguments");
            tpl().is_layout = true;
            add(Node{NodeKind::Yield, {}, {}, {}, t.pos});
            return true;
        }
        return error(t.pos, "unknown directive '" + std::string(head.name) +
                                "' (expected param, include, layout, render or yield)");
    }

    bool param(const Token& t, std::string_view args) {
        Param p;
        if (auto err = parse_param(args, p)) return error(t.pos, *err);
        for (const Param& q : tpl().params)
            if (q.name == p.name) return error(t.pos, "duplicate parameter '" + p.name + "'");
        p.pos = t.pos;
        tpl().params.push_back(std::move(p));
        return true;
    }

    // Reads `"name" initializers`; the name is mapped and must exist.
    bool template_ref(const Token& t, DirectiveHead head, bool relative, TemplateRef& ref) {
        std::string_view what = head.name, args = std::string_view(t.text).substr(head.args_offset);
        std::string name;
        size_t init = 0;
        if (auto err = parse_template_ref(what, args, name, init)) return error(t.pos, *err);
        const std::string& self = tpl().name.path;
        if (relative && name.find('/') == name.npos && self.find('/') != self.npos)
            name = self.substr(0, self.rfind('/') + 1) + name;
        if (auto err = map_template_name(name, ref.name)) return error(t.pos, *err);
        ref.init = span_at(t, head.args_offset + init);
        ref.pos = t.pos;
        return true;
    }

    bool layout(const Token& t, DirectiveHead head) {
        if (tpl().layout) return error(t.pos, "a template has at most one layout");
        TemplateRef ref;
        if (!template_ref(t, head, false, ref)) return false;
        if (ref.name.path == tpl().name.path) return error(t.pos, "a template cannot be its own layout");
        if (auto err = check_layout_chain(tpl().name.path, ref.name.path, load_)) return error(t.pos, *err);
        tpl().layout = std::move(ref);
        return true;
    }

    bool render(const Token& t, DirectiveHead head) {
        TemplateRef ref;
        if (!template_ref(t, head, true, ref)) return false;
        if (ref.name.path != tpl().name.path && !load_(ref.name.path))
            return error(t.pos, "partial '" + ref.name.path + "' not found (no " + ref.name.path +
                                    ".html in the views directory)");
        auto same = [&](const TemplateName& n) { return n.path == ref.name.path; };
        if (std::none_of(tpl().partials.begin(), tpl().partials.end(), same)) tpl().partials.push_back(ref.name);
        add(Node{NodeKind::Render, {}, std::move(ref.init), std::move(ref.name), t.pos});
        return true;
    }

    const TemplateLoader& load_;
    ParseResult result_;
    bool header_open_ = true;  // no content yet: param, include and layout still allowed
};

}  // namespace

ParseResult parse_template(std::string_view source, std::string_view name, const TemplateLoader& load) {
    return Parser(load).run(source, name);
}

}  // namespace kiln::kilnc
