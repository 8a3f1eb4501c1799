// kiln generate auth: which files it writes into a project and what its
// migrations are called, decided without rendering anything (so the unit test sees
// the plan; generate_command.cpp renders each file from templates/auth/).
//
// The accounts are kiln::auth's (include/kiln/auth.hpp): its User and Failures
// models, tables users and auth_failures, so no models/ header is written. The
// project gets lib/auth.{hpp,cpp} (app::store(), app::accounts(), app::viewer()),
// the accounts controller, routes/accounts.cpp (register_routes_accounts, added at
// the project's markers like a scaffold's), the views and both migrations: SQLite's
// in db/migrations (applied by main()'s app::migrate_database(), like every
// scaffold's) and PostgreSQL's in db/migrations/postgresql (kiln::Store::migrate
// reads only that folder on PostgreSQL).
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "generate/project.hpp"

namespace kiln::gen {

// What the auth templates are given. Every value is an identifier, a migration
// stem made here, or the command line of a run that only accepted fixed words.
struct AuthSpec {
    std::string app;                   // the project's name: its database is data/APP.sqlite
    std::string command;               // "kiln generate auth", for the files' comments
    std::string migration;             // "003_create_users" (db/migrations/)
    std::string postgresql_migration;  // its twin in db/migrations/postgresql/
};

enum class AuthFile {
    Migration,
    PostgresqlMigration,
    LibHpp,
    LibCpp,
    ControllerHpp,
    ControllerCpp,
    Routes,
    SignupView,
    LoginView,
    PasswordView,
    NavPartial,
};

struct AuthPlan {
    AuthSpec spec;
    std::vector<std::pair<AuthFile, std::string>> files;  // each file and its path under the project root
};

// The route group: routes/accounts.cpp defines register_routes_accounts(app).
inline constexpr std::string_view kAuthRouteGroup = "accounts";

// The plan for project `p`. The SQLite migration is the project's existing
// NNN_create_users.sql if there is one (a second run writes the same file again),
// else the next number in db/migrations. The PostgreSQL one is the existing
// create_users of db/migrations/postgresql, else the same stem when that number is
// free there, else the next number of that folder.
AuthPlan plan_auth(const Project& p, std::string command);

}  // namespace kiln::gen
