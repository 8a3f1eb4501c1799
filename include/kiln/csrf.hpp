// CSRF protection (synchronizer token): each session holds a random token; forms
// carry it in a hidden field `_csrf` (or scripts in the X-CSRF-Token header), and
// csrf_protect() refuses a POST, PUT, PATCH or DELETE whose token is missing or
// wrong with 403. The token is compared in constant time. Needs sessions.
#pragma once
#include <string>
#include <string_view>

#include <kiln/app.hpp>
#include <kiln/view.hpp>  // kCsrfField, csrf_field()

namespace kiln {

inline constexpr std::string_view kCsrfHeader = "X-CSRF-Token";  // for scripts; forms use kCsrfField

// This session's token (created on first use), masked by a fresh one-time pad on every
// call, so no two pages carry the same bytes and a compressed page that reflects
// input leaks nothing of it (BREACH): put it in every form you render. Any masking of
// the session's token is accepted until the session's token changes (log-in).
std::string csrf_token(Request& req);
// Middleware: app.use(kiln::csrf_protect()).
Middleware csrf_protect();

// Flash messages: set now, shown once on the next page (post/redirect/get).
void flash(Request& req, std::string_view kind, std::string_view message);
// The message of `kind` set by an earlier request, removed as it is read.
std::string take_flash(Request& req, std::string_view kind);

}  // namespace kiln
