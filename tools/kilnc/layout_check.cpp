#include "kilnc/layout_check.hpp"

#include <algorithm>
#include <vector>

#include "kilnc/directives.hpp"
#include "kilnc/lexer.hpp"
#include "kilnc/names.hpp"

namespace kiln::kilnc {
namespace {

constexpr int kMaxLayoutDepth = 32;

// The normalized name ("layouts/app") or nullopt if it does not map.
std::optional<std::string> normalized(const std::string& name) {
    TemplateName tn;
    if (map_template_name(name, tn)) return std::nullopt;
    return tn.path;
}

}  // namespace

bool is_content_expression(std::string_view code) { return trim(code) == "content"; }

std::optional<LayoutInfo> scan_layout_info(std::string_view source) {
    LexResult lexed = lex(source);
    if (lexed.error) return std::nullopt;
    LayoutInfo info;
    for (const Token& t : lexed.tokens) {
        if ((t.kind == TokenKind::Output || t.kind == TokenKind::RawOutput) && is_content_expression(t.text))
            info.yields = true;
        if (t.kind != TokenKind::Directive) continue;
        DirectiveHead head = split_directive(t.text);
        std::string_view args = std::string_view(t.text).substr(head.args_offset);
        std::string name;
        size_t init = 0;
        if (head.name == "yield") info.yields = true;
        else if (head.name == "layout" && !parse_template_ref("layout", args, name, init)) info.layout = name;
    }
    return info;
}

std::optional<std::string> check_layout_chain(const std::string& self, const std::string& layout,
                                              const TemplateLoader& load) {
    std::optional<std::string> source = load(layout);
    if (!source) return "layout '" + layout + "' not found (no " + layout + ".html in the views directory)";
    std::vector<std::string> chain{self, layout};
    std::optional<LayoutInfo> info = scan_layout_info(*source);
    if (info && !info->yields)
        return "'" + layout + "' is not a layout: it has no <%@ yield %> (or <%== content %>)";
    for (int depth = 0; info && info->layout && depth < kMaxLayoutDepth; ++depth) {
        std::optional<std::string> next = normalized(*info->layout);
        if (!next) break;
        bool seen = std::find(chain.begin(), chain.end(), *next) != chain.end();
        chain.push_back(*next);
        if (seen) {
            std::string path;
            for (const auto& n : chain) path += (path.empty() ? "" : " -> ") + n;
            return "layout cycle: " + path;
        }
        source = load(*next);
        if (!source) break;
        info = scan_layout_info(*source);
    }
    return std::nullopt;
}

}  // namespace kiln::kilnc
