#include "generate/auth_plan.hpp"

#include <optional>

#include "generate/migrations.hpp"

namespace kiln::gen {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMigrationName = "create_users";

std::string stem_of(const std::string& file) { return file.substr(0, file.size() - 4); }  // without ".sql"

bool number_taken(const std::vector<std::string>& files, int64_t number) {
    for (const std::string& f : files)
        if (migration_number(f) == number) return true;
    return false;
}

}  // namespace

AuthPlan plan_auth(const Project& p, std::string command) {
    AuthPlan plan;
    AuthSpec& s = plan.spec;
    s.app = p.name;
    s.command = std::move(command);

    fs::path dir = p.root / "db" / "migrations";
    auto files = list_migrations(dir);
    int64_t number = 0;
    if (auto existing = find_migration(files, kMigrationName)) {
        s.migration = stem_of(*existing);
        number = *migration_number(*existing);
    } else {
        number = next_migration_number(files);
        s.migration = migration_stem(number, kMigrationName);
    }
    auto pg_files = list_migrations(dir / "postgresql");
    if (auto existing = find_migration(pg_files, kMigrationName)) s.postgresql_migration = stem_of(*existing);
    else if (!number_taken(pg_files, number)) s.postgresql_migration = s.migration;
    else s.postgresql_migration = migration_stem(next_migration_number(pg_files), kMigrationName);

    plan.files = {
        {AuthFile::Migration, "db/migrations/" + s.migration + ".sql"},
        {AuthFile::PostgresqlMigration, "db/migrations/postgresql/" + s.postgresql_migration + ".sql"},
        {AuthFile::LibHpp, "lib/auth.hpp"},
        {AuthFile::LibCpp, "lib/auth.cpp"},
        {AuthFile::ControllerHpp, "controllers/accounts_controller.hpp"},
        {AuthFile::ControllerCpp, "controllers/accounts_controller.cpp"},
        {AuthFile::Routes, "routes/accounts.cpp"},
        {AuthFile::SignupView, "views/accounts/signup.html"},
        {AuthFile::LoginView, "views/accounts/login.html"},
        {AuthFile::PasswordView, "views/accounts/password.html"},
        {AuthFile::NavPartial, "views/accounts/_nav.html"},
    };
    return plan;
}

}  // namespace kiln::gen
