// expect: ok
// The spellings that must keep building: a literal, and text visibly marked trusted.
#include <string>

#include <kiln/db.hpp>
#include <kiln/pg.hpp>

kiln::pg::Query by_literal(kiln::pg::Client& db, int id) { return db.exec("SELECT name FROM t WHERE id = $1", id); }

void by_trusted(kiln::db::Database& db, const std::string& column) {
    std::string text = "UPDATE t SET " + column + " = 0";  // column: checked against a list by the caller
    db.exec(kiln::db::trusted_sql(text));
}
