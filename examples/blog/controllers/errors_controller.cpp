#include "controllers/errors_controller.hpp"

#include "controllers/viewer.hpp"
#include "views/errors/forbidden.hpp"
#include "views/errors/not_found.hpp"

namespace blog {

void render_not_found(kiln::Response& res, std::string_view what, std::string_view user, std::string_view token) {
    kiln::render(res, views::errors::not_found{.what = what, .user = user, .token = token});
    res.status(404).header("Cache-Control", "no-store");
}

void render_forbidden(kiln::Response& res, std::string_view user, std::string_view token) {
    kiln::render(res, views::errors::forbidden{.user = user, .token = token});
    res.status(403).header("Cache-Control", "no-store");
}

kiln::AsyncMiddleware not_found_pages(kiln::auth::Accounts& accounts) {
    return [&accounts](kiln::Request& req, kiln::Response& res, kiln::Next& next) -> kiln::Task<> {
        co_await next;  // the handler's end, also after it waited
        // Only the framework's own text answers: a page already rendered stays.
        if (res.status() == 404 && !res.streaming() && !res.has_file() &&
            res.content_type().starts_with("text/plain")) {
            Viewer v = co_await viewer_of(accounts, req);
            render_not_found(res, "page", v.name, v.token);
        }
    };
}

}  // namespace blog
