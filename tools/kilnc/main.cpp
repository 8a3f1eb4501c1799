// kilnc: compiles kiln templates to C++ (see include/kiln/view.hpp for the language
// and the names it produces). Normally run by kiln_add_views (cmake/KilnViews.cmake),
// one template per run:
//   kilnc --root VIEWS_DIR --out OUT_DIR [--namespace NAME] TEMPLATE.html...
// writes OUT_DIR/NAME/<path under VIEWS_DIR without .html>.hpp and .cpp. A header is
// rewritten only when its content changes, so sources including it are not rebuilt
// needlessly. Errors: "path:line:col: error: message" on stderr, exit status 1;
// usage errors exit 2.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "kilnc/codegen.hpp"
#include "kilnc/names.hpp"
#include "kilnc/parser.hpp"

namespace fs = std::filesystem;
using namespace kiln::kilnc;

namespace {

struct Options {
    fs::path root, out;
    std::string ns = "views";
    std::vector<std::string> templates;
};

int usage(const std::string& why) {
    std::cerr << "kilnc: " << why << "\n"
              << "usage: kilnc --root VIEWS_DIR --out OUT_DIR [--namespace NAME] TEMPLATE.html...\n";
    return 2;
}

std::optional<std::string> read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return std::move(s).str();
}

// Writes `content` to `p` unless it already holds exactly that (when `only_if_changed`).
bool write_file(const fs::path& p, const std::string& content, bool only_if_changed) {
    if (only_if_changed && read_file(p) == content) return true;
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << content;
    out.close();
    if (!out) {
        std::cerr << "kilnc: cannot write " << p.string() << ": " << std::strerror(errno) << "\n";
        return false;
    }
    return true;
}

// Compiles one template; false if it failed (the reason is printed).
bool compile(const Options& o, const std::string& arg) {
    fs::path abs = fs::absolute(arg).lexically_normal();
    fs::path rel = abs.lexically_relative(o.root);
    if (rel.empty() || *rel.begin() == "..") {
        std::cerr << arg << ": error: template is not under --root " << o.root.string() << "\n";
        return false;
    }
    std::optional<std::string> source = read_file(abs);
    if (!source) {
        std::cerr << arg << ": error: cannot read the template\n";
        return false;
    }
    TemplateLoader load = [&](const std::string& name) { return read_file(o.root / (name + ".html")); };
    ParseResult parsed = parse_template(*source, rel.generic_string(), load);
    if (parsed.error) {
        std::cerr << format_diagnostic(arg, *parsed.error) << "\n";
        return false;
    }
    fs::path base = o.out / o.ns / parsed.tpl.name.path;
    CodegenOptions co{o.ns, abs.string(), base.string() + ".hpp", base.string() + ".cpp"};
    Generated g = generate(parsed.tpl, co);
    return write_file(co.header_path, g.header, true) && write_file(co.source_path, g.source, false);
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        bool has_value = i + 1 < argc;
        if (a == "--root" && has_value) o.root = argv[++i];
        else if (a == "--out" && has_value) o.out = argv[++i];
        else if (a == "--namespace" && has_value) o.ns = argv[++i];
        else if (a == "--help" || a == "-h") return usage("compiles kiln templates to C++"), 0;
        else if (!a.empty() && a[0] == '-') return usage("unknown or incomplete option '" + a + "'");
        else o.templates.push_back(a);
    }
    if (o.root.empty() || o.out.empty() || o.templates.empty()) return usage("--root, --out and a template are required");
    if (!is_identifier(o.ns) || is_cpp_keyword(o.ns)) return usage("--namespace must be a C++ identifier");
    o.root = fs::absolute(o.root).lexically_normal();
    o.out = fs::absolute(o.out).lexically_normal();
    bool ok = true;
    for (const auto& t : o.templates) ok = compile(o, t) && ok;
    return ok ? 0 : 1;
}
