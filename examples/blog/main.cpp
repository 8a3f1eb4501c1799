// The blog: TreeFrog's tutorial app on kiln. Posts are kept in SQLite, in
// data/blog.sqlite under the current directory (BLOG_DB=path overrides), or in
// PostgreSQL when the settings name a database (--database-url URL); the same code
// serves both (kiln::Store). The migrations in db/migrations (db/migrations/postgresql
// on PostgreSQL) run at start, and the stylesheet is served from public/ (both found
// under BLOG_ROOT, by default this source folder). SQLite calls run on kiln's
// blocking-work threads, PostgreSQL queries on the loops: neither blocks a loop.
//
// The migrations run once per node (App::on_node_start: in the supervisor, after the
// sockets are bound and before any worker starts); each worker then opens its own
// connections (SQLite: one per blocking-work thread; PostgreSQL: one per loop) when a
// handler first asks.
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include <kiln/kiln.hpp>

#include "controllers/accounts_controller.hpp"
#include "controllers/errors_controller.hpp"
#include "controllers/posts_controller.hpp"
#include "models/post.hpp"

namespace {

std::string env_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

// Brings the schema up to date (db/migrations on SQLite, db/migrations/postgresql on
// PostgreSQL); throws, naming the database, if a migration fails (the start stops).
// PostgreSQL unreachable is no reason not to start: the node serves, its health
// check fails (no schema to read), and a thread of this process applies the
// migrations once the server answers.
void migrate(kiln::Store& store, const kiln::ServerOptions& o, const std::string& db_path, const std::string& dir) {
    try {
        store.migrate(o, dir);
    } catch (const kiln::db::Error& e) {
        if (e.kind() == kiln::db::ErrorKind::Io && !o.database_url.empty()) {
            std::fprintf(stderr, "blog: PostgreSQL unreachable (%s); serving, unhealthy, until it answers\n", e.what());
            std::thread([&store, o, dir] {
                for (;;) {
                    std::this_thread::sleep_for(std::chrono::seconds(1));
                    try {
                        store.migrate(o, dir);
                        std::fprintf(stderr, "blog: PostgreSQL is back; migrations applied\n");
                        return;
                    } catch (const kiln::db::Error& again) {
                        if (again.kind() == kiln::db::ErrorKind::Io) continue;
                        std::fprintf(stderr, "blog: PostgreSQL: %s\n", again.what());
                        return;
                    }
                }
            }).detach();
            return;
        }
        throw std::runtime_error((o.database_url.empty() ? db_path : std::string("PostgreSQL")) + ": " + e.what());
    }
}

// A route handler calling one controller action (a coroutine, or a plain function).
template <class Controller>
auto action(Controller& c, kiln::Task<> (Controller::*fn)(kiln::Request&, kiln::Response&)) {
    return [&c, fn](kiln::Request& req, kiln::Response& res) -> kiln::Task<> { return (c.*fn)(req, res); };
}
template <class Controller>
kiln::Handler action(Controller& c, void (Controller::*fn)(kiln::Request&, kiln::Response&)) {
    return [&c, fn](kiln::Request& req, kiln::Response& res) { (c.*fn)(req, res); };
}

}  // namespace

int main(int argc, char** argv) {
    const std::string root = env_or("BLOG_ROOT", BLOG_ROOT);
    const std::string db_path = env_or("BLOG_DB", "data/blog.sqlite");

    kiln::Store store(db_path);  // or PostgreSQL, with --database-url
    kiln::auth::Accounts accounts(store);
    blog::PostsController posts(store, accounts);
    blog::AccountsController account(accounts);
    using C = blog::PostsController;
    using A = blog::AccountsController;

    kiln::App app;
    app.on_node_start([&](const kiln::ServerOptions& o) { migrate(store, o, db_path, root + "/db/migrations"); });
    app.on_worker_start([&](const kiln::ServerOptions& o) { store.configure(o); });
    // Healthy when the posts table answers: the database is reachable and migrated.
    app.health_check("database", [&]() -> kiln::Task<std::string> {
        co_await store.find<blog::Post>(0);
        co_return std::string();
    });
    app.use(kiln::security_headers());  // CSP, nosniff, Referrer-Policy, X-Frame-Options, HSTS on HTTPS
    app.use(blog::not_found_pages(accounts));
    app.use(kiln::csrf_protect());
    app.use(accounts.require_login(&C::needs_login));
    app.get("/signup", action(account, &A::signup_form));
    app.post("/signup", action(account, &A::signup));
    app.get("/login", action(account, &A::login_form));
    app.post("/login", action(account, &A::login));
    app.post("/logout", action(account, &A::logout));
    app.get("/password", action(account, &A::password_form));
    app.post("/password", action(account, &A::change_password));
    app.get("/", [](kiln::Request&, kiln::Response& res) { res.redirect("/posts", 303); });
    app.get("/posts", action(posts, &C::index));
    app.get("/posts/new", action(posts, &C::new_));
    app.post("/posts", action(posts, &C::create));
    app.get("/posts/:id", action(posts, &C::show));
    app.get("/posts/:id/edit", action(posts, &C::edit));
    app.put("/posts/:id", action(posts, &C::update));
    app.patch("/posts/:id", action(posts, &C::update));
    app.del("/posts/:id", action(posts, &C::destroy));
    app.files("/", root + "/public");
    return app.run(argc, argv);
}
