#include <kiln/security_headers.hpp>

#include <memory>
#include <stdexcept>
#include <string>

#include "app/head_hook.hpp"

namespace kiln {
namespace {
struct SkipSecurityHeaders {};  // the per-request marker (Request::set_local)

void set_unless_present(Response& res, std::string_view name, std::string_view value) {
    if (!value.empty() && !res.header(name)) res.header(name, value);
}

// `prefix` covers `path` whole segments at a time: "/embed" covers "/embed" and
// "/embed/x", not "/embedded-admin"; "/embed/" covers what is under it.
bool covers(std::string_view prefix, std::string_view path) {
    if (!path.starts_with(prefix)) return false;
    return prefix.empty() || prefix.back() == '/' || path.size() == prefix.size() || path[prefix.size()] == '/';
}

// A value that would be refused as the head leaves (a multi-line policy from a
// configuration file): refused now, at start-up, naming its field.
void check_value(const char* field, std::string_view value) {
    for (char c : value)
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f)
            throw std::invalid_argument(std::string("security_headers: ") + field +
                                        " holds a control character (a line break?): a header value is one line");
}

void check(const SecurityHeaders& o) {
    check_value("content_security_policy", o.content_security_policy);
    check_value("referrer_policy", o.referrer_policy);
    check_value("frame_options", o.frame_options);
    for (const std::string& prefix : o.except)
        if (prefix.size() < 2 || prefix.front() != '/')
            throw std::invalid_argument("security_headers: except \"" + prefix +
                                        "\" is no path prefix (one starts with '/' and names something: \"/\" "
                                        "would leave every page without the headers)");
}

// Set when the head leaves, not after next(): a chain that waits returns from next()
// at its first wait, and the ways out after it (an error page once the handler has
// waited, the deadline's 504, the session store's 503, a stream) would go without.
class Policy final : public app::HeadHook {
public:
    explicit Policy(SecurityHeaders options) : o_(std::move(options)) {
        if (o_.hsts_max_age_s > 0)
            hsts_ = "max-age=" + std::to_string(o_.hsts_max_age_s) + (o_.hsts_include_subdomains ? "; includeSubDomains" : "");
    }

    void before_head(Request& req, Response& res) const override {
        if (req.local<SkipSecurityHeaders>()) return;
        for (const std::string& prefix : o_.except)
            if (covers(prefix, req.path())) return;
        set_unless_present(res, "Content-Security-Policy", o_.content_security_policy);
        if (o_.nosniff) set_unless_present(res, "X-Content-Type-Options", "nosniff");
        set_unless_present(res, "Referrer-Policy", o_.referrer_policy);
        set_unless_present(res, "X-Frame-Options", o_.frame_options);
        if (req.secure()) set_unless_present(res, "Strict-Transport-Security", hsts_);  // HSTS over HTTP means nothing
    }

private:
    SecurityHeaders o_;
    std::string hsts_;
};
}  // namespace

void skip_security_headers(Request& req) { req.set_local(SkipSecurityHeaders{}); }

Middleware security_headers(SecurityHeaders options) {
    check(options);
    auto policy = std::make_shared<const Policy>(std::move(options));
    return [policy](Request& req, Response& res, Next& next) {
        app::HeadHook::attach(req, res, *policy);
        next();
    };
}

}  // namespace kiln
