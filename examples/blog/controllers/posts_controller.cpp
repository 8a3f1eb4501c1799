#include "controllers/posts_controller.hpp"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <optional>

#include "controllers/errors_controller.hpp"
#include "controllers/viewer.hpp"
#include "models/post.hpp"
#include "views/posts/edit.hpp"
#include "views/posts/index.hpp"
#include "views/posts/new.hpp"
#include "views/posts/show.hpp"

namespace blog {

namespace {

int64_t now_seconds() { return static_cast<int64_t>(std::time(nullptr)); }

}  // namespace

// The 404 page for a post that is not there, with the viewer in its header.
kiln::Task<> PostsController::missing(kiln::Request& req, kiln::Response& res) {
    Viewer v = co_await viewer_of(accounts_, req);
    render_not_found(res, "post", v.name, v.token);
}

bool PostsController::needs_login(const kiln::Request& req) {
    std::string_view p = req.route_pattern();  // "/posts/new/" is routed as "/posts/new"
    if (!p.starts_with("/posts")) return false;
    bool get = req.method() == kiln::Method::Get || req.method() == kiln::Method::Head;
    return !get || p == "/posts/new" || p.ends_with("/edit");
}

kiln::Task<> PostsController::index(kiln::Request& req, kiln::Response& res) {
    // A missing or malformed ?page= shows the first page; one past the end is empty.
    int64_t number = std::max<int64_t>(1, req.query_or<int64_t>("page", 1));
    auto page = co_await store_.page<PostListing>(number, kPerPage, "created_at DESC, id DESC");  // no bodies
    std::string notice = kiln::take_flash(req, "notice");
    Viewer v = co_await viewer_of(accounts_, req);
    kiln::render(res, views::posts::index{.page = page, .notice = notice, .user = v.name, .token = v.token});
}

kiln::Task<> PostsController::show(kiln::Request& req, kiln::Response& res) {
    auto post = co_await store_.find<Post>(req.param<int64_t>("id"));  // "/posts/abc": 404
    if (!post) co_return co_await missing(req, res);
    std::string notice = kiln::take_flash(req, "notice");
    Viewer v = co_await viewer_of(accounts_, req);
    bool mine = v.user && v.user->id == post->author_id;
    kiln::render(res, views::posts::show{.post = *post, .token = v.token, .notice = notice, .user = v.name, .mine = mine});
}

kiln::Task<> PostsController::new_(kiln::Request& req, kiln::Response& res) {
    Viewer v = co_await viewer_of(accounts_, req);
    kiln::render(res, views::posts::new_{.post = Post{}, .errors = kiln::FieldErrors{}, .token = v.token, .user = v.name});
}

kiln::Task<> PostsController::create(kiln::Request& req, kiln::Response& res) {
    Viewer v = co_await viewer_of(accounts_, req);  // logged in: require_login saw to it
    Post post;
    if (kiln::FieldErrors errors = assign_from_form(post, req.form()); errors.any()) {
        kiln::render(res, views::posts::new_{.post = post, .errors = errors, .token = v.token, .user = v.name});
        res.status(422);
        co_return;
    }
    post.created_at = post.updated_at = now_seconds();
    post.author_id = v.user->id;
    post.author_name = v.user->name;
    co_await store_.insert(post);
    kiln::flash(req, "notice", "Post created");
    res.redirect(path_of(post), 303);
}

kiln::Task<> PostsController::edit(kiln::Request& req, kiln::Response& res) {
    auto post = co_await store_.find<Post>(req.param<int64_t>("id"));  // "/posts/abc": 404
    if (!post) co_return co_await missing(req, res);
    Viewer v = co_await viewer_of(accounts_, req);
    if (!v.user || v.user->id != post->author_id) co_return render_forbidden(res, v.name, v.token);
    kiln::render(res, views::posts::edit{.post = *post, .errors = kiln::FieldErrors{}, .token = v.token, .user = v.name});
}

kiln::Task<> PostsController::update(kiln::Request& req, kiln::Response& res) {
    auto post = co_await store_.find<Post>(req.param<int64_t>("id"));  // "/posts/abc": 404
    if (!post) co_return co_await missing(req, res);
    Viewer v = co_await viewer_of(accounts_, req);
    if (!v.user || v.user->id != post->author_id) co_return render_forbidden(res, v.name, v.token);
    if (kiln::FieldErrors errors = assign_from_form(*post, req.form()); errors.any()) {
        kiln::render(res, views::posts::edit{.post = *post, .errors = errors, .token = v.token, .user = v.name});
        res.status(422);
        co_return;
    }
    post->updated_at = now_seconds();
    bool updated = co_await store_.update(*post);
    if (!updated) co_return co_await missing(req, res);  // deleted meanwhile
    kiln::flash(req, "notice", "Post updated");
    res.redirect(path_of(*post), 303);
}

kiln::Task<> PostsController::destroy(kiln::Request& req, kiln::Response& res) {
    int64_t id = req.param<int64_t>("id");
    auto post = co_await store_.find<Post>(id);
    if (!post) co_return co_await missing(req, res);
    Viewer v = co_await viewer_of(accounts_, req);
    if (!v.user || v.user->id != post->author_id) co_return render_forbidden(res, v.name, v.token);
    bool removed = co_await store_.remove<Post>(id);
    if (!removed) co_return co_await missing(req, res);
    kiln::flash(req, "notice", "Post deleted");
    res.redirect("/posts", 303);
}

}  // namespace blog
