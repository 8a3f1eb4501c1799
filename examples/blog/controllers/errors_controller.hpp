// Error pages: the 404 page through the site layout, for a missing record and (as
// middleware) for any plain "Not Found" the router or the static files answered.
// Stateless; safe on every loop thread.
#pragma once
#include <string_view>

#include <kiln/kiln.hpp>

namespace blog {

// Replaces the response with the 404 page; `what` names the missing thing ("post").
void render_not_found(kiln::Response& res, std::string_view what = "page");

// Middleware: a 404 left as plain text by the handler chain becomes the 404 page.
// A coroutine, so it sees how the coroutine actions end, not only their first wait.
kiln::AsyncMiddleware not_found_pages();

}  // namespace blog
