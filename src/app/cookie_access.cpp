// Request and Response cookie accessors (the app-facing side of http/cookie.cpp):
// reading a cookie, setting one, signed ones.
#include <kiln/request.hpp>
#include <kiln/response.hpp>

#include <algorithm>
#include <ctime>
#include <stdexcept>

#include "app/signing.hpp"
#include "http/cookie.hpp"
#include "http/parser.hpp"
#include "http/response.hpp"

namespace kiln {
namespace {
http::CookieAttributes attributes(const CookieOptions& o) {
    http::CookieAttributes a;
    a.max_age = o.max_age;
    a.expires = o.expires;
    a.domain = o.domain;
    a.path = o.path;
    a.secure = o.secure;
    a.http_only = o.http_only;
    a.same_site = static_cast<http::SameSite>(o.same_site);
    a.partitioned = o.partitioned;
    return a;
}
static_assert(static_cast<int>(SameSite::None) == static_cast<int>(http::SameSite::None));
}  // namespace

Response& Response::cookie(std::string_view name, std::string_view value, const CookieOptions& opts) {
    std::string line;
    if (http::CookieError e = http::build_set_cookie(name, value, attributes(opts), line); e != http::CookieError::None)
        throw std::invalid_argument("cookie '" + std::string(name) + "': " + std::string(http::describe(e)));
    msg_->remove_cookie(name);  // the last word on a name wins
    msg_->add_header("Set-Cookie", line);
    return *this;
}

Response& Response::clear_cookie(std::string_view name, const CookieOptions& opts) {
    CookieOptions o = opts;
    o.max_age = 0;
    o.expires = 0;  // 1970: also understood by clients that ignore Max-Age
    return cookie(name, "", o);
}

Response& Response::signed_cookie(std::string_view name, std::string_view value, const CookieOptions& opts) {
    if (!secret_) throw std::logic_error("Response::signed_cookie outside a handler run by an App");
    int64_t now = static_cast<int64_t>(time(nullptr));
    int64_t expires_at = opts.max_age ? now + std::max<int64_t>(*opts.max_age, 0)
                         : opts.expires ? static_cast<int64_t>(*opts.expires)
                                        : now + app::kSignedDefaultLifetime;
    return cookie(name, app::sign(*secret_, name, value, expires_at), opts);
}

std::optional<std::string_view> Request::cookie(std::string_view name) const {
    auto h = header("cookie");
    if (!h) return std::nullopt;
    return http::find_cookie(*h, name);
}

std::optional<std::string_view> Request::signed_cookie(std::string_view name) const {
    if (!secret_) throw std::logic_error("Request::signed_cookie outside a handler run by an App");
    auto v = cookie(name);
    if (!v) return std::nullopt;
    return app::verify(*secret_, name, *v, static_cast<int64_t>(time(nullptr)));
}

}  // namespace kiln
