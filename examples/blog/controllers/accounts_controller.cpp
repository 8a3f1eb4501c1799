#include "controllers/accounts_controller.hpp"

#include <string>

#include "controllers/viewer.hpp"
#include "views/accounts/login.hpp"
#include "views/accounts/password.hpp"
#include "views/accounts/signup.hpp"

namespace blog {
namespace {

using kiln::auth::Error;

std::string field(kiln::Request& req, std::string_view name) {
    return std::string(req.form().get(name).value_or(""));
}

}  // namespace

kiln::Task<> AccountsController::signup_form(kiln::Request& req, kiln::Response& res) {
    if (auto in = co_await accounts_.current_user(req)) co_return res.redirect("/posts", 303);
    std::string token = kiln::csrf_token(req);
    kiln::render(res, views::accounts::signup{.errors = kiln::FieldErrors{}, .token = token});
}

kiln::Task<> AccountsController::signup(kiln::Request& req, kiln::Response& res) {
    std::string email = field(req, "email"), name = field(req, "name");
    kiln::FieldErrors errors;
    int status = 422;
    int64_t retry = 0;
    try {
        kiln::auth::User u = co_await accounts_.sign_up(req, email, name, field(req, "password"));
        kiln::flash(req, "notice", "Welcome, " + u.name + "!");
        co_return res.redirect("/posts", 303);
    } catch (const Error& e) {
        if (e.kind() == Error::Kind::Throttled) {
            status = 429;
            retry = e.retry_after();
        } else if (e.kind() != Error::Kind::Invalid && e.kind() != Error::Kind::Taken) {
            throw;
        }
        errors.add(e.field(), e.what());
    }
    std::string token = kiln::csrf_token(req);
    kiln::render(res, views::accounts::signup{.email = email, .name = name, .errors = errors, .token = token});
    res.status(status);
    if (retry > 0) res.header("Retry-After", std::to_string(retry));
}

kiln::Task<> AccountsController::login_form(kiln::Request& req, kiln::Response& res) {
    if (auto in = co_await accounts_.current_user(req)) co_return res.redirect("/posts", 303);
    std::string next = std::string(req.query("next").value_or(""));
    std::string notice = kiln::take_flash(req, "notice");
    std::string token = kiln::csrf_token(req);
    kiln::render(res, views::accounts::login{.next = next, .notice = notice, .token = token});
}

kiln::Task<> AccountsController::login(kiln::Request& req, kiln::Response& res) {
    std::string email = field(req, "email"), next = field(req, "next");
    std::string error;
    int status = 422;
    int64_t retry = 0;
    try {
        kiln::auth::User u = co_await accounts_.log_in(req, email, field(req, "password"));
        kiln::flash(req, "notice", "Logged in as " + u.name);
        co_return res.redirect(kiln::auth::local_path_or(next, "/posts"), 303);
    } catch (const Error& e) {
        if (e.kind() == Error::Kind::Throttled) {
            status = 429;
            retry = e.retry_after();
        } else if (e.kind() != Error::Kind::BadCredentials) {
            throw;
        }
        error = e.what();
    }
    std::string token = kiln::csrf_token(req);
    kiln::render(res, views::accounts::login{.email = email, .next = next, .error = error, .token = token});
    res.status(status);
    if (retry > 0) res.header("Retry-After", std::to_string(retry));
}

void AccountsController::logout(kiln::Request& req, kiln::Response& res) {
    accounts_.log_out(req);
    res.redirect("/posts", 303);
}

kiln::Task<> AccountsController::password_form(kiln::Request& req, kiln::Response& res) {
    Viewer v = co_await viewer_of(accounts_, req);
    if (!v.user) co_return accounts_.send_to_login(req, res);
    kiln::render(res, views::accounts::password{.errors = kiln::FieldErrors{}, .user = v.name, .token = v.token});
}

kiln::Task<> AccountsController::change_password(kiln::Request& req, kiln::Response& res) {
    kiln::FieldErrors errors;
    int status = 422;
    try {
        co_await accounts_.change_password(req, field(req, "current_password"), field(req, "password"));
        kiln::flash(req, "notice", "Password changed; your other sessions are logged out");
        co_return res.redirect("/posts", 303);
    } catch (const Error& e) {
        if (e.kind() == Error::Kind::NotLoggedIn) co_return accounts_.send_to_login(req, res);
        if (e.kind() == Error::Kind::Throttled) status = 429;
        errors.add(e.field().empty() ? "current_password" : e.field(), e.what());
    }
    Viewer v = co_await viewer_of(accounts_, req);
    kiln::render(res, views::accounts::password{.errors = errors, .user = v.name, .token = v.token});
    res.status(status);
}

}  // namespace blog
