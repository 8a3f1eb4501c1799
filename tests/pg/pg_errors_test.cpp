// PostgreSQL's SQLSTATEs as kiln's db::Error family, without a server: the class a
// handler catches, the kind, the constraint, and what() carrying the SQLSTATE and the
// SQL but nothing that could hold a value.
#include <gtest/gtest.h>

#include <string>

#include <kiln/db.hpp>

#include "pg/errors.hpp"

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
