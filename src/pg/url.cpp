// pg::url_error: what libpq finds wrong with a database.url (checked at start by the
// configuration, before any connection is tried).
#include <libpq-fe.h>

#include <kiln/pg.hpp>

#include <vector>

#include "pg/errors.hpp"

namespace kiln::pg {

namespace {

// libpq's reason quotes the token it stumbled on, which may be the password (an
// invalid %-escape in it, say); the reason goes to logs and terminals. A quoted token
// found inside the part of the URL that may hold a password (a URI's user
// information, or what follows the word "password") is replaced by ***.
std::string masked(std::string why, std::string_view url) {
    std::vector<std::string_view> secret_parts;
    if (size_t scheme = url.find("://"); scheme != std::string_view::npos) {
        std::string_view rest = url.substr(scheme + 3);
        rest = rest.substr(0, rest.find('?'));
        if (size_t at = rest.rfind('@'); at != std::string_view::npos) secret_parts.push_back(rest.substr(0, at));
    }
    if (size_t k = url.find("password"); k != std::string_view::npos) secret_parts.push_back(url.substr(k));
    for (size_t open = why.find('"'); open != std::string::npos;) {
        size_t close = why.find('"', open + 1);
        if (close == std::string::npos) break;
        std::string_view token(why.data() + open + 1, close - open - 1);
        for (std::string_view part : secret_parts) {
            if (token.empty() || part.find(token) == std::string_view::npos) continue;
            why.replace(open + 1, close - open - 1, "***");
            close = open + 4;
            break;
        }
        open = why.find('"', close + 1);
    }
    return why;
}

}  // namespace

std::string url_error(std::string_view url) {
    char* err = nullptr;
    PQconninfoOption* parsed = PQconninfoParse(std::string(url).c_str(), &err);
    std::string why;
    if (!parsed) why = err ? masked(detail::one_line(err), url) : "libpq cannot parse it";
    if (err) PQfreemem(err);
    if (parsed) PQconninfoFree(parsed);
    return why.empty() ? why : "not a PostgreSQL connection string or URI: " + why;
}

}  // namespace kiln::pg
