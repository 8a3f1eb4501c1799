// pg::url_error: what libpq finds wrong with a database.url (checked at start by the
// configuration, before any connection is tried).
#include <libpq-fe.h>

#include <kiln/pg.hpp>

#include "pg/errors.hpp"

namespace kiln::pg {

std::string url_error(std::string_view url) {
    char* err = nullptr;
    PQconninfoOption* parsed = PQconninfoParse(std::string(url).c_str(), &err);
    std::string why;
    if (!parsed) why = err ? detail::one_line(err) : "libpq cannot parse it";
    if (err) PQfreemem(err);
    if (parsed) PQconninfoFree(parsed);
    return why.empty() ? why : "not a PostgreSQL connection string or URI: " + why;
}

}  // namespace kiln::pg
