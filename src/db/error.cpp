#include "db/error.hpp"

#include <utility>

namespace kiln::db {
namespace {

std::string describe(const std::string& message, int code, const std::string& sql,
                     const std::string& sqlstate) {
    std::string out = message;
    if (code != 0) out += " [" + detail::code_name(code) + "]";
    if (!sqlstate.empty()) out += " [SQLSTATE " + sqlstate + "]";
    if (!sql.empty()) out += " in SQL: " + sql;
    return out;
}

Constraint constraint_of(int code) {
    switch (code) {
        case SQLITE_CONSTRAINT_UNIQUE: return Constraint::Unique;
        case SQLITE_CONSTRAINT_PRIMARYKEY: return Constraint::PrimaryKey;
        case SQLITE_CONSTRAINT_FOREIGNKEY: return Constraint::ForeignKey;
        case SQLITE_CONSTRAINT_NOTNULL: return Constraint::NotNull;
        case SQLITE_CONSTRAINT_CHECK: return Constraint::Check;
        default: return Constraint::Other;
    }
}

}  // namespace

Error::Error(ErrorKind kind, int code, std::string message, std::string sql, std::string sqlstate)
    : std::runtime_error(describe(message, code, sql, sqlstate)),
      kind_(kind),
      code_(code),
      message_(std::move(message)),
      sql_(std::move(sql)),
      sqlstate_(std::move(sqlstate)) {}

ConstraintViolation::ConstraintViolation(Constraint which, int code, std::string message, std::string sql,
                                         std::string sqlstate)
    : Error(ErrorKind::Constraint, code, std::move(message), std::move(sql), std::move(sqlstate)),
      constraint_(which) {}

MigrationError::MigrationError(ErrorKind kind, int code, std::string message, std::string sql,
                               std::filesystem::path file)
    : Error(kind, code, std::move(message), std::move(sql)), file_(std::move(file)) {}

namespace detail {

std::string code_name(int code) {
    switch (code) {
        case SQLITE_ERROR: return "SQLITE_ERROR";
        case SQLITE_BUSY: return "SQLITE_BUSY";
        case SQLITE_BUSY_SNAPSHOT: return "SQLITE_BUSY_SNAPSHOT";
        case SQLITE_LOCKED: return "SQLITE_LOCKED";
        case SQLITE_LOCKED_SHAREDCACHE: return "SQLITE_LOCKED_SHAREDCACHE";
        case SQLITE_READONLY: return "SQLITE_READONLY";
        case SQLITE_IOERR: return "SQLITE_IOERR";
        case SQLITE_CORRUPT: return "SQLITE_CORRUPT";
        case SQLITE_FULL: return "SQLITE_FULL";
        case SQLITE_CANTOPEN: return "SQLITE_CANTOPEN";
        case SQLITE_TOOBIG: return "SQLITE_TOOBIG";
        case SQLITE_MISMATCH: return "SQLITE_MISMATCH";
        case SQLITE_MISUSE: return "SQLITE_MISUSE";
        case SQLITE_RANGE: return "SQLITE_RANGE";
        case SQLITE_NOTADB: return "SQLITE_NOTADB";
        case SQLITE_CONSTRAINT: return "SQLITE_CONSTRAINT";
        case SQLITE_CONSTRAINT_UNIQUE: return "SQLITE_CONSTRAINT_UNIQUE";
        case SQLITE_CONSTRAINT_PRIMARYKEY: return "SQLITE_CONSTRAINT_PRIMARYKEY";
        case SQLITE_CONSTRAINT_FOREIGNKEY: return "SQLITE_CONSTRAINT_FOREIGNKEY";
        case SQLITE_CONSTRAINT_NOTNULL: return "SQLITE_CONSTRAINT_NOTNULL";
        case SQLITE_CONSTRAINT_CHECK: return "SQLITE_CONSTRAINT_CHECK";
        default: return "SQLite code " + std::to_string(code);
    }
}

void throw_error(int code, std::string message, std::string_view sql) {
    std::string text(sql);
    switch (code & 0xff) {
        case SQLITE_CONSTRAINT:
            throw ConstraintViolation(constraint_of(code), code, std::move(message), std::move(text));
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            throw BusyError(ErrorKind::Busy, code, std::move(message), std::move(text));
        case SQLITE_ERROR: {
            bool table = message.starts_with("no such table");
            throw SqlError(table ? ErrorKind::NoSuchTable : ErrorKind::Sql, code, std::move(message),
                           std::move(text));
        }
        case SQLITE_IOERR:
        case SQLITE_CORRUPT:
        case SQLITE_FULL:
        case SQLITE_CANTOPEN:
        case SQLITE_NOTADB:
        case SQLITE_READONLY:
            throw Error(ErrorKind::Io, code, std::move(message), std::move(text));
        case SQLITE_MISMATCH:
        case SQLITE_TOOBIG:
            throw Error(ErrorKind::Type, code, std::move(message), std::move(text));
        default:
            throw Error(ErrorKind::Other, code, std::move(message), std::move(text));
    }
}

void throw_sqlite(sqlite3* db, std::string_view sql) {
    throw_error(sqlite3_extended_errcode(db), sqlite3_errmsg(db), sql);
}

void throw_kiln(ErrorKind kind, std::string message, std::string_view sql) {
    throw Error(kind, 0, std::move(message), std::string(sql));
}

}  // namespace detail
}  // namespace kiln::db
