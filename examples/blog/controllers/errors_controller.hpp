// Error pages: the 404 page through the site layout, for a missing record and (as
// middleware) for any plain "Not Found" the router or the static files answered.
// Stateless; safe on every loop thread.
#pragma once
#include <string_view>

#include <kiln/auth.hpp>
#include <kiln/kiln.hpp>

namespace blog {

// Replaces the response with the 404 page; `what` names the missing thing ("post").
void render_not_found(kiln::Response& res, std::string_view what = "page", std::string_view user = {},
                      std::string_view token = {});
// The 403 page: a post that is not the viewer's.
void render_forbidden(kiln::Response& res, std::string_view user, std::string_view token);

// Middleware: a 404 left as plain text by the handler chain becomes the 404 page.
// A coroutine, so it sees how the coroutine actions end, not only their first wait.
// The page shows who is logged in (accounts).
kiln::AsyncMiddleware not_found_pages(kiln::auth::Accounts& accounts);

}  // namespace blog
