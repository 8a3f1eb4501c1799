#include <kiln/websocket.hpp>
#include <kiln/topics.hpp>

#include <kiln/app.hpp>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <algorithm>
#include <exception>

#include "app/app_impl.hpp"
#include "app/detached.hpp"
#include "app/ws_internal.hpp"
#include "http/parser.hpp"
#include "http/request.hpp"
#include "http/response.hpp"
#include "http/ws_deflate.hpp"
#include "http/ws_session.hpp"
#include "net/async.hpp"
#include "util/log.hpp"

namespace kiln {
namespace detail {

// What a receive() or drained() waits on; completed by the WebSocket.
class WsWait final : public net::Wait {
public:
    explicit WsWait(std::coroutine_handle<> h) : net::Wait(h) {}
    using net::Wait::complete;

private:
    void on_cancel() override {}
};

struct WsRun {
    net::AsyncScope scope;
};

// The engine's endpoint: one per WebSocket, owned by its session.
class WsBridge final : public http::WsEndpoint {
public:
    explicit WsBridge(std::shared_ptr<WebSocket> ws) : ws_(std::move(ws)) {}
    ~WsBridge() override {
        // The upgrade never happened (the server began to stop before the 101 went
        // out): an open callback that ran with the handshake gets its close too (one
        // that threw did not open anything).
        if (ws_->close_code_) return;
        if (open_ran) on_close(1006, {});
        else ws_->closed(1006);
    }
    bool open_ran = false;  // the route's open callback returned

    void on_open(http::WsSession& session) override {
        WebSocket& ws = *ws_;
        ws.session_ = &session;
        ws.opened_ = true;
        for (auto& [data, binary] : ws.early_) ws.send_message(binary, data);
        std::vector<std::pair<std::string, bool>>().swap(ws.early_);
        if (ws.route_->coroutine) start_coroutine();
    }

    void on_message(http::ws::Opcode op, std::string_view data) override {
        WebSocket& ws = *ws_;
        bool binary = op == http::ws::Opcode::Binary;
        if (ws.route_->coroutine) {
            if (ws.inbox_bytes_ + data.size() > ws.route_->options.max_backlog) {
                ws.close(1008, "messages arrive faster than they are read");
                return;
            }
            ws.inbox_bytes_ += data.size();
            ws.inbox_.push_back(WsMessage{std::string(data), binary});
            if (WsWait* w = std::exchange(ws.receiver_, nullptr)) w->complete();
            return;
        }
        if (!ws.route_->handlers.message) return;
        try {
            ws.route_->handlers.message(ws, data, binary);
        } catch (const std::exception& e) {
            util::log(util::LogLevel::Error, "WebSocket message handler threw: %s", e.what());
            ws.close(1011, "internal error");
        }
    }

    void on_drain() override {
        WebSocket& ws = *ws_;
        if (WsWait* w = std::exchange(ws.drainer_, nullptr)) w->complete();
        if (ws.route_->handlers.drain) ws.route_->handlers.drain(ws);
    }

    void on_close(uint16_t code, std::string_view reason) override {
        WebSocket& ws = *ws_;
        ws.closed(code);
        if (ws.route_->handlers.close) {
            try {
                ws.route_->handlers.close(ws, code, reason);
            } catch (const std::exception& e) {
                util::log(util::LogLevel::Error, "WebSocket close handler threw: %s", e.what());
            } catch (...) {  // (also run from ~WsBridge: nothing may escape)
                util::log(util::LogLevel::Error, "WebSocket close handler threw a non-exception");
            }
        }
    }

private:
    void start_coroutine() {
        ws_->run_ = std::make_unique<WsRun>();
        net::AsyncScope::Enter enter(&ws_->run_->scope);
        // No captures: the frame owns what it runs on, and ends by itself.
        [](std::shared_ptr<WebSocket> ws) -> app::Detached {
            bool failed = false;
            try {
                co_await ws->route_->coroutine(*ws);
            } catch (const Cancelled&) {
            } catch (const std::exception& e) {
                util::log(util::LogLevel::Error, "WebSocket coroutine threw: %s", e.what());
                failed = true;
            } catch (...) {  // escaping the Detached frame would end the worker, every connection with it
                util::log(util::LogLevel::Error, "WebSocket coroutine threw a non-exception");
                failed = true;
            }
            if (failed) ws->close(1011, "internal error");
            else ws->close(1000);
        }(ws_);
    }

    std::shared_ptr<WebSocket> ws_;
};

namespace {

constexpr std::string_view kGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

// 16 bytes in base64: 22 characters of the alphabet and "==" (RFC 6455 §4.1).
bool valid_key(std::string_view key) {
    if (key.size() != 24 || key.substr(22) != "==") return false;
    for (size_t i = 0; i < 22; ++i) {
        char c = key[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/'))
            return false;
    }
    return true;
}

std::string host_of_origin(std::string_view origin) {
    size_t scheme = origin.find("://");
    if (scheme == std::string_view::npos) return {};
    std::string host(origin.substr(scheme + 3));
    for (char& c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return host;
}

bool origin_allowed(const Request& req, const WsOptions& opts) {
    auto origin = req.header("origin");
    if (!origin) return true;  // not a browser: nothing to protect its cookies from
    for (const std::string& allowed : opts.allowed_origins)
        if (allowed == "*" || http::iequals(allowed, *origin)) return true;
    std::string host(req.host());
    for (char& c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return !host.empty() && host_of_origin(*origin) == host;
}

// The first of the server's protocols the client offers.
std::string choose_protocol(const Request& req, const WsOptions& opts) {
    if (opts.protocols.empty()) return {};
    std::string offered;
    for (const Header& h : req.headers())
        if (http::iequals(h.name, "sec-websocket-protocol")) offered.append(h.value).append(",");
    for (const std::string& p : opts.protocols)
        if (http::list_has_token(offered, p)) return p;
    return {};
}

}  // namespace

std::string websocket_accept(std::string_view key) {
    std::string input(key);
    input.append(kGuid);
    unsigned char digest[SHA_DIGEST_LENGTH];
    SHA1(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
    unsigned char out[4 * ((SHA_DIGEST_LENGTH + 2) / 3) + 1];
    int n = EVP_EncodeBlock(out, digest, SHA_DIGEST_LENGTH);
    return std::string(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
}

struct WsHandshake {
    static void answer(Request& req, Response& res, const std::shared_ptr<const WsRoute>& route) {
        const WsOptions& opts = route->options;
        auto refuse = [&](int status, std::string_view why) {
            res.status(status);
            if (status == 426) {
                res.header("Upgrade", "websocket");
                res.header("Sec-WebSocket-Version", "13");
            }
            res.text(why);
        };
        // HTTP/1.1: a GET with Upgrade (RFC 6455), answered 101. HTTP/2: an extended
        // CONNECT with :protocol websocket (RFC 8441), answered 200, no key.
        bool h2 = req.version_major() == 2;
        // (A HEAD comes to the GET route: it would run the open callback for a
        // connection that never switches.)
        if (req.method() != Method::Get) return refuse(400, "Bad Request: a WebSocket opens with GET\n");
        if (h2 ? req.msg_->protocol() != "websocket"
               : req.version_major() != 1 || req.version_minor() < 1 ||
                     !http::list_has_token(req.header("upgrade").value_or(""), "websocket") ||
                     !http::list_has_token(req.header("connection").value_or(""), "upgrade"))
            return refuse(426, "Upgrade Required: this is a WebSocket endpoint\n");
        if (req.header("sec-websocket-version") != std::optional<std::string_view>("13"))
            return refuse(426, "Upgrade Required: WebSocket version 13\n");
        auto key = req.header("sec-websocket-key");
        if (!h2 && (!key || !valid_key(*key)))
            return refuse(400, "Bad Request: missing or malformed Sec-WebSocket-Key\n");
        if (!origin_allowed(req, opts)) return refuse(403, "Forbidden: cross-origin WebSocket\n");

        http::WsSettings settings;
        settings.max_message = opts.max_message;
        settings.ping_interval_ms = static_cast<uint32_t>(std::max<int64_t>(0, opts.ping_interval.count()));
        settings.max_backlog = opts.max_backlog;
        if (h2) {
            res.status(200);
        } else {
            res.status(101);
            res.header("Upgrade", "websocket");
            res.header("Sec-WebSocket-Accept", websocket_accept(*key));
        }
        if (opts.compression) {
            std::string offers;
            for (const Header& h : req.headers())
                if (http::iequals(h.name, "sec-websocket-extensions")) offers.append(h.value).append(",");
            if (auto answer = http::negotiate_deflate(offers)) {
                settings.deflate = answer->params;
                settings.deflate.level = opts.compression_level;
                res.header("Sec-WebSocket-Extensions", answer->header);
            }
        }

        auto ws = std::shared_ptr<WebSocket>(new WebSocket());
        ws->route_ = route.get();
        ws->protocol_ = choose_protocol(req, opts);
        if (!ws->protocol_.empty()) res.header("Sec-WebSocket-Protocol", ws->protocol_);
        for (const RouteParam& p : std::span(req.params_, req.param_count_)) ws->params_.emplace_back(p.name, p.value);
        ws->locals_ = std::move(req.locals_);
        auto up = std::make_unique<http::WsUpgrade>();
        up->settings = settings;
        auto bridge = std::make_unique<WsBridge>(ws);
        WsBridge& b = *bridge;
        up->endpoint = std::move(bridge);
        if (route->handlers.open) route->handlers.open(*ws, req);  // sends wait for the upgrade
        b.open_ran = true;
        res.msg_->upgrade(std::move(up));
    }
};

}  // namespace detail

WebSocket::~WebSocket() = default;

WebSocket::Sent WebSocket::send_message(bool binary, std::string_view data) {
    if (!session_) {
        if (opened_ || close_code_) return Sent::Dropped;
        early_.emplace_back(std::string(data), binary);  // in the open callback: after the 101
        return Sent::Ok;
    }
    switch (session_->send(binary ? http::ws::Opcode::Binary : http::ws::Opcode::Text, data)) {
        case http::WsSession::Send::Sent: return Sent::Ok;
        case http::WsSession::Send::Backlogged: return Sent::Backlogged;
        case http::WsSession::Send::Dropped: break;
    }
    return Sent::Dropped;
}

WebSocket::Sent WebSocket::send(std::string_view text) { return send_message(false, text); }
WebSocket::Sent WebSocket::send_binary(std::string_view data) { return send_message(true, data); }

void WebSocket::close(uint16_t code, std::string_view reason) {
    if (session_) session_->close(code, reason);
}

size_t WebSocket::buffered() const { return session_ ? session_->buffered() : 0; }

std::string_view WebSocket::param(std::string_view name) const {
    for (const auto& [n, v] : params_)
        if (n == name) return v;
    return {};
}

void WebSocket::closed(uint16_t code) {
    session_ = nullptr;
    close_code_ = code ? code : 1006;
    detail::WsTopics::leave_all(*this);
    if (detail::WsWait* w = std::exchange(receiver_, nullptr)) w->complete();  // receive(): nullopt
    if (detail::WsWait* w = std::exchange(drainer_, nullptr)) w->complete();
    if (run_) run_->scope.cancel();  // its other waits (sleep, a query) throw Cancelled
}

// receive()

WebSocket::Receive WebSocket::receive() { return Receive(*this); }
WebSocket::Receive::Receive(WebSocket& ws) : ws_(&ws) {}
WebSocket::Receive::Receive(Receive&&) noexcept = default;
WebSocket::Receive::~Receive() = default;

bool WebSocket::Receive::await_ready() const noexcept {
    return ws_->inbox_head_ < ws_->inbox_.size() || !ws_->session_;
}

bool WebSocket::Receive::await_suspend(std::coroutine_handle<> h) {
    if (ws_->receiver_) throw std::logic_error("WebSocket::receive: another receive() is already waiting");
    wait_ = std::make_unique<detail::WsWait>(h);
    if (wait_->cancelled()) return false;
    ws_->receiver_ = wait_.get();
    return true;
}

std::optional<WsMessage> WebSocket::Receive::await_resume() {
    bool cancelled = wait_ && wait_->cancelled();
    if (wait_ && ws_->receiver_ == wait_.get()) ws_->receiver_ = nullptr;
    wait_.reset();
    if (cancelled && ws_->inbox_head_ == ws_->inbox_.size() && ws_->session_) throw Cancelled();
    if (ws_->inbox_head_ == ws_->inbox_.size()) return std::nullopt;
    WsMessage m = std::move(ws_->inbox_[ws_->inbox_head_++]);
    ws_->inbox_bytes_ -= m.data.size();
    if (ws_->inbox_head_ == ws_->inbox_.size()) {
        ws_->inbox_.clear();
        ws_->inbox_head_ = 0;
    }
    return m;
}

// drained()

WebSocket::Drained WebSocket::drained() { return Drained(*this); }
WebSocket::Drained::Drained(WebSocket& ws) : ws_(&ws) {}
WebSocket::Drained::Drained(Drained&&) noexcept = default;
WebSocket::Drained::~Drained() = default;

bool WebSocket::Drained::await_ready() const noexcept {
    return !ws_->session_ || ws_->buffered() <= http::WsSettings{}.drain_mark;
}

bool WebSocket::Drained::await_suspend(std::coroutine_handle<> h) {
    wait_ = std::make_unique<detail::WsWait>(h);
    if (wait_->cancelled()) return false;
    ws_->drainer_ = wait_.get();
    return true;
}

void WebSocket::Drained::await_resume() {
    bool cancelled = wait_ && wait_->cancelled();
    if (wait_ && ws_->drainer_ == wait_.get()) ws_->drainer_ = nullptr;
    wait_.reset();
    if (cancelled && ws_->session_) throw Cancelled();
}

// Registration

App& App::ws(std::string_view pattern, WsHandlers handlers, WsOptions opts) {
    auto route = std::make_shared<detail::WsRoute>();
    route->handlers = std::move(handlers);
    route->options = std::move(opts);
    return add_ws(pattern, std::move(route));
}

App& App::ws(std::string_view pattern, WsCoroutine coroutine, WsOptions opts) {
    auto route = std::make_shared<detail::WsRoute>();
    route->coroutine = std::move(coroutine);
    route->options = std::move(opts);
    return add_ws(pattern, std::move(route));
}

App& App::add_ws(std::string_view pattern, std::shared_ptr<const detail::WsRoute> route) {
    // A coroutine route, so the handshake runs on the connection's loop thread in every
    // MPM (the WebSocket's callbacks and subscriptions are that loop's); it never waits.
    RouteOptions ro;
    ro.max_body = 0;
    ro.compress = false;
    return this->route(Method::Get, pattern, AsyncHandler([route](Request& req, Response& res) -> Task<> {
        detail::WsHandshake::answer(req, res, route);
        co_return;
    }), ro);
}

}  // namespace kiln
