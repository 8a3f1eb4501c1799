// Building db::Error from SQLite's state. The class chosen follows the extended
// result code: constraint codes → ConstraintViolation, BUSY/LOCKED → BusyError,
// SQLITE_ERROR → SqlError (kind NoSuchTable when SQLite says so), I/O-ish → Io.
// Callers capture the message before resetting the statement that failed.
#pragma once
#include <sqlite3.h>

#include <string>
#include <string_view>

#include <kiln/db.hpp>

namespace kiln::db::detail {

// Throws the Error for `code` (extended) with SQLite's `message` and the SQL text.
[[noreturn]] void throw_error(int code, std::string message, std::string_view sql);
// Same, reading the code and message from the connection.
[[noreturn]] void throw_sqlite(sqlite3* db, std::string_view sql);
// A kiln-raised error (code 0).
[[noreturn]] void throw_kiln(ErrorKind kind, std::string message, std::string_view sql = {});

// "SQLITE_CONSTRAINT_UNIQUE" for the common codes, else "SQLite code N".
std::string code_name(int code);

}  // namespace kiln::db::detail
