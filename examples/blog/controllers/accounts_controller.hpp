// AccountsController: sign-up, log-in, log-out and password change on
// kiln::auth::Accounts, as `kiln generate auth` writes them:
//   GET /signup  POST /signup  GET /login  POST /login  POST /logout
//   GET /password  POST /password
// A form with errors comes back with what was typed (never a password) and a 422; a
// log-in refused by throttling gets 429 with Retry-After.
#pragma once
#include <kiln/auth.hpp>
#include <kiln/kiln.hpp>

namespace blog {

class AccountsController {
public:
    explicit AccountsController(kiln::auth::Accounts& accounts) : accounts_(accounts) {}

    kiln::Task<> signup_form(kiln::Request& req, kiln::Response& res);
    kiln::Task<> signup(kiln::Request& req, kiln::Response& res);
    kiln::Task<> login_form(kiln::Request& req, kiln::Response& res);
    kiln::Task<> login(kiln::Request& req, kiln::Response& res);
    void logout(kiln::Request& req, kiln::Response& res);
    kiln::Task<> password_form(kiln::Request& req, kiln::Response& res);
    kiln::Task<> change_password(kiln::Request& req, kiln::Response& res);

private:
    kiln::auth::Accounts& accounts_;
};

}  // namespace blog
