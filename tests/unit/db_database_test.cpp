// Unit tests of db::Database (include/kiln/db.hpp, src/db/database.cpp,
// statement.cpp, per_thread.cpp): opening with the promised settings, the one exec()
// primitive and its statement cache, values stored verbatim whatever they contain,
// connections per thread with concurrent writers, then the error paths, including
// what a client sees when a handler lets a db::Error escape.
#include <kiln/app.hpp>
#include <kiln/testing.hpp>
#include <kiln/db.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "util/log.hpp"

namespace kiln::db {
namespace {

namespace fs = std::filesystem;

class DbTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("kiln_db_database_" + std::to_string(getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
};

// ---------------------------------------------------------------- opening

TEST_F(DbTest, OpensCreatingParentDirectoriesInWalModeWithForeignKeys) {
    fs::path path = dir_ / "deep" / "er" / "app.db";
    Database db(path);
    EXPECT_TRUE(fs::exists(path));
    EXPECT_EQ(db.path(), path);
    EXPECT_EQ(db.scalar<std::string>("PRAGMA journal_mode"), "wal");
    EXPECT_EQ(db.scalar<int>("PRAGMA foreign_keys"), 1);
    EXPECT_EQ(db.scalar<int>("PRAGMA synchronous"), 1);  // NORMAL
    EXPECT_EQ(db.scalar<int>("PRAGMA busy_timeout"), 5000);
}

TEST_F(DbTest, ANewDatabaseAndItsLogAreTheOwnersOnly) {
    // It holds users' emails and password hashes: not for the machine's other users.
    // Under the usual umask (022), which left it readable by all; restored after.
    const mode_t umask_was = umask(022);
    struct Restore {
        mode_t mask;
        ~Restore() { umask(mask); }
    } restore{umask_was};
    fs::path path = dir_ / "app.db";
    {
        Database db(path);
        db.exec("CREATE TABLE t (x INTEGER)");
        db.exec("INSERT INTO t VALUES (1)");
        for (const char* suffix : {"", "-wal", "-shm"}) {
            fs::path f = path.string() + suffix;
            ASSERT_TRUE(fs::exists(f)) << f;
            EXPECT_EQ(fs::status(f).permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none)
                << f;
        }
    }
    fs::permissions(path, fs::perms::group_read | fs::perms::others_read, fs::perm_options::add);
    Database again(path);  // one that exists keeps the mode its owner gave it
    EXPECT_EQ(again.scalar<int>("SELECT x FROM t"), 1);
    EXPECT_NE(fs::status(path).permissions() & fs::perms::others_read, fs::perms::none);
}

TEST_F(DbTest, BusyTimeoutIsConfigurable) {
    Database db(dir_ / "a.db", Options{.busy_timeout = std::chrono::milliseconds(250)});
    EXPECT_EQ(db.scalar<int>("PRAGMA busy_timeout"), 250);
}

TEST_F(DbTest, ReopeningSeesCommittedData) {
    {
        Database db(dir_ / "a.db");
        db.exec("CREATE TABLE t (x TEXT)");
        db.exec("INSERT INTO t VALUES (?)", "kept");
    }
    Database db(dir_ / "a.db");
    EXPECT_EQ(db.scalar<std::string>("SELECT x FROM t"), "kept");
}

TEST_F(DbTest, ForeignKeysAreEnforced) {
    Database db(dir_ / "a.db");
    db.exec("CREATE TABLE parent (id INTEGER PRIMARY KEY)");
    db.exec("CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id))");
    try {
        db.exec("INSERT INTO child (parent_id) VALUES (?)", 99);
        FAIL() << "expected a foreign key violation";
    } catch (const ConstraintViolation& e) {
        EXPECT_EQ(e.constraint(), Constraint::ForeignKey);
    }
}

TEST_F(DbTest, MemoryDatabaseForScratchWork) {
    Database db(":memory:");
    db.exec("CREATE TABLE t (x)");
    db.exec("INSERT INTO t VALUES (1)");
    EXPECT_EQ(db.scalar<int>("SELECT count(*) FROM t"), 1);
}

// ---------------------------------------------------------------- exec and results

TEST_F(DbTest, ExecIteratesTypedRowsInOrder) {
    Database db(dir_ / "a.db");
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)");
    for (const char* n : {"a", "b", "c"}) db.exec("INSERT INTO t (name) VALUES (?)", n);
    std::vector<std::string> names;
    for (const Row& row : db.exec("SELECT id, name FROM t WHERE id >= ? ORDER BY id", 2)) {
        names.push_back(row.get<std::string>("name") + std::to_string(row.get<int64_t>(0)));
    }
    EXPECT_EQ(names, (std::vector<std::string>{"b2", "c3"}));
}

TEST_F(DbTest, LastInsertIdAndChanges) {
    Database db(dir_ / "a.db");
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER)");
    db.exec("INSERT INTO t (n) VALUES (?)", 1);
    EXPECT_EQ(db.last_insert_id(), 1);
    db.exec("INSERT INTO t (n) VALUES (?)", 1);
    EXPECT_EQ(db.last_insert_id(), 2);
    EXPECT_EQ(db.changes(), 1);
    db.exec("UPDATE t SET n = ? WHERE n = ?", 5, 1);
    EXPECT_EQ(db.changes(), 2);
    db.exec("DELETE FROM t WHERE n = ?", 7);
    EXPECT_EQ(db.changes(), 0);
}

TEST_F(DbTest, QueryOneAndScalar) {
    Database db(dir_ / "a.db");
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)");
    db.exec("INSERT INTO t (name) VALUES (?), (?)", "x", "y");
    EXPECT_EQ(db.query_one<std::string>("SELECT name FROM t WHERE id = ?", 2), "y");
    EXPECT_EQ(db.query_one<std::string>("SELECT name FROM t WHERE id = ?", 3), std::nullopt);
    auto both = db.query_one<int64_t, std::string>("SELECT id, name FROM t ORDER BY id");
    ASSERT_TRUE(both);
    EXPECT_EQ(*both, std::make_tuple(int64_t{1}, std::string("x")));
    EXPECT_EQ(db.scalar<int64_t>("SELECT count(*) FROM t"), 2);
    EXPECT_EQ(db.scalar<std::optional<std::string>>("SELECT name FROM t WHERE id = ?", 9), std::nullopt);
}

TEST_F(DbTest, SameSqlReusesTheCachedStatement) {
    Database db(dir_ / "a.db");
    db.exec("CREATE TABLE t (x)");
    CacheStats before = db.cache_stats();
    for (int i = 0; i < 10; ++i) db.exec("INSERT INTO t VALUES (?)", i);
    CacheStats after = db.cache_stats();
    EXPECT_EQ(after.prepares - before.prepares, 1u);
    EXPECT_EQ(after.hits - before.hits, 9u);
    EXPECT_EQ(db.scalar<int>("SELECT count(*) FROM t"), 10);
}

TEST_F(DbTest, CacheIsBoundedAndEvictsTheLeastRecentlyUsed) {
    Database db(dir_ / "a.db", Options{.statement_cache = 2});
    db.exec("SELECT 1");
    db.exec("SELECT 2");
    db.exec("SELECT 1");  // 1 is now more recent than 2
    db.exec("SELECT 3");  // evicts 2
    CacheStats s = db.cache_stats();
    EXPECT_EQ(s.cached, 2u);
    EXPECT_EQ(s.evictions, 1u);
    uint64_t prepares = s.prepares;
    db.exec("SELECT 1");
    EXPECT_EQ(db.cache_stats().prepares, prepares);  // still cached
    db.exec("SELECT 2");
    EXPECT_EQ(db.cache_stats().prepares, prepares + 1);  // was evicted
}

TEST_F(DbTest, SameSqlWhileAResultIsLiveGetsItsOwnStatement) {
    Database db(dir_ / "a.db");
    db.exec("CREATE TABLE t (x INTEGER)");
    for (int i = 0; i < 3; ++i) db.exec("INSERT INTO t VALUES (?)", i);
    int pairs = 0;
    for (const Row& a : db.exec("SELECT x FROM t ORDER BY x")) {
        for (const Row& b : db.exec("SELECT x FROM t ORDER BY x")) {
            (void)b;
            ++pairs;
        }
        (void)a;
    }
    EXPECT_EQ(pairs, 9);
    EXPECT_EQ(db.scalar<int>("SELECT count(*) FROM t"), 3);  // cache still sound afterwards
}

TEST_F(DbTest, InjectionTextIsStoredVerbatimAndRunsNothing) {
    Database db(dir_ / "a.db");
    db.exec("CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT)");
    const std::string evil = "'); DROP TABLE posts;--";
    db.exec("INSERT INTO posts (title) VALUES (?)", evil);
    EXPECT_EQ(db.scalar<std::string>("SELECT title FROM posts WHERE title = ?", evil), evil);
    EXPECT_EQ(db.scalar<int>("SELECT count(*) FROM sqlite_master WHERE name = 'posts'"), 1);
    EXPECT_EQ(db.scalar<int>("SELECT count(*) FROM posts WHERE title = ?", "x' OR '1'='1"), 0);
}

TEST_F(DbTest, TrustedSqlIsTheMarkedWayToComposeText) {
    Database db(dir_ / "a.db");
    db.exec("CREATE TABLE t (a INTEGER, b INTEGER)");
    db.exec("INSERT INTO t VALUES (?, ?)", 1, 2);
    const char* columns[] = {"a", "b"};  // the program's own list
    std::string column = columns[1];
    std::string sql = "SELECT " + column + " FROM t WHERE a = ?";
    EXPECT_EQ(db.scalar<int>(trusted_sql(sql), 1), 2);
}

// ---------------------------------------------------------------- threads

TEST_F(DbTest, PerThreadGivesEachThreadItsOwnConnection) {
    PerThread pool(dir_ / "a.db");
    Database* main_db = &pool.get();
    EXPECT_EQ(&pool.get(), main_db);
    Database* other = nullptr;
    std::thread t([&] {
        other = &pool.get();
        other->exec("CREATE TABLE t (x)");
        EXPECT_EQ(&pool.get(), other);
    });
    t.join();
    EXPECT_NE(other, main_db);
    EXPECT_EQ(main_db->scalar<int>("SELECT count(*) FROM t"), 0);  // same file
}

TEST_F(DbTest, TwoThreadsWritingConcurrentlyBothSucceed) {
    fs::path path = dir_ / "a.db";
    PerThread pool(path);
    pool.get().exec("CREATE TABLE t (id INTEGER PRIMARY KEY, thread INTEGER, n INTEGER)");
    constexpr int kRows = 200;
    std::atomic<int> failures{0};
    std::string first_error;
    auto writer = [&](int id) {
        try {
            Database& db = pool.get();
            for (int i = 0; i < kRows; ++i) {
                if (i % 2) {
                    db.exec("INSERT INTO t (thread, n) VALUES (?, ?)", id, i);
                } else {  // and transactions holding the write lock a little longer
                    Transaction tx = db.transaction();
                    db.exec("INSERT INTO t (thread, n) VALUES (?, ?)", id, i);
                    db.scalar<int64_t>("SELECT count(*) FROM t");
                    tx.commit();
                }
            }
        } catch (const std::exception& e) {
            if (failures.fetch_add(1) == 0) first_error = e.what();
        }
    };
    std::thread a(writer, 1), b(writer, 2);
    a.join();
    b.join();
    EXPECT_EQ(failures.load(), 0) << first_error;
    EXPECT_EQ(pool.get().scalar<int>("SELECT count(*) FROM t WHERE thread = 1"), kRows);
    EXPECT_EQ(pool.get().scalar<int>("SELECT count(*) FROM t WHERE thread = 2"), kRows);
}

// ---------------------------------------------------------------- error paths

TEST_F(DbTest, ErrorUniqueViolationCarriesKindCodeAndSql) {
    Database db(dir_ / "a.db");
    db.exec("CREATE TABLE u (email TEXT UNIQUE NOT NULL)");
    db.exec("INSERT INTO u (email) VALUES (?)", "a@example.com");
    try {
        db.exec("INSERT INTO u (email) VALUES (?)", "a@example.com");
        FAIL() << "expected a constraint violation";
    } catch (const ConstraintViolation& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Constraint);
        EXPECT_EQ(e.constraint(), Constraint::Unique);
        EXPECT_EQ(e.code(), 2067);  // SQLITE_CONSTRAINT_UNIQUE
        EXPECT_EQ(e.sql(), "INSERT INTO u (email) VALUES (?)");
        std::string what = e.what();
        EXPECT_NE(what.find("UNIQUE constraint failed: u.email"), std::string::npos) << what;
        EXPECT_NE(what.find("INSERT INTO u (email) VALUES (?)"), std::string::npos) << what;
        EXPECT_EQ(what.find("a@example.com"), std::string::npos) << "values stay out of messages: " << what;
    }
    EXPECT_EQ(db.scalar<int>("SELECT count(*) FROM u"), 1);
}

TEST_F(DbTest, ErrorNotNullViolation) {
    Database db(dir_ / "a.db");
    db.exec("CREATE TABLE u (email TEXT NOT NULL)");
    try {
        db.exec("INSERT INTO u (email) VALUES (?)", std::nullopt);
        FAIL() << "expected a constraint violation";
    } catch (const ConstraintViolation& e) {
        EXPECT_EQ(e.constraint(), Constraint::NotNull);
        EXPECT_NE(std::string(e.what()).find("NOT NULL constraint failed: u.email"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("in SQL: INSERT INTO u"), std::string::npos) << e.what();
    }
}

TEST_F(DbTest, ErrorCheckConstraint) {
    Database db(dir_ / "a.db");
    db.exec("CREATE TABLE u (age INTEGER CHECK (age >= 0))");
    try {
        db.exec("INSERT INTO u (age) VALUES (?)", -1);
        FAIL();
    } catch (const ConstraintViolation& e) {
        EXPECT_EQ(e.constraint(), Constraint::Check);
    }
}

TEST_F(DbTest, ErrorNoSuchTableAndBadSql) {
    Database db(dir_ / "a.db");
    try {
        db.exec("SELECT * FROM missing");
        FAIL();
    } catch (const SqlError& e) {
        EXPECT_EQ(e.kind(), ErrorKind::NoSuchTable);
        EXPECT_EQ(e.sql(), "SELECT * FROM missing");
        EXPECT_NE(std::string(e.what()).find("no such table: missing"), std::string::npos);
    }
    try {
        db.exec("SELEC 1");
        FAIL();
    } catch (const SqlError& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Sql);
        EXPECT_NE(std::string(e.what()).find("syntax error"), std::string::npos) << e.what();
    }
}

TEST_F(DbTest, ErrorParameterCountMustMatch) {
    Database db(dir_ / "a.db");
    db.exec("CREATE TABLE t (a, b)");
    try {
        db.exec("INSERT INTO t VALUES (?, ?)", 1);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Misuse);
        EXPECT_NE(std::string(e.what()).find("2 parameter(s) but 1 value(s)"), std::string::npos) << e.what();
    }
    EXPECT_THROW(db.exec("INSERT INTO t VALUES (1, 2)", 3), Error);
    EXPECT_EQ(db.scalar<int>("SELECT count(*) FROM t"), 0);
}

TEST_F(DbTest, ErrorOneStatementPerExec) {
    Database db(dir_ / "a.db");
    db.exec("CREATE TABLE t (a)");
    try {
        db.exec(trusted_sql("INSERT INTO t VALUES (1); DROP TABLE t"));
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Misuse);
    }
    EXPECT_EQ(db.scalar<int>("SELECT count(*) FROM t"), 0);  // neither ran
    db.exec("INSERT INTO t VALUES (1);  ");                   // a trailing ';' is fine
    EXPECT_THROW(db.exec("   "), Error);
}

TEST_F(DbTest, ErrorScalarOnNoRows) {
    Database db(dir_ / "a.db");
    db.exec("CREATE TABLE t (a)");
    try {
        db.scalar<int>("SELECT a FROM t");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::NoRows);
    }
}

TEST_F(DbTest, ErrorOpeningADirectoryNamesThePath) {
    fs::create_directories(dir_ / "is_a_dir");
    try {
        Database db(dir_ / "is_a_dir");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Io);
        EXPECT_NE(std::string(e.what()).find("is_a_dir"), std::string::npos) << e.what();
    }
}

TEST_F(DbTest, ErrorBusyWhenTheLockIsHeldLongerThanTheTimeout) {
    Database holder(dir_ / "a.db");
    holder.exec("CREATE TABLE t (a)");
    Database waiter(dir_ / "a.db", Options{.busy_timeout = std::chrono::milliseconds(50)});
    Transaction tx = holder.transaction();
    holder.exec("INSERT INTO t VALUES (1)");
    try {
        waiter.exec("INSERT INTO t VALUES (2)");
        FAIL();
    } catch (const BusyError& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Busy);
        EXPECT_EQ(e.code() & 0xff, 5);  // SQLITE_BUSY
    }
    EXPECT_EQ(waiter.scalar<int>("SELECT count(*) FROM t"), 0);  // readers are not blocked in WAL
    tx.commit();
    waiter.exec("INSERT INTO t VALUES (2)");
    EXPECT_EQ(waiter.scalar<int>("SELECT count(*) FROM t"), 2);
}

TEST_F(DbTest, ErrorEscapingAHandlerIsA500ThatLogsTheSqlButNotToTheClient) {
    Database db(dir_ / "a.db");
    fs::path log_path = dir_ / "error.log";
    int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    util::set_log_fd(fd);
    App app;
    app.use([&](Request&, Response&, Next&) { db.exec("SELECT title FROM missing_table WHERE id = ?", 1); });
    kiln::testing::Client client(app);
    kiln::testing::Result res = client.get("/");
    util::set_log_fd(STDERR_FILENO);
    ::close(fd);
    std::ifstream in(log_path);
    std::stringstream log;
    log << in.rdbuf();

    EXPECT_EQ(res.status, 500);
    EXPECT_EQ(res.body, "Internal Server Error\n");
    EXPECT_NE(log.str().find("no such table: missing_table"), std::string::npos) << log.str();
    EXPECT_NE(log.str().find("SELECT title FROM missing_table WHERE id = ?"), std::string::npos) << log.str();
}

TEST(DbDeathTest, UsingAConnectionFromAnotherThreadAborts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            Database db(":memory:");
            std::thread t([&] { db.exec("SELECT 1"); });
            t.join();
        },
        "did not open it");
}

}  // namespace
}  // namespace kiln::db
