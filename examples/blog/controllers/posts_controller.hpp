// PostsController: one member function per action of the posts resource, as
// `kiln generate scaffold post title:string body:text` writes them:
//   GET /posts (index, ?page=N)  GET /posts/new  POST /posts (create)
//   GET /posts/:id (show)  GET /posts/:id/edit  PUT|PATCH /posts/:id (update)
//   DELETE /posts/:id (destroy)
// Actions that touch the database are coroutines on a kiln::Store (which must
// outlive the server): SQLite by default, its calls on kiln's blocking-work threads
// so a write waiting on SQLite's lock never holds up a loop; PostgreSQL when the
// settings name one (--database-url), its queries pipelined on the loop. Responses
// are HTML pages rendered through views/; a missing post renders
// views/errors/not_found (404).
#pragma once
#include <kiln/auth.hpp>
#include <kiln/kiln.hpp>
#include <kiln/store.hpp>

namespace blog {

class PostsController {
public:
    static constexpr int kPerPage = 10;

    PostsController(kiln::Store& store, kiln::auth::Accounts& accounts) : store_(store), accounts_(accounts) {}

    // The actions that need a log-in (new, create, edit, update, destroy): for
    // Accounts::require_login. Only a post's author may edit or delete it (403).
    static bool needs_login(const kiln::Request& req);

    kiln::Task<> index(kiln::Request& req, kiln::Response& res);
    kiln::Task<> show(kiln::Request& req, kiln::Response& res);
    kiln::Task<> new_(kiln::Request& req, kiln::Response& res);
    kiln::Task<> create(kiln::Request& req, kiln::Response& res);
    kiln::Task<> edit(kiln::Request& req, kiln::Response& res);
    kiln::Task<> update(kiln::Request& req, kiln::Response& res);
    kiln::Task<> destroy(kiln::Request& req, kiln::Response& res);

private:
    kiln::Task<> missing(kiln::Request& req, kiln::Response& res);
    kiln::Store& store_;
    kiln::auth::Accounts& accounts_;
};

}  // namespace blog
