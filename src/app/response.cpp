// kiln::Response: the handler's handle on http::Response, and the conveniences
// (text, html, json, redirect) on top of it.
#include <kiln/response.hpp>

#include <kiln/request.hpp>

#include <stdexcept>

#include "app/compression.hpp"
#include "app/head_hook.hpp"
#include "http/response.hpp"
#include "util/log.hpp"

namespace kiln {

Response::Response() : msg_(nullptr), owned_(std::make_unique<http::Response>()) { msg_ = owned_.get(); }
Response::Response(Unowned) : msg_(nullptr) {}
Response::~Response() = default;

Response& Response::status(int code) {
    msg_->status(code);
    return *this;
}
int Response::status() const { return msg_->status(); }

Response& Response::header(std::string_view name, std::string_view value) {
    msg_->header(name, value);
    return *this;
}

Response& Response::add_header(std::string_view name, std::string_view value) {
    msg_->add_header(name, value);
    return *this;
}

std::optional<std::string_view> Response::header(std::string_view name) const { return msg_->header(name); }
const std::vector<std::pair<std::string, std::string>>& Response::headers() const { return msg_->headers(); }

void Response::send(std::string_view body, std::string_view content_type) { msg_->send(body, content_type); }
void Response::text(std::string_view body) { msg_->send(body, "text/plain; charset=utf-8"); }
void Response::html(std::string_view body) { msg_->send(body, "text/html; charset=utf-8"); }
void Response::json(std::string_view body) { msg_->send(body, "application/json"); }

void Response::redirect(std::string_view location, int code) {
    msg_->status(code);
    msg_->header("Location", location);
    msg_->drop_file();
    msg_->body().clear();
}

void Response::file(int fd, uint64_t offset, uint64_t length, std::string_view content_type) {
    msg_->file(fd, offset, length, content_type);
}
bool Response::has_file() const { return msg_->has_file(); }

void Response::write(std::string_view chunk) {
    // The head leaves with this chunk: never without what the hook adds.
    if (!msg_->streaming() && !app::HeadHook::run(*this)) throw std::runtime_error("the response's head hook failed");
    if (compression_ && !msg_->streaming() && msg_->has_stream() && app::codable(*compression_, *msg_))
        app::compress_stream(*compression_, compression_request_->header("accept-encoding").value_or(""), *msg_);
    msg_->write(chunk);
}
void Response::end() { msg_->end(); }
bool Response::streaming() const { return msg_->streaming(); }

std::string_view Response::content_type() const { return msg_->content_type(); }
const std::string& Response::body() const { return msg_->body(); }
std::string& Response::body() { return msg_->body(); }
void Response::close_connection() { msg_->close_connection(); }
bool Response::closes_connection() const { return msg_->closes_connection(); }
void Response::clear() {
    msg_->discard();
    // Chunks kept rather than sent (the hybrid pool, the test client) went with their
    // head: the next head gets the hook's headers again.
    if (!msg_->streaming()) head_hook_ran_ = false;
}

namespace app {
void HeadHook::attach(Request& req, Response& res, const HeadHook& hook) {
    res.head_hook_ = &hook;
    res.head_request_ = &req;
    res.head_hook_ran_ = false;
}

bool HeadHook::run(Response& res) {
    const HeadHook* hook = res.head_hook_;
    if (!hook || res.head_hook_ran_) return true;
    res.head_hook_ran_ = true;
    // Outside the handler's guards: a hook that throws (its values are checked when it
    // is made, so only memory can run out) fails the response, never the process,
    // and no head leaves without what the hook adds: the answer becomes a bare 500.
    try {
        hook->before_head(*res.head_request_, res);
        return true;
    } catch (const std::exception& e) {
        util::log(util::LogLevel::Error, "a response's head hook threw: %s", e.what());
    } catch (...) {
        util::log(util::LogLevel::Error, "a response's head hook threw a non-exception");
    }
    if (!res.msg_->streaming()) {
        res.msg_->discard();
        res.msg_->status(500);
        res.msg_->send("Internal Server Error\n", "text/plain; charset=utf-8");
        res.msg_->close_connection();
    }
    return false;
}
}  // namespace app

}  // namespace kiln
