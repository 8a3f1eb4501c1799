// PostgreSQL's SQLSTATEs as kiln's db::Error family, without a server: the class a
// handler catches, the kind, the constraint, and what() carrying the SQLSTATE and the
// SQL but nothing that could hold a value.
#include <gtest/gtest.h>

#include <string>

#include <kiln/db.hpp>

#include "pg/errors.hpp"
#include "pg/refused.hpp"

namespace db = kiln::db;
using kiln::pg::detail::make_error;

namespace {

template <class E>
E thrown(std::exception_ptr p) {
    try {
        std::rethrow_exception(p);
    } catch (const E& e) {
        return e;
    } catch (...) {
        ADD_FAILURE() << "not the expected class";
    }
    throw std::logic_error("unreachable");
}

TEST(PgErrors, ConstraintClassMapsToConstraintViolation) {
    struct Case {
        const char* sqlstate;
        db::Constraint which;
    } cases[] = {{"23505", db::Constraint::Unique},
                 {"23503", db::Constraint::ForeignKey},
                 {"23502", db::Constraint::NotNull},
                 {"23514", db::Constraint::Check},
                 {"23P01", db::Constraint::Other}};
    for (const Case& c : cases) {
        auto e = thrown<db::ConstraintViolation>(make_error(c.sqlstate, "violates", "INSERT INTO t VALUES ($1)"));
        EXPECT_EQ(e.constraint(), c.which) << c.sqlstate;
        EXPECT_EQ(e.kind(), db::ErrorKind::Constraint);
        EXPECT_EQ(e.sqlstate(), c.sqlstate);
        EXPECT_EQ(e.code(), 0);
    }
}

TEST(PgErrors, SqlBusyTypeAndIoClasses) {
    EXPECT_EQ(thrown<db::SqlError>(make_error("42601", "syntax", "")).kind(), db::ErrorKind::Sql);
    EXPECT_EQ(thrown<db::SqlError>(make_error("42P01", "no table", "")).kind(), db::ErrorKind::NoSuchTable);
    EXPECT_EQ(thrown<db::SqlError>(make_error("42703", "no column", "")).kind(), db::ErrorKind::Sql);
    for (const char* s : {"40001", "40P01", "55P03", "57014"})
        EXPECT_EQ(thrown<db::BusyError>(make_error(s, "busy", "")).kind(), db::ErrorKind::Busy) << s;
    EXPECT_EQ(thrown<db::Error>(make_error("22P02", "invalid input", "")).kind(), db::ErrorKind::Type);
    EXPECT_EQ(thrown<db::Error>(make_error("22012", "division by zero", "")).kind(), db::ErrorKind::Other);
    EXPECT_EQ(thrown<db::Error>(make_error("08P01", "bind message supplies 1 parameters", "")).kind(),
              db::ErrorKind::Misuse);
    auto gone = thrown<db::Error>(make_error("57P01", "terminating connection due to administrator command", ""));
    EXPECT_EQ(gone.kind(), db::ErrorKind::Io);
    EXPECT_EQ(gone.message(), "connection to PostgreSQL lost: terminating connection due to administrator command");
    EXPECT_EQ(thrown<db::Error>(make_error("XX000", "internal", "")).kind(), db::ErrorKind::Other);
}

TEST(PgErrors, WhatNamesTheSqlstateAndTheSql) {
    auto e = thrown<db::Error>(make_error("23505", "duplicate key value violates unique constraint \"u\"",
                                          "INSERT INTO u VALUES ($1)"));
    EXPECT_STREQ(e.what(),
                 "duplicate key value violates unique constraint \"u\" [SQLSTATE 23505] in SQL: INSERT INTO u VALUES ($1)");
}

TEST(PgErrors, SqliteErrorsHaveNoSqlstate) {
    db::Error e(db::ErrorKind::Sql, 1, "near \"x\": syntax error", "x");
    EXPECT_TRUE(e.sqlstate().empty());
}

TEST(PgErrors, LibpqMessagesBecomeOneLine) {
    EXPECT_EQ(kiln::pg::detail::one_line("connection refused\n\tIs the server running?\n"),
              "connection refused Is the server running?");
    EXPECT_EQ(kiln::pg::detail::one_line(nullptr), "");
}

}  // namespace

// Which statements of a transaction may change its session beyond the commit (its
// connection is then closed, not handed to the next transaction): not the
// transaction-local forms, which the docs recommend.
TEST(PgSession, WhatChangesTheSessionBeyondTheCommit) {
    using kiln::pg::detail::changes_session;
    for (const char* sql : {"SET search_path TO app", "set role tenant_a", "RESET ALL", "DISCARD TEMP",
                            "PREPARE p AS SELECT 1", "LISTEN news", "CREATE TEMP TABLE t (x int)",
                            "create local temporary table t (x int)", "CREATE OR REPLACE TEMP VIEW v AS SELECT 1",
                            "SELECT 1 AS x INTO TEMP t", "DECLARE c CURSOR WITH HOLD FOR SELECT 1",
                            "SELECT set_config('app.tenant', $1, false)", "SELECT set_config('a', $1, $2)",
                            "SELECT set_config('a', 'x', true), set_config('b', 'y', false)",
                            "SELECT pg_advisory_lock(1)", "select PG_ADVISORY_LOCK_SHARED (1)",
                            "SELECT pg_try_advisory_lock(1)", "SELECT 1 AS x INTO TEMPORARY t",
                            "SELECT set_config\n('a', 'x', false)", "SELECT pg_advisory_lock/* */(1)",
                            "SELECT set_config -- a comment\n('a', 'x', false)"})
        EXPECT_TRUE(changes_session(sql)) << sql;
    for (const char* sql : {"SET LOCAL search_path TO app", "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
                            "SET CONSTRAINTS ALL DEFERRED", "SELECT set_config('app.tenant', $1, true)",
                            "SELECT set_config('app.tenant', concat($1, ','), TRUE)", "DECLARE c CURSOR FOR SELECT 1",
                            "CREATE TABLE t (x int)", "SELECT pg_advisory_xact_lock(1)",
                            "INSERT INTO t VALUES (1)", "SELECT * FROM temperatures",
                            // Look-alikes: names that hold the words, a column named like the function.
                            "INSERT INTO temperatures VALUES (1)", "SELECT * FROM asset_config",
                            "SELECT preset_config, set_config FROM t", "SELECT pg_advisory_lock_count FROM t",
                            "DECLARE c CURSOR WITHOUT HOLD FOR SELECT 1"})
        EXPECT_FALSE(changes_session(sql)) << sql;
}
