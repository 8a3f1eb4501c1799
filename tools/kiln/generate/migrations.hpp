// Numbering of db/migrations: files are NNN_name.sql (kiln::db::migrate applies them
// in numeric order); a new one gets 1 + the highest number there, three digits at
// least, so names sort the way they are applied.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::gen {

// The number of a migration file name ("012_create_posts.sql" -> 12); nullopt for
// other names (no digits, no '_', not .sql).
std::optional<int64_t> migration_number(std::string_view file_name);
// 1 + the highest number among `file_names`; 1 when there is none.
int64_t next_migration_number(const std::vector<std::string>& file_names);
// "002_create_posts" for (2, "create_posts"); the caller adds ".sql".
std::string migration_stem(int64_t number, std::string_view name);
// The file names in `dir` (none if it does not exist).
std::vector<std::string> list_migrations(const std::filesystem::path& dir);
// The existing file whose name part is `name` ("create_posts"), if any.
std::optional<std::string> find_migration(const std::vector<std::string>& file_names, std::string_view name);

}  // namespace kiln::gen
