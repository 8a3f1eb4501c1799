// Who is looking at a page: what every page's layout shows (the user's name, or the
// Sign up and Log in links) and what the post actions check (the author).
#pragma once
#include <optional>
#include <string>

#include <kiln/auth.hpp>
#include <kiln/kiln.hpp>

namespace blog {

struct Viewer {
    std::optional<kiln::auth::User> user;
    std::string name;   // empty: logged out
    std::string token;  // the CSRF token (only for a logged-in viewer: a visitor gets no session for it)
};

kiln::Task<Viewer> viewer_of(kiln::auth::Accounts& accounts, kiln::Request& req);

}  // namespace blog
