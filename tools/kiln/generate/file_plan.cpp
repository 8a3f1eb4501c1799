#include "generate/file_plan.hpp"

#include <fstream>
#include <system_error>
#include <utility>

#include "generate/project.hpp"

namespace kiln::gen {
namespace fs = std::filesystem;

void FilePlan::add(fs::path rel, std::string content) { entries_.push_back({std::move(rel), std::move(content), Entry::File}); }
void FilePlan::edit(fs::path rel, std::string content) { entries_.push_back({std::move(rel), std::move(content), Entry::Edit}); }
void FilePlan::add_dir(fs::path rel) { entries_.push_back({std::move(rel), {}, Entry::Dir}); }

std::vector<std::string> FilePlan::conflicts(const fs::path& root) const {
    std::vector<std::string> out;
    for (const Entry& e : entries_) {
        if (e.kind != Entry::File) continue;
        std::error_code ec;
        if (!fs::exists(root / e.rel, ec)) continue;
        auto old = read_text_file(root / e.rel);
        if (!old || *old != e.content) out.push_back(e.rel.string());
    }
    return out;
}

std::string FilePlan::write(const fs::path& root, std::FILE* log) const {
    // The caller checked conflicts(); with --force, those files are overwritten here.
    for (const Entry& e : entries_) {
        fs::path path = root / e.rel;
        std::error_code ec;
        if (e.kind == Entry::Dir) {
            bool made = fs::create_directories(path, ec);
            if (ec) return "cannot create " + path.string() + ": " + ec.message();
            std::fprintf(log, "  %-9s %s/\n", made ? "create" : "exists", e.rel.string().c_str());
            continue;
        }
        bool existed = fs::exists(path, ec);
        auto old = existed ? read_text_file(path) : std::nullopt;
        const char* verb = !existed ? "create" : (old && *old == e.content) ? "identical"
                         : e.kind == Entry::Edit ? "update" : "force";
        if (std::string_view(verb) != "identical") {
            fs::create_directories(path.parent_path(), ec);
            std::ofstream out(path, std::ios::binary | std::ios::trunc);
            out << e.content;
            out.close();
            if (!out) return "cannot write " + path.string();
        }
        std::fprintf(log, "  %-9s %s\n", verb, e.rel.string().c_str());
    }
    return {};
}

}  // namespace kiln::gen
