// expect: error scalar<T>: a string_view or span would point into a statement already reset
// A string_view or span read by query_one or scalar, or kept in a model, would point
// into a statement reset before the caller sees it (garbage, or a use after free).
#include <string_view>

#include <kiln/db.hpp>

std::string_view name(kiln::db::Database& db) { return db.scalar<std::string_view>("SELECT name FROM t LIMIT 1"); }
