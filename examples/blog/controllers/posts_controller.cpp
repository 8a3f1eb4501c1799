#include "controllers/posts_controller.hpp"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <optional>

#include "controllers/errors_controller.hpp"
#include "models/post.hpp"
#include "views/posts/edit.hpp"
#include "views/posts/index.hpp"
#include "views/posts/new.hpp"
#include "views/posts/show.hpp"

namespace blog {

namespace {

int64_t now_seconds() { return static_cast<int64_t>(std::time(nullptr)); }

}  // namespace

kiln::Task<> PostsController::index(kiln::Request& req, kiln::Response& res) {
    // A missing or malformed ?page= shows the first page; one past the end is empty.
    int64_t number = std::max<int64_t>(1, req.query_or<int64_t>("page", 1));
    auto page = co_await store_.page<Post>(number, kPerPage, "created_at DESC, id DESC");
    std::string notice = kiln::take_flash(req, "notice");
    kiln::render(res, views::posts::index{.page = page, .notice = notice});
}

kiln::Task<> PostsController::show(kiln::Request& req, kiln::Response& res) {
    auto post = co_await store_.find<Post>(req.param<int64_t>("id"));  // "/posts/abc": 404
    if (!post) co_return render_not_found(res, "post");
    std::string token = kiln::csrf_token(req);
    std::string notice = kiln::take_flash(req, "notice");
    kiln::render(res, views::posts::show{.post = *post, .token = token, .notice = notice});
}

void PostsController::new_(kiln::Request& req, kiln::Response& res) {
    std::string token = kiln::csrf_token(req);
    kiln::render(res, views::posts::new_{.post = Post{}, .errors = kiln::FieldErrors{}, .token = token});
}

kiln::Task<> PostsController::create(kiln::Request& req, kiln::Response& res) {
    Post post;
    if (kiln::FieldErrors errors = assign_from_form(post, req.form()); errors.any()) {
        std::string token = kiln::csrf_token(req);
        kiln::render(res, views::posts::new_{.post = post, .errors = errors, .token = token});
        res.status(422);
        co_return;
    }
    post.created_at = post.updated_at = now_seconds();
    co_await store_.insert(post);
    kiln::flash(req, "notice", "Post created");
    res.redirect(path_of(post), 303);
}

kiln::Task<> PostsController::edit(kiln::Request& req, kiln::Response& res) {
    auto post = co_await store_.find<Post>(req.param<int64_t>("id"));  // "/posts/abc": 404
    if (!post) co_return render_not_found(res, "post");
    std::string token = kiln::csrf_token(req);
    kiln::render(res, views::posts::edit{.post = *post, .errors = kiln::FieldErrors{}, .token = token});
}

kiln::Task<> PostsController::update(kiln::Request& req, kiln::Response& res) {
    auto post = co_await store_.find<Post>(req.param<int64_t>("id"));  // "/posts/abc": 404
    if (!post) co_return render_not_found(res, "post");
    if (kiln::FieldErrors errors = assign_from_form(*post, req.form()); errors.any()) {
        std::string token = kiln::csrf_token(req);
        kiln::render(res, views::posts::edit{.post = *post, .errors = errors, .token = token});
        res.status(422);
        co_return;
    }
    post->updated_at = now_seconds();
    bool updated = co_await store_.update(*post);
    if (!updated) co_return render_not_found(res, "post");  // deleted meanwhile
    kiln::flash(req, "notice", "Post updated");
    res.redirect(path_of(*post), 303);
}

kiln::Task<> PostsController::destroy(kiln::Request& req, kiln::Response& res) {
    int64_t id = req.param<int64_t>("id");
    bool removed = co_await store_.remove<Post>(id);
    if (!removed) co_return render_not_found(res, "post");
    kiln::flash(req, "notice", "Post deleted");
    res.redirect("/posts", 303);
}

}  // namespace blog
