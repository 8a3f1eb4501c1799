// expect: error cannot convert .* to type .kiln::db::Sql.
// A runtime string cannot become SQLite SQL: a name from a request would be injection.
#include <string>

#include <kiln/db.hpp>

void drop(kiln::db::Database& db, const std::string& table_from_the_request) {
    db.exec("DROP TABLE " + table_from_the_request);
}
