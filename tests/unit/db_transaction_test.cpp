// Unit tests of db::Transaction (src/db/transaction.cpp): commit keeps, rollback
// and the destructor undo, nested transactions are savepoints that undo only their
// own part; then the error paths (wrong order, ending twice, exceptions).
#include <kiln/db.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

namespace kiln::db {
namespace {

namespace fs = std::filesystem;

class TxTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("kiln_db_tx_" + std::to_string(getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        db_.emplace(dir_ / "a.db");
        db().exec("CREATE TABLE t (x TEXT)");
    }
    void TearDown() override {
        db_.reset();
        fs::remove_all(dir_);
    }
    Database& db() { return *db_; }
    int rows() { return db().scalar<int>("SELECT count(*) FROM t"); }
    bool has(const char* x) { return db().scalar<int>("SELECT count(*) FROM t WHERE x = ?", x) > 0; }

    fs::path dir_;
    std::optional<Database> db_;
};

TEST_F(TxTest, CommitKeepsTheChanges) {
    Transaction tx = db().transaction();
    db().exec("INSERT INTO t VALUES (?)", "a");
    db().exec("INSERT INTO t VALUES (?)", "b");
    EXPECT_TRUE(tx.active());
    tx.commit();
    EXPECT_FALSE(tx.active());
    EXPECT_EQ(rows(), 2);
}

TEST_F(TxTest, ChangesAreInvisibleToOtherConnectionsUntilCommit) {
    Database other(dir_ / "a.db");
    Transaction tx = db().transaction();
    db().exec("INSERT INTO t VALUES (?)", "a");
    EXPECT_EQ(other.scalar<int>("SELECT count(*) FROM t"), 0);
    tx.commit();
    EXPECT_EQ(other.scalar<int>("SELECT count(*) FROM t"), 1);
}

TEST_F(TxTest, RollbackUndoes) {
    db().exec("INSERT INTO t VALUES (?)", "before");
    Transaction tx = db().transaction();
    db().exec("INSERT INTO t VALUES (?)", "a");
    tx.rollback();
    EXPECT_EQ(rows(), 1);
    EXPECT_TRUE(has("before"));
}

TEST_F(TxTest, DestructorRollsBackWhenNotCommitted) {
    {
        Transaction tx = db().transaction();
        db().exec("INSERT INTO t VALUES (?)", "a");
    }
    EXPECT_EQ(rows(), 0);
    Transaction again = db().transaction();  // the connection is usable again
    again.commit();
}

TEST_F(TxTest, AnExceptionInTheMiddleLeavesNothingBehind) {
    auto transfer = [&] {
        Transaction tx = db().transaction();
        db().exec("INSERT INTO t VALUES (?)", "half");
        throw std::runtime_error("handler failed");
    };
    EXPECT_THROW(transfer(), std::runtime_error);
    EXPECT_EQ(rows(), 0);
}

TEST_F(TxTest, NestedCommitsInsideACommittedOuter) {
    Transaction outer = db().transaction();
    db().exec("INSERT INTO t VALUES (?)", "outer");
    {
        Transaction inner = db().transaction();
        db().exec("INSERT INTO t VALUES (?)", "inner");
        inner.commit();
    }
    outer.commit();
    EXPECT_TRUE(has("outer"));
    EXPECT_TRUE(has("inner"));
}

TEST_F(TxTest, NestedRollbackUndoesOnlyTheInnerPart) {
    Transaction outer = db().transaction();
    db().exec("INSERT INTO t VALUES (?)", "outer");
    {
        Transaction inner = db().transaction();
        db().exec("INSERT INTO t VALUES (?)", "inner");
        Transaction innermost = db().transaction();
        db().exec("INSERT INTO t VALUES (?)", "innermost");
        innermost.commit();
    }  // inner rolls back, with innermost's committed part
    db().exec("INSERT INTO t VALUES (?)", "after");
    outer.commit();
    EXPECT_TRUE(has("outer"));
    EXPECT_TRUE(has("after"));
    EXPECT_FALSE(has("inner"));
    EXPECT_FALSE(has("innermost"));
}

TEST_F(TxTest, OuterRollbackUndoesCommittedInnerWork) {
    {
        Transaction outer = db().transaction();
        Transaction inner = db().transaction();
        db().exec("INSERT INTO t VALUES (?)", "inner");
        inner.commit();
    }
    EXPECT_EQ(rows(), 0);
}

TEST_F(TxTest, DeferredTransactionReadsASnapshot) {
    Database other(dir_ / "a.db");
    Transaction tx = db().transaction(TxMode::Deferred);
    EXPECT_EQ(rows(), 0);  // the read starts the snapshot
    other.exec("INSERT INTO t VALUES (?)", "x");
    EXPECT_EQ(rows(), 0);
    tx.commit();
    EXPECT_EQ(rows(), 1);
}

// ---------------------------------------------------------------- error paths

TEST_F(TxTest, ErrorEndingTheOuterBeforeTheInner) {
    Transaction outer = db().transaction();
    Transaction inner = db().transaction();
    try {
        outer.commit();
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Misuse);
    }
    EXPECT_TRUE(outer.active());
    inner.commit();
    outer.commit();
}

// Two coroutines on one loop thread's connection, each with a transaction across a
// co_await: A begins, B nests a savepoint, A ends first. Before, A's destructor left
// SQLite's transaction open with no one to end it: every later write went into it,
// never committed, and it held the write lock.
TEST_F(TxTest, ADestructorOutOfOrderRollsBackTheWholeTransaction) {
    Database other(dir_ / "a.db");
    {
        std::optional<Transaction> a(db().transaction());
        db().exec("INSERT INTO t VALUES (?)", "a");
        std::optional<Transaction> b(db().transaction());
        db().exec("INSERT INTO t VALUES (?)", "b");
        EXPECT_THROW(a->commit(), Error);  // out of order: nothing changes yet
        a.reset();                         // its request failed: out of order again
        try {
            b->commit();
            ADD_FAILURE() << "b committed into a transaction rolled back";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Misuse);
            EXPECT_NE(std::string(e.what()).find("rolled back already"), std::string::npos) << e.what();
        }
        EXPECT_FALSE(b->active());
    }
    db().exec("INSERT INTO t VALUES (?)", "c");  // committed at once: no transaction is open
    EXPECT_EQ(other.scalar<int>("SELECT count(*) FROM t"), 1);
    EXPECT_EQ(other.scalar<int>("SELECT count(*) FROM t WHERE x = 'c'"), 1);
    Transaction next = db().transaction();
    db().exec("INSERT INTO t VALUES (?)", "d");
    next.commit();
    EXPECT_EQ(other.scalar<int>("SELECT count(*) FROM t"), 2);
}

// A stale Transaction must never end a later one that happens to have its level.
TEST_F(TxTest, AStaleTransactionDoesNotEndALaterOne) {
    std::optional<Transaction> a(db().transaction());
    std::optional<Transaction> b(db().transaction());
    a.reset();  // out of order: all rolled back
    Transaction c = db().transaction();  // a new level 1, as a was
    db().exec("INSERT INTO t VALUES (?)", "c");
    EXPECT_THROW(b->rollback(), Error);  // stale: it touches nothing
    b.reset();
    c.commit();
    EXPECT_EQ(rows(), 1);
}

// ON CONFLICT ROLLBACK makes SQLite end the transaction itself. Before, a handler that
// caught the error and went on ran its next statements outside any transaction
// (committed at once), and commit() said nothing.
TEST_F(TxTest, ATransactionSQLiteRolledBackRunsNoMoreStatementsAndItsCommitThrows) {
    db().exec("CREATE TABLE u (v TEXT UNIQUE ON CONFLICT ROLLBACK)");
    {
        Transaction tx = db().transaction();
        db().exec("INSERT INTO u VALUES (?)", "x");
        EXPECT_THROW(db().exec("INSERT INTO u VALUES (?)", "x"), ConstraintViolation);
        EXPECT_THROW(db().exec("INSERT INTO u VALUES (?)", "y"), Error);
        EXPECT_THROW(db().transaction(), Error);
        try {
            tx.commit();
            ADD_FAILURE() << "commit() of a rolled-back transaction returned";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Misuse);
            EXPECT_NE(std::string(e.what()).find("SQLite rolled the transaction back"), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(db().scalar<int>("SELECT count(*) FROM u"), 0);
    Transaction next = db().transaction();  // usable again
    db().exec("INSERT INTO u VALUES (?)", "z");
    next.commit();
    EXPECT_EQ(db().scalar<int>("SELECT count(*) FROM u"), 1);
}

TEST_F(TxTest, ErrorEndingTwice) {
    Transaction tx = db().transaction();
    tx.commit();
    EXPECT_THROW(tx.commit(), Error);
    EXPECT_THROW(tx.rollback(), Error);
}

TEST_F(TxTest, ErrorInsideATransactionKeepsItUsable) {
    db().exec("CREATE TABLE u (v TEXT UNIQUE)");
    Transaction tx = db().transaction();
    db().exec("INSERT INTO u VALUES (?)", "x");
    EXPECT_THROW(db().exec("INSERT INTO u VALUES (?)", "x"), ConstraintViolation);
    db().exec("INSERT INTO u VALUES (?)", "y");  // the failed statement alone was undone
    tx.commit();
    EXPECT_EQ(db().scalar<int>("SELECT count(*) FROM u"), 2);
}

TEST_F(TxTest, ErrorBeginningInsideAManualBegin) {
    db().exec("BEGIN");
    EXPECT_THROW(db().transaction(), SqlError);
    db().exec("ROLLBACK");
    Transaction tx = db().transaction();
    tx.commit();
}

TEST_F(TxTest, ErrorFailedCommitLeavesTheTransactionToTheDestructor) {
    db().exec("CREATE TABLE parent (id INTEGER PRIMARY KEY)");
    db().exec(
        "CREATE TABLE child (pid INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)");
    {
        Transaction tx = db().transaction();
        db().exec("INSERT INTO child VALUES (?)", 42);  // checked at COMMIT
        EXPECT_THROW(tx.commit(), ConstraintViolation);
        EXPECT_TRUE(tx.active());
    }
    EXPECT_EQ(db().scalar<int>("SELECT count(*) FROM child"), 0);
    Transaction next = db().transaction();  // nothing left open
    next.commit();
}

}  // namespace
}  // namespace kiln::db
