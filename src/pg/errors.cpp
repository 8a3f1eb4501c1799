#include "pg/errors.hpp"

#include <utility>

namespace kiln::pg::detail {
namespace {

db::Constraint constraint_of(std::string_view sqlstate) {
    if (sqlstate == "23505") return db::Constraint::Unique;
    if (sqlstate == "23503") return db::Constraint::ForeignKey;
    if (sqlstate == "23502") return db::Constraint::NotNull;
    if (sqlstate == "23514") return db::Constraint::Check;
    return db::Constraint::Other;
}

template <class E>
std::exception_ptr make(db::ErrorKind kind, std::string_view sqlstate, std::string message, std::string sql) {
    return std::make_exception_ptr(E(kind, 0, std::move(message), std::move(sql), std::string(sqlstate)));
}

}  // namespace

bool ends_connection(std::string_view sqlstate) {
    // 08P01 (protocol violation) is what a wrong parameter count gets: the session lives on.
    return (sqlstate.starts_with("08") && sqlstate != "08P01") || sqlstate == "57P01" || sqlstate == "57P02" ||
           sqlstate == "57P03";
}

std::exception_ptr make_error(std::string_view sqlstate, std::string message, std::string sql) {
    using K = db::ErrorKind;
    std::string_view cls = sqlstate.substr(0, 2);
    if (cls == "23")
        return std::make_exception_ptr(db::ConstraintViolation(constraint_of(sqlstate), 0, std::move(message),
                                                               std::move(sql), std::string(sqlstate)));
    if (cls == "42") return make<db::SqlError>(sqlstate == "42P01" ? K::NoSuchTable : K::Sql, sqlstate, std::move(message), std::move(sql));
    if (sqlstate == "26000") return make<db::SqlError>(K::Sql, sqlstate, std::move(message), std::move(sql));
    if (sqlstate == "40001" || sqlstate == "40P01" || sqlstate == "55P03" || sqlstate == "57014")
        return make<db::BusyError>(K::Busy, sqlstate, std::move(message), std::move(sql));
    if (sqlstate == "08P01") return make<db::Error>(K::Misuse, sqlstate, std::move(message), std::move(sql));
    if (ends_connection(sqlstate))
        return make<db::Error>(K::Io, sqlstate, "connection to PostgreSQL lost: " + message, std::move(sql));
    if (cls == "22" && sqlstate != "22012") return make<db::Error>(K::Type, sqlstate, std::move(message), std::move(sql));
    if (cls == "53" || cls == "58" || cls == "28" || sqlstate == "3D000")
        return make<db::Error>(K::Io, sqlstate, std::move(message), std::move(sql));
    return make<db::Error>(K::Other, sqlstate, std::move(message), std::move(sql));
}

std::exception_ptr result_error(const PGresult* r, std::string sql) {
    const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    const char* primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    std::string message = primary ? primary : one_line(PQresultErrorMessage(r));
    if (!state) return io_error("connection to PostgreSQL lost: " + message, std::move(sql));  // libpq's own
    return make_error(state, std::move(message), std::move(sql));
}

std::exception_ptr io_error(std::string message, std::string sql) {
    return std::make_exception_ptr(db::Error(db::ErrorKind::Io, 0, std::move(message), std::move(sql)));
}

std::string one_line(const char* message) {
    std::string out;
    bool space = false;
    for (const char* p = message ? message : ""; *p; ++p) {
        if (*p == '\n' || *p == '\t' || *p == '\r') {
            space = true;
            continue;
        }
        if (space && !out.empty()) out += ' ';
        space = false;
        out += *p;
    }
    return out;
}

}  // namespace kiln::pg::detail
