#include <kiln/request.hpp>
#include <kiln/app.hpp>  // HttpError

#include <sys/socket.h>

#include <stdexcept>

#include "app/app_impl.hpp"
#include "app/session_binding.hpp"
#include "http/parser.hpp"
#include "http/request.hpp"
#include "http/url.hpp"

namespace kiln {

namespace {
const http::Request kUnbound;  // what a Request made outside the engine reads
}  // namespace

Request::Request() : msg_(&kUnbound) {}

void Request::bind(const http::Request& msg) {
    msg_ = &msg;
    // App ends every request's session; were one left open (a path that missed it),
    // it must not become the next request's, another client's.
    if (session_.active()) session_.end(false);
    method_ = msg.method();
    param_count_ = 0;
    route_ = nullptr;
    allowed_methods_ = 0;
    query_parsed_ = false;
    query_.clear();
    form_.reset();
    json_.reset();
    locals_.clear();
    handler_failed_ = false;
}

void Request::release() {
    form_.reset();
    json_.reset();
    locals_.clear();
}

std::string_view Request::method_name() const { return msg_->method_name(); }
std::string_view Request::target() const { return msg_->target(); }
std::string_view Request::path() const { return msg_->path(); }
std::string_view Request::query_string() const { return msg_->query_string(); }
std::string_view Request::host() const { return msg_->host(); }
int Request::version_major() const { return msg_->version_major(); }
int Request::version_minor() const { return msg_->version_minor(); }
bool Request::keep_alive() const { return msg_->keep_alive(); }
bool Request::secure() const { return msg_->secure(); }

std::string Request::client_address() const {
    char buf[64];
    const net::PeerAddress& a = msg_->client();
    if (a.family == 0) return {};
    return std::string(buf, a.format(buf, sizeof buf));
}
std::string Request::client_block() const {
    char buf[64];
    const net::PeerAddress a = msg_->client().counted();
    if (a.family == 0) return {};
    std::string s(buf, a.format(buf, sizeof buf));
    if (a.family == AF_INET6) s += "/64";
    return s;
}
std::string_view Request::body() const { return msg_->body(); }
std::string_view Request::route_pattern() const {
    return route_ ? std::string_view(static_cast<const Route*>(route_)->pattern) : std::string_view();
}
std::span<const Header> Request::headers() const { return msg_->headers(); }
std::optional<std::string_view> Request::header(std::string_view name) const { return msg_->header(name); }

const std::vector<std::pair<std::string, std::string>>& Request::query_params() const {
    if (!query_parsed_) {
        query_parsed_ = true;
        http::for_each_query_pair(query_string(), [this](std::string_view k, std::string_view v) {
            std::string dk, dv;
            // A malformed escape keeps the raw text rather than failing the request.
            if (!http::decode_component(k, dk, true)) dk.assign(k);
            if (!http::decode_component(v, dv, true)) dv.assign(v);
            query_.emplace_back(std::move(dk), std::move(dv));
        });
    }
    return query_;
}

std::optional<std::string_view> Request::query(std::string_view name) const {
    for (const auto& [k, v] : query_params())
        if (k == name) return std::string_view(v);
    return std::nullopt;
}

Session& Request::session() {
    if (!session_binding_) throw std::logic_error("Request::session outside a handler run by an App with a session store");
    if (!session_.active()) session_.begin(session_binding_, cookie(session_binding_->options->cookie).value_or(""));
    return session_;
}

Session* Request::existing_session() {
    if (session_.active()) return &session_;
    if (!session_binding_) return nullptr;
    auto cookie_value = cookie(session_binding_->options->cookie);
    if (!cookie_value || !session_.begin(session_binding_, *cookie_value, false)) return nullptr;
    return &session_;
}

void Request::bad_param(std::string_view name, int status) {
    if (status == 404) throw HttpError(404, "Not Found");  // the path names nothing: say no more
    throw HttpError(status, "query parameter '" + std::string(name) + "' has the wrong form");
}

std::string_view Request::param(std::string_view name) const {
    for (size_t i = 0; i < param_count_; ++i)
        if (params_[i].name == name) return params_[i].value;
    return {};
}

}  // namespace kiln
