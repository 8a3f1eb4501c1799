#include "controllers/errors_controller.hpp"

#include "views/errors/not_found.hpp"

namespace blog {

void render_not_found(kiln::Response& res, std::string_view what) {
    kiln::render(res, views::errors::not_found{.what = what});
    res.status(404).header("Cache-Control", "no-store");
}

kiln::AsyncMiddleware not_found_pages() {
    return [](kiln::Request&, kiln::Response& res, kiln::Next& next) -> kiln::Task<> {
        co_await next;  // the handler's end, also after it waited
        // Only the framework's own text answers: a page already rendered stays.
        if (res.status() == 404 && !res.streaming() && !res.has_file() &&
            res.content_type().starts_with("text/plain"))
            render_not_found(res);
    };
}

}  // namespace blog
