// expect: error .text. is not a constant expression
// Nor a string_view of one.
#include <string_view>

#include <kiln/db.hpp>

void run(kiln::db::Database& db, std::string_view text) { db.exec(text); }
