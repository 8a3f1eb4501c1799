// kiln's generators, the parts without files or processes: name inflection, field
// types, migration numbering, the marked-line edits, the no-overwrite file plan,
// the files `kiln generate auth` plans.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "generate/auth_plan.hpp"
#include "generate/fields.hpp"
#include "generate/file_plan.hpp"
#include "generate/migrations.hpp"
#include "generate/names.hpp"
#include "generate/project.hpp"
#include "generate/watch.hpp"

using namespace kiln::gen;
namespace fs = std::filesystem;

TEST(Names, ResourceNamesFromSingular) {
    auto r = resource_names("post");
    ASSERT_TRUE(r.names) << r.error;
    EXPECT_EQ(r.names->singular, "post");
    EXPECT_EQ(r.names->plural, "posts");
    EXPECT_EQ(r.names->class_name, "Post");
    EXPECT_EQ(r.names->controller, "posts_controller");
    EXPECT_EQ(r.names->url, "/posts");
    EXPECT_EQ(r.names->human_plural, "Posts");
}

TEST(Names, CamelCaseAndDashesBecomeSnake) {
    for (const char* typed : {"BlogPost", "blog_post", "blog-post", "blogPost"}) {
        auto r = resource_names(typed);
        ASSERT_TRUE(r.names) << typed << ": " << r.error;
        EXPECT_EQ(r.names->singular, "blog_post") << typed;
        EXPECT_EQ(r.names->plural, "blog_posts") << typed;
        EXPECT_EQ(r.names->class_name, "BlogPost") << typed;
        EXPECT_EQ(r.names->human, "Blog post") << typed;
    }
    EXPECT_EQ(to_snake("HTTPServer"), "http_server");
}

TEST(Names, PluralRules) {
    EXPECT_EQ(pluralize("category"), "categories");
    EXPECT_EQ(pluralize("day"), "days");
    EXPECT_EQ(pluralize("box"), "boxes");
    EXPECT_EQ(pluralize("match"), "matches");
    EXPECT_EQ(pluralize("bus"), "buses");
    EXPECT_EQ(pluralize("person"), "people");
    EXPECT_EQ(pluralize("line_item"), "line_items");
    EXPECT_EQ(pluralize("news"), "news");
    for (const char* w : {"post", "category", "box", "match", "person", "line_item", "address"})
        EXPECT_EQ(singularize(pluralize(w)), w) << w;
}

TEST(Names, ControllerNameIsThePlural) {
    auto r = controller_names("pages");
    ASSERT_TRUE(r.names) << r.error;
    EXPECT_EQ(r.names->plural, "pages");
    EXPECT_EQ(r.names->controller, "pages_controller");
    EXPECT_EQ(r.names->url, "/pages");
}

TEST(Names, UncountableGetsADistinctPlural) {
    auto r = resource_names("news");  // the list and one item need two C++ names
    ASSERT_TRUE(r.names) << r.error;
    EXPECT_NE(r.names->singular, r.names->plural);
}

TEST(Fields, TypesMapToMembersColumnsAndInputs) {
    std::string error;
    auto f = parse_fields({"title:string", "body:text", "count:integer", "big:bigint", "price:float", "done:boolean",
                           "due_at:datetime"},
                          &error);
    ASSERT_TRUE(f) << error;
    ASSERT_EQ(f->size(), 7u);
    EXPECT_EQ((*f)[0].info().cpp_type, "std::string");
    EXPECT_EQ((*f)[0].info().sql_column, "TEXT NOT NULL DEFAULT ''");
    EXPECT_EQ((*f)[1].info().input, "textarea");
    EXPECT_EQ((*f)[2].info().cpp_type, "int32_t");
    EXPECT_EQ((*f)[3].info().cpp_type, "int64_t");
    EXPECT_EQ((*f)[4].info().cpp_type, "double");
    EXPECT_EQ((*f)[4].info().sql_column, "REAL NOT NULL DEFAULT 0");
    EXPECT_EQ((*f)[5].info().cpp_type, "bool");
    EXPECT_FALSE((*f)[5].info().required);
    EXPECT_EQ((*f)[6].info().cpp_type, "std::chrono::sys_seconds");
    EXPECT_EQ((*f)[6].info().input, "datetime-local");
    EXPECT_EQ((*f)[6].label(), "Due at");
}

TEST(Migrations, NextNumberFollowsTheHighest) {
    EXPECT_EQ(next_migration_number({}), 1);
    EXPECT_EQ(next_migration_number({"001_create_posts.sql", "README", "003_add_tags.sql", "002_x.sql"}), 4);
    EXPECT_EQ(next_migration_number({"10_a.sql", "9_b.sql"}), 11);  // numeric, not by name
    EXPECT_EQ(migration_stem(2, "create_posts"), "002_create_posts");
    EXPECT_EQ(migration_stem(1234, "x"), "1234_x");
    EXPECT_EQ(find_migration({"001_create_posts.sql", "002_create_tags.sql"}, "create_tags"), "002_create_tags.sql");
    EXPECT_FALSE(find_migration({"001_create_posts.sql"}, "create_post"));
}

TEST(Markers, InsertBeforeTheMarkerOnceAtItsIndentation) {
    std::string main = "int main() {\n    app.get(x);\n    // kiln:routes here\n    return 0;\n}\n";
    auto once = insert_before_marker(main, "// kiln:routes", "register_routes_posts(app);");
    ASSERT_TRUE(once);
    EXPECT_EQ(*once, "int main() {\n    app.get(x);\n    register_routes_posts(app);\n    // kiln:routes here\n    return 0;\n}\n");
    EXPECT_EQ(insert_before_marker(*once, "// kiln:routes", "register_routes_posts(app);"), *once);
}

namespace {
struct TempDir {
    fs::path path = fs::temp_directory_path() / ("kiln_generate_test_" + std::to_string(::getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
};
void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}
}  // namespace

TEST(FilePlan, IdenticalFilesAreNotConflicts) {
    TempDir dir;
    write(dir.path / "a.txt", "same");
    write(dir.path / "b.txt", "old");
    FilePlan plan;
    plan.add("a.txt", "same");
    plan.add("b.txt", "new");
    plan.add("sub/c.txt", "c");
    EXPECT_EQ(plan.conflicts(dir.path), std::vector<std::string>{"b.txt"});
    std::FILE* log = std::tmpfile();
    EXPECT_EQ(plan.write(dir.path, log), "");
    std::fclose(log);
    EXPECT_EQ(read_text_file(dir.path / "b.txt"), "new");
    EXPECT_EQ(read_text_file(dir.path / "sub/c.txt"), "c");
}

TEST(Project, FoundFromASubdirectory) {
    TempDir dir;
    write(dir.path / "CMakeLists.txt", "# kiln-app: blog\nproject(blog)\n");
    fs::create_directories(dir.path / "views" / "posts");
    auto p = find_project(dir.path / "views" / "posts");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->name, "blog");
    EXPECT_EQ(fs::canonical(p->root), fs::canonical(dir.path));
}

TEST(Watch, SeesAddedChangedAndRemovedFiles) {
    TempDir dir;
    write(dir.path / "views" / "home" / "index.html", "a");
    Snapshot s1 = snapshot_sources(dir.path);
    EXPECT_EQ(first_change(s1, snapshot_sources(dir.path)), "");
    write(dir.path / "controllers" / "x.cpp", "b");
    Snapshot s2 = snapshot_sources(dir.path);
    EXPECT_EQ(first_change(s1, s2), "controllers/x.cpp");
    fs::remove(dir.path / "controllers" / "x.cpp");
    EXPECT_EQ(first_change(s2, snapshot_sources(dir.path)), "controllers/x.cpp");
    write(dir.path / "public" / "app.css", "c");  // served from disk: no rebuild
    EXPECT_EQ(first_change(s1, snapshot_sources(dir.path)), "");
}

namespace {
std::vector<std::string> paths_of(const AuthPlan& plan) {
    std::vector<std::string> out;
    for (const auto& [what, path] : plan.files) out.push_back(path);
    return out;
}
}  // namespace

TEST(AuthPlan, ListsEveryFileAndNumbersTheMigrationAfterAScaffold) {
    TempDir dir;
    write(dir.path / "CMakeLists.txt", "# kiln-app: demo\n");
    write(dir.path / "db" / "migrations" / "001_create_posts.sql", "CREATE TABLE posts (id INTEGER PRIMARY KEY);\n");
    auto p = find_project(dir.path);
    ASSERT_TRUE(p);
    AuthPlan plan = plan_auth(*p, "kiln generate auth");
    EXPECT_EQ(plan.spec.app, "demo");
    EXPECT_EQ(plan.spec.command, "kiln generate auth");
    EXPECT_EQ(plan.spec.migration, "002_create_users");
    EXPECT_EQ(plan.spec.postgresql_migration, "002_create_users");
    EXPECT_EQ(paths_of(plan), (std::vector<std::string>{
                                  "db/migrations/002_create_users.sql",
                                  "db/migrations/postgresql/002_create_users.sql",
                                  "lib/auth.hpp",
                                  "lib/auth.cpp",
                                  "controllers/accounts_controller.hpp",
                                  "controllers/accounts_controller.cpp",
                                  "routes/accounts.cpp",
                                  "views/accounts/signup.html",
                                  "views/accounts/login.html",
                                  "views/accounts/password.html",
                                  "views/accounts/_nav.html",
                              }));
    // no models/ header: kiln::auth::User is the model
    for (const std::string& f : paths_of(plan)) EXPECT_FALSE(f.starts_with("models/")) << f;
    EXPECT_EQ(kAuthRouteGroup, "accounts");
}

TEST(AuthPlan, EmptyProjectStartsAtOne) {
    TempDir dir;
    write(dir.path / "CMakeLists.txt", "# kiln-app: shop\n");
    fs::create_directories(dir.path / "db" / "migrations");
    AuthPlan plan = plan_auth(*find_project(dir.path), "kiln generate auth");
    EXPECT_EQ(plan.spec.migration, "001_create_users");
    EXPECT_EQ(plan.files.front().second, "db/migrations/001_create_users.sql");
}

TEST(AuthPlan, ASecondRunReusesTheMigrationsItWrote) {
    TempDir dir;
    write(dir.path / "CMakeLists.txt", "# kiln-app: demo\n");
    write(dir.path / "db" / "migrations" / "001_create_posts.sql", "x");
    write(dir.path / "db" / "migrations" / "002_create_users.sql", "x");
    write(dir.path / "db" / "migrations" / "003_create_tags.sql", "x");  // a scaffold made since
    write(dir.path / "db" / "migrations" / "postgresql" / "002_create_users.sql", "x");
    AuthPlan plan = plan_auth(*find_project(dir.path), "kiln generate auth");
    EXPECT_EQ(plan.spec.migration, "002_create_users");
    EXPECT_EQ(plan.spec.postgresql_migration, "002_create_users");
}

TEST(AuthPlan, PostgresqlNumberTakenThereGetsThatFoldersNext) {
    TempDir dir;
    write(dir.path / "CMakeLists.txt", "# kiln-app: demo\n");
    write(dir.path / "db" / "migrations" / "001_create_posts.sql", "x");
    write(dir.path / "db" / "migrations" / "postgresql" / "001_create_posts.sql", "x");
    write(dir.path / "db" / "migrations" / "postgresql" / "002_add_index.sql", "x");  // PostgreSQL only
    AuthPlan plan = plan_auth(*find_project(dir.path), "kiln generate auth");
    EXPECT_EQ(plan.spec.migration, "002_create_users");
    EXPECT_EQ(plan.spec.postgresql_migration, "003_create_users");  // never a duplicate number
    EXPECT_EQ(plan.files[1].second, "db/migrations/postgresql/003_create_users.sql");
}

// ---------------------------------------------------------------- error paths

TEST(NamesErrors, NotIdentifiersOrTakenNamesAreRefused) {
    for (const char* bad : {"", "9lives", "my post", "post!", "_post", "post_", "a__b", "café"}) {
        auto r = resource_names(bad);
        EXPECT_FALSE(r.names) << bad;
        EXPECT_NE(r.error.find("not a usable name"), std::string::npos) << bad << ": " << r.error;
    }
    EXPECT_NE(resource_names("class").error.find("C++ keyword"), std::string::npos);
    EXPECT_NE(resource_names("view").error.find("uses itself"), std::string::npos);  // plural "views"
    EXPECT_NE(resource_names("content").error.find("uses itself"), std::string::npos);
    EXPECT_FALSE(is_identifier("new"));
    EXPECT_TRUE(is_identifier("blog2"));
}

TEST(FieldsErrors, BadSpecsNameTheProblem) {
    auto error_of = [](std::vector<std::string_view> specs) {
        std::string error;
        EXPECT_FALSE(parse_fields(specs, &error));
        return error;
    };
    EXPECT_NE(error_of({"title:str"}).find("unknown type 'str' (types: string, text, integer, bigint, float, "
                                           "boolean, datetime)"),
              std::string::npos);
    EXPECT_NE(error_of({"title"}).find("expected NAME:TYPE"), std::string::npos);
    EXPECT_NE(error_of({"title:"}).find("expected NAME:TYPE"), std::string::npos);
    EXPECT_NE(error_of({"Title:string"}).find("lower_snake_case"), std::string::npos);
    EXPECT_NE(error_of({"class:string"}).find("lower_snake_case"), std::string::npos);
    EXPECT_NE(error_of({"id:integer"}).find("added to every model"), std::string::npos);
    EXPECT_NE(error_of({"created_at:datetime"}).find("added to every model"), std::string::npos);
    EXPECT_NE(error_of({"a:string", "a:text"}).find("named twice"), std::string::npos);
}

TEST(MigrationsErrors, OtherFileNamesAreNotMigrations) {
    EXPECT_FALSE(migration_number("create_posts.sql"));
    EXPECT_FALSE(migration_number("001create.sql"));
    EXPECT_FALSE(migration_number("001_create.txt"));
    EXPECT_FALSE(migration_number("99999999999999999999_x.sql"));  // does not fit
    EXPECT_EQ(migration_number("007_x.sql"), 7);
}

TEST(MarkersErrors, MissingMarkerIsReported) {
    EXPECT_FALSE(insert_before_marker("int main() {}\n", "// kiln:routes", "x();"));
}

TEST(ProjectErrors, NoMarkerNoProject) {
    TempDir dir;
    write(dir.path / "CMakeLists.txt", "project(other)\n");
    EXPECT_FALSE(find_project(dir.path));
}
