#include "db/migration_files.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace kiln::db::detail {
namespace {

namespace fs = std::filesystem;

bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// "001_create_posts.sql" → {1, "create_posts"}; false for anything else.
bool parse_name(const std::string& file, int64_t* version, std::string* name) {
    size_t digits = 0;
    while (digits < file.size() && file[digits] >= '0' && file[digits] <= '9') ++digits;
    if (digits == 0 || digits > 18 || digits >= file.size() || file[digits] != '_') return false;
    std::string rest = file.substr(digits + 1, file.size() - digits - 1 - 4);  // without ".sql"
    if (rest.empty() || !std::all_of(rest.begin(), rest.end(), name_char)) return false;
    *version = std::stoll(file.substr(0, digits));
    *name = rest;
    return true;
}

}  // namespace

[[noreturn]] void fail(const std::filesystem::path& file, std::string message, int code, std::string sql) {
    throw MigrationError(ErrorKind::Migration, code, "migration " + file.string() + ": " + message, std::move(sql),
                         file);
}

std::vector<Migration> list_files(const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) fail(dir, "no such directory");
    std::vector<Migration> out;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        std::string file = entry.path().filename().string();
        if (file.starts_with(".") || entry.path().extension() != ".sql") continue;
        if (!entry.is_regular_file(ec)) continue;
        Migration m{0, {}, entry.path()};
        if (!parse_name(file, &m.version, &m.name)) {
            fail(entry.path(), "bad file name: expected NNN_name.sql (digits, '_', then letters, digits, '_' or '-')");
        }
        out.push_back(std::move(m));
    }
    if (ec) fail(dir, "cannot list the directory: " + ec.message());
    std::sort(out.begin(), out.end(), [](const Migration& a, const Migration& b) {
        return a.version != b.version ? a.version < b.version : a.file < b.file;
    });
    for (size_t i = 1; i < out.size(); ++i) {
        if (out[i].version == out[i - 1].version) {
            fail(out[i].file, "duplicate migration number " + std::to_string(out[i].version) + " (also " +
                                  out[i - 1].file.string() + ")");
        }
    }
    return out;
}

std::string read_file(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) fail(file, "cannot read the file");
    return ss.str();
}

void check_name(const Migration& m, const std::string& recorded) {
    if (recorded != m.name) {
        fail(m.file, "version " + std::to_string(m.version) + " was applied as '" + recorded +
                         "'; a migration's number and name must not change once applied");
    }
}

}  // namespace kiln::db::detail
