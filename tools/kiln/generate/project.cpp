#include "generate/project.hpp"

#include <fstream>
#include <sstream>
#include <system_error>

namespace kiln::gen {
namespace fs = std::filesystem;

namespace {
std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}
}  // namespace

std::optional<std::string> read_text_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::optional<Project> find_project(const fs::path& start) {
    std::error_code ec;
    fs::path dir = fs::absolute(start, ec);
    if (ec) return std::nullopt;
    for (int depth = 0; depth < 64; ++depth) {
        if (auto text = read_text_file(dir / "CMakeLists.txt")) {
            std::string_view first = std::string_view(*text).substr(0, text->find('\n'));
            if (first.starts_with(kAppMarker)) {
                std::string name(trim(first.substr(kAppMarker.size())));
                if (!name.empty()) return Project{dir, name};
            }
        }
        if (!dir.has_parent_path() || dir.parent_path() == dir) break;
        dir = dir.parent_path();
    }
    return std::nullopt;
}

std::optional<std::string> insert_before_marker(std::string_view text, std::string_view marker, std::string_view line) {
    size_t at = text.find(marker);
    if (at == text.npos) return std::nullopt;
    size_t line_start = text.rfind('\n', at);
    line_start = line_start == text.npos ? 0 : line_start + 1;
    std::string_view indent = text.substr(line_start, at - line_start);
    for (size_t i = 0; i < line_start;) {  // already there?
        size_t end = text.find('\n', i);
        if (end == text.npos || end > line_start) end = line_start;
        if (trim(text.substr(i, end - i)) == trim(line)) return std::string(text);
        i = end + 1;
    }
    std::string out(text.substr(0, line_start));
    out.append(indent).append(trim(line)).append("\n");
    out.append(text.substr(line_start));
    return out;
}

}  // namespace kiln::gen
