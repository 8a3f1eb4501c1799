// expect: error query_one<T\.\.\.>: a string_view or span would point into a statement already reset
#include <optional>
#include <string_view>

#include <kiln/db.hpp>

std::optional<std::string_view> name(kiln::db::Database& db) {
    return db.query_one<std::string_view>("SELECT name FROM t LIMIT 1");
}
