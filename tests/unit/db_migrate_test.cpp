// Unit tests of db::migrate (src/db/migrate.cpp) against the fixture directories in
// tests/db/: numeric order, one record per file, skipping what is applied, and the
// error paths: a failing file leaves the previous version and names file and line;
// bad names, duplicate numbers, renamed applied files and COMMIT inside a file.
#include <kiln/db.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace kiln::db {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = KILN_DB_FIXTURES;

class MigrateTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("kiln_db_migrate_" + std::to_string(getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        db_.emplace(dir_ / "a.db");
    }
    void TearDown() override {
        db_.reset();
        fs::remove_all(dir_);
    }
    Database& db() { return *db_; }
    int64_t version() { return db().scalar<std::optional<int64_t>>("SELECT max(version) FROM kiln_migrations").value_or(0); }
    bool table_exists(const char* name) {
        return db().scalar<int>("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", name) == 1;
    }
    // A copy of a fixture directory that the test may change.
    fs::path copy_of(const char* fixture) {
        fs::path to = dir_ / fixture;
        fs::create_directories(to);
        fs::copy(kFixtures / fixture, to);
        return to;
    }
    static std::vector<int64_t> versions(const std::vector<Migration>& ms) {
        std::vector<int64_t> out;
        for (const Migration& m : ms) out.push_back(m.version);
        return out;
    }

    fs::path dir_;
    std::optional<Database> db_;
};

TEST_F(MigrateTest, AppliesFilesInNumericOrderAndRecordsEach) {
    std::vector<Migration> applied = migrate(db(), kFixtures / "migrations_ok");
    EXPECT_EQ(versions(applied), (std::vector<int64_t>{1, 2, 10}));
    EXPECT_EQ(applied[0].name, "create_posts");
    EXPECT_EQ(applied[2].file, kFixtures / "migrations_ok" / "10_seed_welcome.sql");
    EXPECT_EQ(version(), 10);
    EXPECT_EQ(db().scalar<std::string>("SELECT slug FROM posts WHERE title = ?", "Welcome"), "welcome");
    EXPECT_EQ(db().scalar<std::string>("SELECT name FROM kiln_migrations WHERE version = ?", 2), "add_slug");
    int64_t applied_at = db().scalar<int64_t>("SELECT applied_at FROM kiln_migrations WHERE version = ?", 1);
    EXPECT_LE(std::abs(db().scalar<int64_t>("SELECT unixepoch()") - applied_at), 5);
}

TEST_F(MigrateTest, SecondRunAppliesNothing) {
    migrate(db(), kFixtures / "migrations_ok");
    EXPECT_TRUE(migrate(db(), kFixtures / "migrations_ok").empty());
    EXPECT_EQ(db().scalar<int>("SELECT count(*) FROM posts"), 1);  // the seed ran once
    EXPECT_EQ(db().scalar<int>("SELECT count(*) FROM kiln_migrations"), 3);
}

TEST_F(MigrateTest, OnlyNewFilesAreAppliedLater) {
    fs::path dir = copy_of("migrations_ok");
    fs::path later = dir / "11_add_draft.sql";
    migrate(db(), dir);
    std::ofstream(later) << "ALTER TABLE posts ADD COLUMN draft INTEGER NOT NULL DEFAULT 0;\n";
    std::vector<Migration> applied = migrate(db(), dir);
    EXPECT_EQ(versions(applied), (std::vector<int64_t>{11}));
    EXPECT_EQ(db().scalar<int>("SELECT draft FROM posts"), 0);
}

TEST_F(MigrateTest, AnotherConnectionSeesTheAppliedVersion) {
    migrate(db(), kFixtures / "migrations_ok");
    Database other(dir_ / "a.db");
    EXPECT_TRUE(migrate(other, kFixtures / "migrations_ok").empty());
}

// ---------------------------------------------------------------- error paths

TEST_F(MigrateTest, ErrorFailingFileLeavesThePreviousVersionAndNamesFileAndLine) {
    fs::path file = kFixtures / "migrations_failing" / "003_add_tags.sql";
    try {
        migrate(db(), kFixtures / "migrations_failing");
        FAIL() << "expected a migration error";
    } catch (const MigrationError& e) {
        EXPECT_EQ(e.file(), file);
        std::string what = e.what();
        EXPECT_NE(what.find(file.string()), std::string::npos) << what;
        EXPECT_NE(what.find("line 4"), std::string::npos) << what;
        EXPECT_NE(what.find("no such table: post_tags"), std::string::npos) << what;
        EXPECT_NE(e.code(), 0);
    }
    EXPECT_EQ(version(), 2);
    EXPECT_TRUE(table_exists("posts"));
    EXPECT_FALSE(table_exists("tags"));  // the file's first statement was rolled back with it
    EXPECT_FALSE(table_exists("never_reached"));
}

TEST_F(MigrateTest, ErrorFixedFileIsAppliedOnTheNextRun) {
    fs::path dir = copy_of("migrations_failing");
    EXPECT_THROW(migrate(db(), dir), MigrationError);
    std::ofstream(dir / "003_add_tags.sql", std::ios::trunc) << "CREATE TABLE tags (name TEXT PRIMARY KEY);\n";
    EXPECT_EQ(versions(migrate(db(), dir)), (std::vector<int64_t>{3, 4}));
    EXPECT_TRUE(table_exists("tags"));
}

TEST_F(MigrateTest, ErrorBadFileNameIsNamedAndNothingRuns) {
    try {
        migrate(db(), kFixtures / "migrations_bad_name");
        FAIL();
    } catch (const MigrationError& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Migration);
        EXPECT_EQ(e.file().filename(), "create_users.sql");
        EXPECT_NE(std::string(e.what()).find("create_users.sql"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("NNN_name.sql"), std::string::npos);
    }
    EXPECT_FALSE(table_exists("posts"));
}

TEST_F(MigrateTest, ErrorOtherBadNames) {
    for (const char* name : {"1-create.sql", "001_.sql", "001_a b.sql", "0x1_a.sql", "_a.sql"}) {
        fs::path dir = dir_ / "bad";
        fs::remove_all(dir);
        fs::create_directories(dir);
        std::ofstream(dir / name) << "SELECT 1;";
        EXPECT_THROW(migrate(db(), dir), MigrationError) << name;
    }
}

TEST_F(MigrateTest, ErrorDuplicateNumbersNameBothFiles) {
    try {
        migrate(db(), kFixtures / "migrations_duplicate");
        FAIL();
    } catch (const MigrationError& e) {
        std::string what = e.what();
        EXPECT_NE(what.find("001_create_posts.sql"), std::string::npos) << what;
        EXPECT_NE(what.find("001_create_users.sql"), std::string::npos) << what;
        EXPECT_NE(what.find("duplicate"), std::string::npos) << what;
    }
    EXPECT_FALSE(table_exists("posts"));
}

TEST_F(MigrateTest, ErrorRenamingAnAppliedFile) {
    fs::path dir = copy_of("migrations_ok");
    migrate(db(), dir);
    fs::rename(dir / "002_add_slug.sql", dir / "002_add_the_slug.sql");
    try {
        migrate(db(), dir);
        FAIL();
    } catch (const MigrationError& e) {
        EXPECT_NE(std::string(e.what()).find("was applied as 'add_slug'"), std::string::npos) << e.what();
    }
}

TEST_F(MigrateTest, ErrorCommitInsideAFileIsRefused) {
    try {
        migrate(db(), kFixtures / "migrations_commit");
        FAIL();
    } catch (const MigrationError& e) {
        EXPECT_NE(std::string(e.what()).find("not allowed in a migration"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(table_exists("a"));
    EXPECT_EQ(version(), 0);
    Transaction tx = db().transaction();  // kiln's transaction state is intact
    tx.commit();
}

// SQLite's way to change a table beyond ALTER TABLE: make the new one, copy, drop the
// old, rename. With foreign keys on, the DROP deleted every comment (ON DELETE CASCADE)
// and the migration was recorded as a success.
TEST_F(MigrateTest, RebuildingATableOthersReferToKeepsTheirRows) {
    fs::path dir = dir_ / "rebuild";
    fs::create_directories(dir);
    std::ofstream(dir / "001_posts.sql") << "CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT);\n"
                                            "CREATE TABLE comments (id INTEGER PRIMARY KEY, post_id INTEGER NOT NULL "
                                            "REFERENCES posts(id) ON DELETE CASCADE, body TEXT);\n"
                                            "INSERT INTO posts VALUES (1, 'a'), (2, 'b');\n"
                                            "INSERT INTO comments VALUES (1, 1, 'x'), (2, 2, 'y'), (3, 2, 'z');\n";
    std::ofstream(dir / "002_posts_title_not_null.sql")
        << "CREATE TABLE new_posts (id INTEGER PRIMARY KEY, title TEXT NOT NULL);\n"
           "INSERT INTO new_posts SELECT id, coalesce(title, '') FROM posts;\n"
           "DROP TABLE posts;\n"
           "ALTER TABLE new_posts RENAME TO posts;\n";
    EXPECT_EQ(versions(migrate(db(), dir)), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(db().scalar<int>("SELECT count(*) FROM comments"), 3);
    EXPECT_EQ(db().scalar<int>("PRAGMA foreign_keys"), 1);  // on again afterwards
    EXPECT_THROW(db().exec("INSERT INTO comments VALUES (4, 9, 'no such post')"), ConstraintViolation);
}

TEST_F(MigrateTest, ErrorAFileThatLeavesRowsPointingNowhereFails) {
    fs::path dir = dir_ / "dangling";
    fs::create_directories(dir);
    std::ofstream(dir / "001_posts.sql") << "CREATE TABLE posts (id INTEGER PRIMARY KEY);\n"
                                            "CREATE TABLE comments (id INTEGER PRIMARY KEY, post_id INTEGER "
                                            "REFERENCES posts(id));\n"
                                            "INSERT INTO posts VALUES (1);\nINSERT INTO comments VALUES (7, 1);\n";
    std::ofstream(dir / "002_empty_posts.sql") << "DELETE FROM posts;\n";
    try {
        migrate(db(), dir);
        FAIL() << "expected a migration error";
    } catch (const MigrationError& e) {
        std::string what = e.what();
        EXPECT_NE(what.find("002_empty_posts.sql"), std::string::npos) << what;
        EXPECT_NE(what.find("comments rowid 7 (a reference to posts)"), std::string::npos) << what;
    }
    EXPECT_EQ(version(), 1);
    EXPECT_EQ(db().scalar<int>("SELECT count(*) FROM posts"), 1);  // rolled back
    EXPECT_EQ(db().scalar<int>("PRAGMA foreign_keys"), 1);
}

TEST_F(MigrateTest, ErrorANulByteFailsTheFileInsteadOfEndingItThere) {
    fs::path dir = dir_ / "nul";
    fs::create_directories(dir);
    std::string text = "CREATE TABLE a (x);\n";
    text += '\0';
    text += "\nCREATE TABLE b (x);\n";
    std::ofstream(dir / "001_ab.sql", std::ios::binary) << text;
    try {
        migrate(db(), dir);
        FAIL() << "expected a migration error";
    } catch (const MigrationError& e) {
        EXPECT_NE(std::string(e.what()).find("line 2: a NUL byte"), std::string::npos) << e.what();
    }
    EXPECT_EQ(version(), 0);
    EXPECT_FALSE(table_exists("a"));
}

TEST_F(MigrateTest, ErrorMissingDirectory) {
    EXPECT_THROW(migrate(db(), dir_ / "nope"), MigrationError);
}

}  // namespace
}  // namespace kiln::db
