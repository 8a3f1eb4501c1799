// Fuzzes kilnc (tools/kilnc): lexer, parser, layout checks and code generation on
// arbitrary template bytes, against a small fixed views directory (a layout "l", a
// partial "posts/_p", a non-layout "plain", a layout cycle "c1" <-> "c2"). Must never
// crash or hang. An error names a position inside the template. Input that parses
// generates a header and a source that both keep the #line invariant (each run of
// template #line directives closed by one naming the generated file at its true
// line), checked unless the template itself says "line" (its code could then hold
// #line directives of its own).
// And the escaping it chose holds: a few runs of the template, rendered with plain and
// hostile values, parse to pages of the same shape (template_oracle/oracle.hpp).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "kilnc/codegen.hpp"
#include "kilnc/line_check.hpp"
#include "kilnc/parser.hpp"
#include "template_oracle/oracle.hpp"

using namespace kiln::kilnc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::map<std::string, std::string> kViews{
        {"l", "<%@ param int n = 0 %>\n<%@ yield %>"},
        {"posts/_p", "<%@ param int x %><%= x %>"},
        {"plain", "<p>no yield</p>"},
        {"c1", "<%@ layout \"c2\" %><%@ yield %>"},
        {"c2", "<%@ layout \"c1\" %><%@ yield %>"},
        {"broken", "<% unclosed"},
    };
    TemplateLoader load = [](const std::string& name) -> std::optional<std::string> {
        auto it = kViews.find(name);
        if (it == kViews.end()) return std::nullopt;
        return it->second;
    };
    std::string_view src(reinterpret_cast<const char*>(data), size);
    int lines = 1;
    for (char c : src) lines += c == '\n';

    ParseResult r = parse_template(src, "posts/index.html", load);
    if (r.error) {
        FUZZ_CHECK(!r.error->message.empty());
        FUZZ_CHECK(r.error->pos.line >= 1 && r.error->pos.line <= lines);
        FUZZ_CHECK(r.error->pos.col >= 1 && static_cast<size_t>(r.error->pos.col) <= size + 1);
        return 0;
    }
    const CodegenOptions options{"views", "/v/posts/index.html", "/o/views/posts/index.hpp",
                                 "/o/views/posts/index.cpp"};
    Generated g = generate(r.tpl, options);
    FUZZ_CHECK(g.source.find("::render(") != std::string::npos);
    if (src.find("line") == std::string_view::npos) {
        FUZZ_CHECK(!check_line_directives(g.header, options.header_path, options.template_path, lines));
        FUZZ_CHECK(!check_line_directives(g.source, options.source_path, options.template_path, lines));
    }
    uint64_t seed = 1469598103934665603ULL;  // FNV-1a of the input: the same runs each time
    for (char c : src) seed = (seed ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    std::string finding = kiln::oracle::check_escaping(r.tpl, seed);
    if (!finding.empty()) std::fprintf(stderr, "escaping oracle: %s", finding.c_str());
    FUZZ_CHECK(finding.empty());
    return 0;
}
