#include "controllers/posts_controller.hpp"

#include <charconv>
#include <ctime>
#include <optional>
#include <string_view>

#include "controllers/errors_controller.hpp"
#include "models/post.hpp"
#include "views/posts/edit.hpp"
#include "views/posts/index.hpp"
#include "views/posts/new.hpp"
#include "views/posts/show.hpp"

namespace blog {
namespace db = kiln::db;

namespace {

// A positive decimal number and nothing else; nullopt otherwise.
std::optional<int64_t> parse_positive(std::string_view text) {
    int64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n < 1) return std::nullopt;
    return n;
}

// The post named by the route's :id; nullopt for a malformed id or no such row.
std::optional<Post> find_post(db::Database& conn, const kiln::Request& req) {
    auto id = parse_positive(req.param("id"));
    if (!id) return std::nullopt;
    return db::find<Post>(conn, *id);
}

std::string_view trim(std::string_view s) {
    constexpr std::string_view ws = " \t\r\n\f\v";
    size_t first = s.find_first_not_of(ws);
    if (first == s.npos) return {};
    return s.substr(first, s.find_last_not_of(ws) - first + 1);
}

// Copies the form's title (trimmed) and body into `post`, leaving its id and times.
void assign_from_form(Post& post, const kiln::Request& req) {
    const kiln::Form& form = req.form();
    post.title = trim(form.get("title").value_or(""));
    post.body = form.get("body").value_or("");
}

int64_t now_seconds() { return static_cast<int64_t>(std::time(nullptr)); }

}  // namespace

void PostsController::index(kiln::Request& req, kiln::Response& res) {
    // A missing or malformed ?page= shows the first page; one past the end is empty.
    int64_t number = parse_positive(req.query("page").value_or("")).value_or(1);
    auto page = db::page<Post>(db_.get(), number, kPerPage, "created_at DESC, id DESC");
    std::string notice = kiln::take_flash(req, "notice");
    kiln::render(res, views::posts::index{.page = page, .notice = notice});
}

void PostsController::show(kiln::Request& req, kiln::Response& res) {
    auto post = find_post(db_.get(), req);
    if (!post) return render_not_found(res, "post");
    std::string token = kiln::csrf_token(req);
    std::string notice = kiln::take_flash(req, "notice");
    kiln::render(res, views::posts::show{.post = *post, .token = token, .notice = notice});
}

void PostsController::new_(kiln::Request& req, kiln::Response& res) {
    std::string token = kiln::csrf_token(req);
    kiln::render(res, views::posts::new_{.post = Post{}, .errors = PostErrors{}, .token = token});
}

void PostsController::create(kiln::Request& req, kiln::Response& res) {
    Post post;
    assign_from_form(post, req);
    if (PostErrors errors = validate(post); errors.any()) {
        std::string token = kiln::csrf_token(req);
        kiln::render(res, views::posts::new_{.post = post, .errors = errors, .token = token});
        res.status(422);
        return;
    }
    post.created_at = post.updated_at = now_seconds();
    db::insert(db_.get(), post);
    kiln::flash(req, "notice", "Post created");
    res.redirect(path_of(post), 303);
}

void PostsController::edit(kiln::Request& req, kiln::Response& res) {
    auto post = find_post(db_.get(), req);
    if (!post) return render_not_found(res, "post");
    std::string token = kiln::csrf_token(req);
    kiln::render(res, views::posts::edit{.post = *post, .errors = PostErrors{}, .token = token});
}

void PostsController::update(kiln::Request& req, kiln::Response& res) {
    db::Database& conn = db_.get();
    auto post = find_post(conn, req);
    if (!post) return render_not_found(res, "post");
    assign_from_form(*post, req);
    if (PostErrors errors = validate(*post); errors.any()) {
        std::string token = kiln::csrf_token(req);
        kiln::render(res, views::posts::edit{.post = *post, .errors = errors, .token = token});
        res.status(422);
        return;
    }
    post->updated_at = now_seconds();
    if (!db::update(conn, *post)) return render_not_found(res, "post");  // deleted meanwhile
    kiln::flash(req, "notice", "Post updated");
    res.redirect(path_of(*post), 303);
}

void PostsController::destroy(kiln::Request& req, kiln::Response& res) {
    auto id = parse_positive(req.param("id"));
    if (!id || !db::remove<Post>(db_.get(), *id)) return render_not_found(res, "post");
    kiln::flash(req, "notice", "Post deleted");
    res.redirect("/posts", 303);
}

}  // namespace blog
