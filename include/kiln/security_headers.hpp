// Security headers for every page, as a middleware: app.use(kiln::security_headers()).
// After the handler (and on error pages, which are made inside the chain) it adds
// Content-Security-Policy, X-Content-Type-Options, Referrer-Policy, X-Frame-Options
// and, on a request that came over HTTPS, Strict-Transport-Security. A header the
// handler set itself is left as it is; a route that must go without them calls
// kiln::skip_security_headers(req), and path prefixes in `except` are left alone.
// The default policy allows only the site's own scripts, styles, images, fonts,
// forms and frames (no inline script or style): loosen it per app, not per page.
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
    std::vector<std::string> except;  // path prefixes served without them ("/embed/")
};

Middleware security_headers(SecurityHeaders options = {});
// This request's response goes without the security headers (an embeddable widget).
void skip_security_headers(Request& req);

}  // namespace kiln
