// Security headers for every page, as a middleware: app.use(kiln::security_headers()).
// Every response to a request that passes it gets, just before its head leaves,
// Content-Security-Policy, X-Content-Type-Options, Referrer-Policy, X-Frame-Options
// and, on a request that came over HTTPS, Strict-Transport-Security: error pages
// (a handler's throw, before or after a co_await, the deadline's 504) and streams
// (res.write(), server-sent events) too. Use it first, so the middleware after it
// is covered. A header the handler set itself is left as it is; a request that must
// go without them calls kiln::skip_security_headers(req) (at any point before its
// head leaves), and paths under an `except` prefix are left alone.
// The default policy allows only the site's own scripts, styles, images, fonts,
// forms and frames (no inline script or style): loosen it per app, not per page.
// A value with a control character (a line break), or an `except` entry that is not
// a path prefix ("" or "/"), throws std::invalid_argument here, at start-up. A
// second security_headers() (in a route group's middleware) replaces the first for
// the requests it sees.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <kiln/app.hpp>

namespace kiln {

struct SecurityHeaders {
    // Content-Security-Policy; empty: not sent.
    std::string content_security_policy =
        "default-src 'self'; base-uri 'self'; form-action 'self'; frame-ancestors 'self'; object-src 'none'";
    std::string referrer_policy = "strict-origin-when-cross-origin";  // empty: not sent
    std::string frame_options = "SAMEORIGIN";                        // X-Frame-Options; empty: not sent
    bool nosniff = true;                                              // X-Content-Type-Options: nosniff
    int64_t hsts_max_age_s = 365 * 24 * 60 * 60;                      // 0: no HSTS
    bool hsts_include_subdomains = false;
    // Paths served without them, by whole segments: "/embed" is /embed and what is
    // under it, not /embedded-admin.
    std::vector<std::string> except;
};

Middleware security_headers(SecurityHeaders options = {});
// This request's response goes without the security headers (an embeddable widget).
void skip_security_headers(Request& req);

}  // namespace kiln
