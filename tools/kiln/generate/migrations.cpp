#include "generate/migrations.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <system_error>

namespace kiln::gen {

std::optional<int64_t> migration_number(std::string_view file_name) {
    size_t digits = 0;
    while (digits < file_name.size() && file_name[digits] >= '0' && file_name[digits] <= '9') ++digits;
    if (digits == 0 || digits >= file_name.size() || file_name[digits] != '_' || !file_name.ends_with(".sql"))
        return std::nullopt;
    int64_t n = 0;
    auto [end, ec] = std::from_chars(file_name.data(), file_name.data() + digits, n);
    if (ec != std::errc()) return std::nullopt;
    return n;
}

int64_t next_migration_number(const std::vector<std::string>& file_names) {
    int64_t highest = 0;
    for (const std::string& f : file_names)
        if (auto n = migration_number(f)) highest = std::max(highest, *n);
    return highest + 1;
}

std::string migration_stem(int64_t number, std::string_view name) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%03lld_", static_cast<long long>(number));
    return buf + std::string(name);
}

std::vector<std::string> list_migrations(const std::filesystem::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<std::string> find_migration(const std::vector<std::string>& file_names, std::string_view name) {
    for (const std::string& f : file_names) {
        if (!migration_number(f)) continue;
        std::string_view rest = std::string_view(f).substr(f.find('_') + 1);
        rest.remove_suffix(4);  // ".sql"
        if (rest == name) return f;
    }
    return std::nullopt;
}

}  // namespace kiln::gen
