// kiln::pg::migrate against a real PostgreSQL (tests/pg/pg_server.py): files applied
// once each in order, a failing file rolled back and named with its line, renamed
// versions refused, several nodes migrating at once; and arrays as parameters (the
// many-rows-in-one-statement form the TechEmpower updates use).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <kiln/pg.hpp>

#include "pg_test_support.hpp"

using kiln::Task;
namespace db = kiln::db;
namespace fs = std::filesystem;
namespace pg = kiln::pg;
using kiln::pg_test::run;

namespace {

pg::Options options() { return {.url = kiln::pg_test::pg_url()}; }

// Blocking queries for checking, through a short-lived client of their own.
long scalar(const std::string& sql_text) {
    long out = 0;
    run([&]() -> Task<> {
        pg::Client c(options());
        out = co_await c.scalar<long>(db::trusted_sql(sql_text));
    });
    return out;
}

void exec(const std::string& sql_text) {
    run([&]() -> Task<> {
        pg::Client c(options());
        co_await c.exec(db::trusted_sql(sql_text));
    });
}

class Dir {
public:
    Dir() : path_(fs::temp_directory_path() / ("kiln-pg-migrate-" + std::to_string(::getpid()) + "-" +
                                                std::to_string(counter_++))) {
        fs::create_directories(path_);
    }
    ~Dir() { fs::remove_all(path_); }
    void write(const std::string& name, const std::string& text) { std::ofstream(path_ / name) << text; }
    const fs::path& path() const { return path_; }

private:
    static inline int counter_ = 0;
    fs::path path_;
};

}  // namespace

TEST(PgMigrate, AppliesEachFileOnceInOrder) {
    exec("DROP TABLE IF EXISTS kiln_migrations, m_items");
    Dir dir;
    dir.write("002_add_price.sql", "ALTER TABLE m_items ADD COLUMN price numeric NOT NULL DEFAULT 0;\n");
    dir.write("001_create_items.sql",
              "CREATE TABLE m_items (id serial PRIMARY KEY, name text NOT NULL);\n"
              "INSERT INTO m_items (name) VALUES ('tea'), ('cake');\n");
    dir.write("README", "not a migration");
    std::vector<db::Migration> applied = pg::migrate(options(), dir.path());
    ASSERT_EQ(applied.size(), 2u);
    EXPECT_EQ(applied[0].version, 1);
    EXPECT_EQ(applied[0].name, "create_items");
    EXPECT_EQ(applied[1].name, "add_price");
    EXPECT_EQ(scalar("SELECT count(*) FROM m_items WHERE price = 0"), 2);
    EXPECT_TRUE(pg::migrate(options(), dir.path()).empty());  // nothing new: nothing runs twice
    EXPECT_EQ(scalar("SELECT count(*) FROM m_items"), 2);
    EXPECT_EQ(scalar("SELECT count(*) FROM kiln_migrations"), 2);

    dir.write("003_more.sql", "INSERT INTO m_items (name) VALUES ('pie');");
    applied = pg::migrate(options(), dir.path());
    ASSERT_EQ(applied.size(), 1u);
    EXPECT_EQ(applied[0].version, 3);
    EXPECT_EQ(scalar("SELECT count(*) FROM m_items"), 3);
}

TEST(PgMigrate, AFailingFileIsRolledBackAndNamedWithItsLine) {
    exec("DROP TABLE IF EXISTS kiln_migrations, m_half");
    Dir dir;
    dir.write("001_half.sql",
              "CREATE TABLE m_half (id int);\n"
              "INSERT INTO m_half VALUES (1);\n"
              "\n"
              "INSERT INTO m_nowhere VALUES (2);\n");
    try {
        pg::migrate(options(), dir.path());
        FAIL() << "a failing migration must throw";
    } catch (const db::MigrationError& e) {
        std::string what = e.what();
        EXPECT_NE(what.find("001_half.sql"), std::string::npos) << what;
        EXPECT_NE(what.find("line 4"), std::string::npos) << what;
        EXPECT_NE(what.find("m_nowhere"), std::string::npos) << what;
        EXPECT_NE(what.find("42P01"), std::string::npos) << what;
        EXPECT_EQ(e.file().filename(), "001_half.sql");
    }
    EXPECT_EQ(scalar("SELECT count(*) FROM pg_tables WHERE tablename = 'm_half'"), 0);  // nothing left behind
    EXPECT_EQ(scalar("SELECT count(*) FROM kiln_migrations"), 0);

    dir.write("001_half.sql", "CREATE TABLE m_half (id int);\n");  // mended: applies
    EXPECT_EQ(pg::migrate(options(), dir.path()).size(), 1u);
}

// The app's statement_timeout bounds its requests' queries; a migration that builds an
// index for longer failed with 57014, and the node did not start.
TEST(PgMigrate, TheAppsStatementTimeoutDoesNotCutAMigration) {
    exec("DROP TABLE IF EXISTS kiln_migrations");
    Dir dir;
    dir.write("001_slow.sql", "SELECT pg_sleep(0.5);\n");
    pg::Options o = options();
    o.statement_timeout = std::chrono::milliseconds(200);
    EXPECT_EQ(pg::migrate(o, dir.path()).size(), 1u);
}

TEST(PgMigrate, RefusesARenamedVersionAndATransactionInAFile) {
    exec("DROP TABLE IF EXISTS kiln_migrations, m_one");
    Dir dir;
    dir.write("001_one.sql", "CREATE TABLE m_one (id int);");
    pg::migrate(options(), dir.path());
    fs::rename(dir.path() / "001_one.sql", dir.path() / "001_renamed.sql");
    EXPECT_THROW(pg::migrate(options(), dir.path()), db::MigrationError);

    Dir tx;
    exec("DROP TABLE IF EXISTS kiln_migrations");
    tx.write("001_commits.sql", "CREATE TABLE IF NOT EXISTS m_one (id int); COMMIT;");
    try {
        pg::migrate(options(), tx.path());
        FAIL() << "COMMIT in a migration must be refused";
    } catch (const db::MigrationError& e) {
        EXPECT_NE(std::string(e.what()).find("not allowed"), std::string::npos) << e.what();
    }
}

TEST(PgMigrate, SeveralNodesAtOnceApplyEachFileExactlyOnce) {
    exec("DROP TABLE IF EXISTS kiln_migrations, m_counted");
    Dir dir;
    dir.write("001_create.sql", "CREATE TABLE m_counted (n int); SELECT pg_sleep(0.05);");
    dir.write("002_fill.sql", "INSERT INTO m_counted VALUES (1);");
    std::vector<std::thread> nodes;
    std::atomic<int> failures{0};
    for (int i = 0; i < 4; ++i) {
        nodes.emplace_back([&] {
            try {
                pg::migrate(options(), dir.path());
            } catch (...) {
                ++failures;
            }
        });
    }
    for (auto& t : nodes) t.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(scalar("SELECT count(*) FROM m_counted"), 1);
}

TEST(PgMigrate, WithoutAServerItSaysSo) {
    try {
        pg::migrate({.url = "postgresql://nobody@127.0.0.1:1/none", .connect_timeout = std::chrono::milliseconds(2000)},
                    fs::temp_directory_path());
        FAIL() << "no server must throw";
    } catch (const db::Error& e) {
        EXPECT_EQ(e.kind(), db::ErrorKind::Io);
        EXPECT_NE(std::string(e.what()).find("cannot connect to PostgreSQL"), std::string::npos) << e.what();
    }
}

TEST(PgArrays, VectorsBindAsArraysForManyRowsInOneStatement) {
    run([&]() -> Task<> {
        pg::Client c(options());
        co_await c.exec("DROP TABLE IF EXISTS a_rows");
        co_await c.exec("CREATE TABLE a_rows (id int PRIMARY KEY, n int, label text)");
        // (Named, not temporaries in the co_await: GCC 12 miscompiles braced lists there.)
        std::vector<int> ids{1, 2, 3};
        std::vector<std::string> labels{"plain", "with \"quotes\" and \\ slash", "{braces}, commas"};
        co_await c.exec("INSERT INTO a_rows SELECT unnest($1::int[]), 0, unnest($2::text[])", ids, labels);
        std::vector<int32_t> changed{1, 3};
        std::vector<int64_t> numbers{10, -30};
        pg::Result upd = co_await c.exec(
            "UPDATE a_rows SET n = v.n FROM (SELECT unnest($1::int[]) AS id, unnest($2::int[]) AS n) AS v "
            "WHERE a_rows.id = v.id",
            changed, numbers);
        EXPECT_EQ(upd.affected(), 2);
        pg::Result rows = co_await c.exec("SELECT id, n, label FROM a_rows ORDER BY id");
        EXPECT_EQ(rows.size(), 3u);
        if (rows.size() != 3u) co_return;
        EXPECT_EQ(rows[0].get<int>(1), 10);
        EXPECT_EQ(rows[1].get<int>(1), 0);
        EXPECT_EQ(rows[2].get<int>(1), -30);
        EXPECT_EQ(rows[1].get<std::string>(2), "with \"quotes\" and \\ slash");
        EXPECT_EQ(rows[2].get<std::string>(2), "{braces}, commas");
        std::vector<double> two{0.5, 1e300};
        long doubles = co_await c.scalar<long>("SELECT cardinality($1::float8[])", two);
        EXPECT_EQ(doubles, 2);
        std::vector<int> empty;
        long none = co_await c.scalar<long>("SELECT coalesce(cardinality($1::int[]), -1)", empty);
        EXPECT_EQ(none, 0);
        // A null const char* is a NULL element (it crashed, a string_view of nullptr).
        std::vector<const char*> some{"a", nullptr};
        long nulls = co_await c.scalar<long>("SELECT count(*) FROM unnest($1::text[]) AS v WHERE v IS NULL", some);
        EXPECT_EQ(nulls, 1);
        // A float8 past a float's range is a type mismatch, not undefined behaviour.
        pg::Result big = co_await c.exec("SELECT 1e39::float8, 'Infinity'::float8");
        EXPECT_THROW(big[0].get<float>(0), db::Error);
        EXPECT_EQ(big[0].get<float>(1), std::numeric_limits<float>::infinity());
        EXPECT_EQ(big[0].get<double>(0), 1e39);
        co_await c.exec("DROP TABLE a_rows");
    });
}
