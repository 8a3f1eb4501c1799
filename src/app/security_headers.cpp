#include <kiln/security_headers.hpp>

#include <memory>

namespace kiln {
namespace {
struct SkipSecurityHeaders {};  // the per-request marker (Request::set_local)

void set_unless_present(Response& res, std::string_view name, std::string_view value) {
    if (!value.empty() && !res.header(name)) res.header(name, value);
}
}  // namespace

void skip_security_headers(Request& req) { req.set_local(SkipSecurityHeaders{}); }

Middleware security_headers(SecurityHeaders options) {
    std::string hsts;
    if (options.hsts_max_age_s > 0)
        hsts = "max-age=" + std::to_string(options.hsts_max_age_s) + (options.hsts_include_subdomains ? "; includeSubDomains" : "");
    auto o = std::make_shared<const SecurityHeaders>(std::move(options));
    return [o, hsts](Request& req, Response& res, Next& next) {
        next();
        if (res.streaming() || req.local<SkipSecurityHeaders>()) return;  // a stream's head is gone already
        for (const std::string& prefix : o->except)
            if (req.path().starts_with(prefix)) return;
        set_unless_present(res, "Content-Security-Policy", o->content_security_policy);
        if (o->nosniff) set_unless_present(res, "X-Content-Type-Options", "nosniff");
        set_unless_present(res, "Referrer-Policy", o->referrer_policy);
        set_unless_present(res, "X-Frame-Options", o->frame_options);
        if (req.secure()) set_unless_present(res, "Strict-Transport-Security", hsts);  // HSTS over HTTP means nothing
    };
}

}  // namespace kiln
