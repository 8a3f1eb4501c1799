// The files of a migrations directory (NNN_name.sql), shared by db::migrate
// (SQLite) and pg::migrate (PostgreSQL): what a migration is called, its order, and
// the errors that name its file.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <kiln/db.hpp>

namespace kiln::db::detail {

// Throws MigrationError "migration FILE: MESSAGE".
[[noreturn]] void fail(const std::filesystem::path& file, std::string message, int code = 0, std::string sql = {});
// dir's *.sql files in version order; throws on a bad name or a duplicate number.
std::vector<Migration> list_files(const std::filesystem::path& dir);
std::string read_file(const std::filesystem::path& file);
// Throws unless `recorded` (the name version m.version was applied under) is m's.
void check_name(const Migration& m, const std::string& recorded);

}  // namespace kiln::db::detail
