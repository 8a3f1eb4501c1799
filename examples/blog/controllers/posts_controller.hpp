// PostsController: one member function per action of the posts resource, as
// `kiln generate scaffold post title:string body:text` writes them:
//   GET /posts (index, ?page=N)  GET /posts/new  POST /posts (create)
//   GET /posts/:id (show)  GET /posts/:id/edit  PUT|PATCH /posts/:id (update)
//   DELETE /posts/:id (destroy)
// Handlers run on the server's loop threads; each uses its thread's connection from
// the shared db::PerThread, which must outlive the server. Responses are HTML pages
// rendered through views/; a missing post renders views/errors/not_found (404).
#pragma once
#include <kiln/kiln.hpp>

namespace blog {

class PostsController {
public:
    static constexpr int kPerPage = 10;

    explicit PostsController(kiln::db::PerThread& db) : db_(db) {}

    void index(kiln::Request& req, kiln::Response& res);
    void show(kiln::Request& req, kiln::Response& res);
    void new_(kiln::Request& req, kiln::Response& res);
    void create(kiln::Request& req, kiln::Response& res);
    void edit(kiln::Request& req, kiln::Response& res);
    void update(kiln::Request& req, kiln::Response& res);
    void destroy(kiln::Request& req, kiln::Response& res);

private:
    kiln::db::PerThread& db_;
};

}  // namespace blog
