// expect: error cannot convert .* to type .kiln::db::Sql.
// Nor PostgreSQL SQL.
#include <string>

#include <kiln/pg.hpp>

kiln::pg::Query find(kiln::pg::Client& db, const std::string& name) {
    return db.exec("SELECT * FROM users WHERE name = '" + name + "'");
}
