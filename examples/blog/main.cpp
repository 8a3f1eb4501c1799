// The blog: TreeFrog's tutorial app on kiln. Posts are kept in SQLite, in
// data/blog.sqlite under the current directory (BLOG_DB=path overrides); the
// migrations in db/migrations run at start, and the stylesheet is served from
// public/ (both found under BLOG_ROOT, by default this source folder). The actions'
// SQLite calls run on kiln's blocking-work threads (kiln::blocking), never on a loop.
//
// The migrations run once per node (App::on_node_start: in the supervisor, after the
// sockets are bound and before any worker starts); each worker then opens its own
// connections, one per blocking-work thread, when a handler first asks.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <kiln/kiln.hpp>

#include "controllers/errors_controller.hpp"
#include "controllers/posts_controller.hpp"

namespace {

std::string env_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

// Brings the schema up to date; throws, naming the database, if a migration fails
// (the start stops there).
void migrate(const std::string& db_path, const std::string& dir) {
    try {
        kiln::db::Database conn(db_path);  // closed again before the workers start
        kiln::db::migrate(conn, dir);
    } catch (const kiln::db::Error& e) {
        throw std::runtime_error(db_path + ": " + e.what());
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

    kiln::db::PerThread db(db_path);
    blog::PostsController posts(db);
    using C = blog::PostsController;

    kiln::App app;
    app.on_node_start([&](const kiln::ServerOptions&) { migrate(db_path, root + "/db/migrations"); });
    app.use(blog::not_found_pages());
    app.use(kiln::csrf_protect());
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
