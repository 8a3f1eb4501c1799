// PostgreSQL's errors as kiln's db::Error family. The class follows the SQLSTATE:
// class 23 → ConstraintViolation (23505 Unique, 23503 ForeignKey, 23502 NotNull,
// 23514 Check), 42 → SqlError (42P01 NoSuchTable), 40001/40P01/55P03/57014 →
// BusyError (serialization, deadlock, lock wait, statement timeout), 22 → Type,
// 08/57P0x (the server going away) → Io. Messages are PostgreSQL's primary message
// only: its DETAIL can quote values, and db::Error's what() must be safe to log.
#pragma once
#include <libpq-fe.h>

#include <exception>
#include <string>
#include <string_view>

#include <kiln/db.hpp>

namespace kiln::pg::detail {

std::exception_ptr make_error(std::string_view sqlstate, std::string message, std::string sql);
// The error a PGRES_FATAL_ERROR result carries.
std::exception_ptr result_error(const PGresult* r, std::string sql);
// Io errors raised by kiln: the connection is gone, or there is none.
std::exception_ptr io_error(std::string message, std::string sql = {});
// The server ended the session (shutdown, crash, admin): the connection is lost.
bool ends_connection(std::string_view sqlstate);
// libpq's multi-line message on one line, without the trailing newline.
std::string one_line(const char* message);

}  // namespace kiln::pg::detail
