// PostsController: one member function per action of the posts resource, as
// `kiln generate scaffold post title:string body:text` writes them:
//   GET /posts (index, ?page=N)  GET /posts/new  POST /posts (create)
//   GET /posts/:id (show)  GET /posts/:id/edit  PUT|PATCH /posts/:id (update)
//   DELETE /posts/:id (destroy)
// Actions that touch the database are coroutines: their SQLite calls run on kiln's
// blocking-work threads (kiln::blocking), each thread with its own connection from
// the shared db::PerThread (which must outlive the server), so a write waiting on
// SQLite's lock never holds up the loop's other connections. Responses are HTML
// pages rendered through views/; a missing post renders views/errors/not_found (404).
#pragma once
#include <kiln/kiln.hpp>

namespace blog {

class PostsController {
public:
    static constexpr int kPerPage = 10;

    explicit PostsController(kiln::db::PerThread& db) : db_(db) {}

    kiln::Task<> index(kiln::Request& req, kiln::Response& res);
    kiln::Task<> show(kiln::Request& req, kiln::Response& res);
    void new_(kiln::Request& req, kiln::Response& res);
    kiln::Task<> create(kiln::Request& req, kiln::Response& res);
    kiln::Task<> edit(kiln::Request& req, kiln::Response& res);
    kiln::Task<> update(kiln::Request& req, kiln::Response& res);
    kiln::Task<> destroy(kiln::Request& req, kiln::Response& res);

private:
    kiln::db::PerThread& db_;
};

}  // namespace blog
