// The CSRF check's private side: where a session keeps its token (dropped by
// Session::regenerate: a token seen before a login must not work after it), and the
// middleware's own type, so App::use can tell csrf_protect() is installed and check
// an upload's token before any of its files is written.
#pragma once
#include <string>
#include <string_view>

#include <kiln/app.hpp>

namespace kiln::app {

inline constexpr std::string_view kCsrfSessionKey = "_csrf";

struct CsrfCheck {
    void operator()(Request& req, Response& res, Next& next) const;
};

// The session's token, made from its id (the same for every request of the session).
std::string session_csrf_token(std::string_view session_id);
// The token as a page carries it: masked by a fresh one-time pad (BREACH).
std::string mask_csrf_token(std::string_view stored);
// Whether `sent` (masked, or as stored) is `stored`, in constant time.
bool csrf_token_equal(std::string_view sent, std::string_view stored);

// Whether `sent` is the token of the session `session_id` names in `store`
// (constant-time comparison). False for an empty token or no such session.
bool csrf_token_matches(SessionStore& store, std::string_view session_id, std::string_view sent, int64_t now);

}  // namespace kiln::app
