// kiln::testing::Client: requests through app::Dispatcher, the server's own path,
// with the connection's part (parsing the head, the body limit, a body sink)
// done here in a few lines instead of over a socket.
#include <kiln/testing.hpp>

#include <sys/socket.h>

#include <sys/mman.h>

#include <algorithm>
#include <ctime>
#include <optional>
#include <stdexcept>

#include "app/app_impl.hpp"
#include "app/dispatcher.hpp"
#include "app/session_table.hpp"
#include "http/chars.hpp"
#include "http/http_date.hpp"
#include "http/parser.hpp"
#include "http/request.hpp"
#include "http/response.hpp"
#include "http/serializer.hpp"
#include "net/file_io.hpp"
#include "net/loop.hpp"
#include "util/random.hpp"

namespace kiln::testing {
namespace {

// The app's own store if it has one; else a small table in private memory.
struct PrivateStore {
    static constexpr app::SessionTableParams kParams{1 << 20, 4096, 30 * 60, 24 * 60 * 60};
    void* region = MAP_FAILED;
    std::unique_ptr<app::SharedSessionTable> table;

    PrivateStore() {
        region = mmap(nullptr, kParams.memory_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (region == MAP_FAILED) throw std::runtime_error("testing::Client: no memory for a session store");
        app::SharedSessionTable::format(region, kParams);
        table = app::SharedSessionTable::attach(region, kParams.memory_bytes);
    }
    ~PrivateStore() {
        table.reset();
        if (region != MAP_FAILED) munmap(region, kParams.memory_bytes);
    }
};

// Whether a Set-Cookie's attributes (after its name=value) tell the client to forget
// the cookie, read as RFC 6265 5.2 does: a Max-Age of 0 or less, else an Expires
// already past. Another attribute's value saying "1970" or "max-age=0" is not one.
bool deletes(std::string_view attributes) {
    std::optional<bool> by_max_age;
    bool expired = false;
    while (!attributes.empty()) {
        size_t semi = attributes.find(';');
        std::string_view av = attributes.substr(0, semi);
        attributes = semi == std::string_view::npos ? std::string_view() : attributes.substr(semi + 1);
        size_t eq = av.find('=');
        std::string_view name = http::chars::trim_ows(av.substr(0, eq));
        std::string_view value = eq == std::string_view::npos ? std::string_view() : http::chars::trim_ows(av.substr(eq + 1));
        if (http::iequals(name, "max-age")) {
            std::string_view digits = value.starts_with('-') ? value.substr(1) : value;
            if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos)
                by_max_age = value.starts_with('-') || digits.find_first_not_of('0') == std::string_view::npos;
        } else if (http::iequals(name, "expires")) {
            std::optional<time_t> t = http::parse_http_date(value);
            if (!t) {  // the old Netscape form, "Thu, 01-Jan-1970 00:00:00 GMT", which clients still read
                std::string spaced(value);
                std::replace(spaced.begin(), spaced.end(), '-', ' ');
                t = http::parse_http_date(spaced);
            }
            expired = t && *t <= std::time(nullptr);
        }
    }
    return by_max_age.value_or(expired);  // Max-Age wins over Expires
}

std::string error_body(int status, std::string_view why) {
    return std::string(reason_phrase(status)) + ": " + std::string(why) + "\n";
}

}  // namespace

std::optional<std::string_view> Result::header(std::string_view name) const {
    for (const auto& [n, v] : headers)
        if (http::iequals(n, name)) return std::string_view(v);
    return std::nullopt;
}

struct Client::Impl {
    // A coroutine handler gets 30 s (timeouts.handler_ms), so a test that waits forever fails with 504.
    explicit Impl(App& a) : app(a), dispatcher(a, uint64_t{1} << 30, 30'000) {}
    App& app;
    app::Dispatcher dispatcher;
    std::unique_ptr<PrivateStore> store;
    std::vector<std::pair<std::string, std::string>> cookies;
    bool https = false;  // requests come as from a trusted proxy that says https
    std::unique_ptr<net::Loop> loop;  // for coroutine handlers: made on first use
    std::unique_ptr<http::RequestContext> context;

    // A coroutine handler runs on an event loop of the client's own, started inside
    // it (so its waits find the loop) and run until the handler is done.
    void run_waiting(http::RequestContext& ctx, const http::Request& req, http::Response& res) {
        if (!loop) loop = std::make_unique<net::Loop>();
        struct Run {
            Impl* self;
            http::RequestContext* ctx;
            const http::Request* req;
            http::Response* res;
        } run{this, &ctx, &req, &res};
        loop->defer([](void* p) {
            auto* r = static_cast<Run*>(p);
            r->self->dispatcher.start(*r->ctx, *r->req, *r->res, {[](void* l) { static_cast<net::Loop*>(l)->stop(); },
                                                                  r->self->loop.get()});
        }, &run);
        loop->run();
        loop = std::make_unique<net::Loop>();  // stop() is for good: the next request gets a fresh loop
    }

    void keep_cookies(const http::Response& res) {
        for (const auto& [name, value] : res.headers()) {
            if (!http::iequals(name, "set-cookie")) continue;
            size_t eq = value.find('='), semi = value.find(';');
            if (eq == std::string::npos || (semi != std::string::npos && semi < eq)) continue;
            std::string n = value.substr(0, eq);
            std::string v = value.substr(eq + 1, semi == std::string::npos ? std::string::npos : semi - eq - 1);
            std::erase_if(cookies, [&](const auto& c) { return c.first == n; });
            if (!deletes(semi == std::string::npos ? std::string_view() : std::string_view(value).substr(semi)))
                cookies.emplace_back(n, v);
        }
    }
};

Client::Client(App& app) : impl_(std::make_unique<Impl>(app)) {
    App::Impl& a = *app.impl_;
    if (!a.store) {
        impl_->store = std::make_unique<PrivateStore>();
        a.store = impl_->store->table.get();
    }
    if (a.secret.empty()) a.secret = util::random_hex(32);
}

Client::~Client() {
    if (impl_->store && impl_->app.impl_->store == impl_->store->table.get()) impl_->app.impl_->store = nullptr;
}

Result Client::get(std::string_view target, const Headers& headers) { return request("GET", target, {}, headers); }

Result Client::post(std::string_view target, std::string_view body, const Headers& headers) {
    return request("POST", target, body, headers);
}

Result Client::request(std::string_view method, std::string_view target, std::string_view body, const Headers& headers) {
    std::string raw;
    raw.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: kiln.test\r\n");
    bool has_length = false;
    for (const auto& [n, v] : headers) {
        raw.append(n).append(": ").append(v).append("\r\n");
        has_length = has_length || http::iequals(n, "content-length") || http::iequals(n, "transfer-encoding");
    }
    if (!impl_->cookies.empty()) {
        raw.append("Cookie: ");
        for (size_t i = 0; i < impl_->cookies.size(); ++i)
            raw.append(i ? "; " : "").append(impl_->cookies[i].first).append("=").append(impl_->cookies[i].second);
        raw.append("\r\n");
    }
    if (impl_->https) raw.append("X-Forwarded-Proto: https\r\n");
    if (!body.empty() && !has_length) raw.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
    raw.append("\r\n");

    Result out;
    auto head = std::make_unique<http::RequestHead>();
    http::ParseResult parsed = http::parse_request_head(raw, *head);
    if (parsed.status != http::ParseStatus::Complete) {
        out.status = parsed.status == http::ParseStatus::Error ? http::status_for(parsed.error) : 400;
        out.body = error_body(out.status, parsed.status == http::ParseStatus::Error ? http::describe(parsed.error) : "incomplete head");
        return out;
    }
    http::Request req;
    net::PeerAddress loopback;  // the test client is 127.0.0.1, behind a trusted proxy when https
    loopback.family = AF_INET;
    loopback.addr[0] = 127;
    loopback.addr[3] = 1;
    req.start(head.get(), impl_->https, false, loopback);
    if (req.set_path(head->path) != http::PathStatus::Ok) {
        out.status = 400;
        out.body = error_body(400, "bad path");
        return out;
    }
    // One context for every request, as a server loop reuses its own: what one
    // request leaves in it, the next one meets.
    if (!impl_->context) impl_->context = impl_->dispatcher.new_context();
    http::RequestContext* ctx = impl_->context.get();
    size_t limit = impl_->dispatcher.prepare(*ctx, req);
    if (body.size() > limit) {
        out.status = 413;
        out.body = error_body(413, "request body larger than this route accepts");
        return out;
    }
    if (auto sink = impl_->dispatcher.body_sink(*ctx, req)) {
        if (!sink->write(body) || !sink->finish()) {
            out.status = sink->status();
            out.body = error_body(out.status, sink->reason());
            if (uint32_t s = sink->retry_after()) out.headers.emplace_back("Retry-After", std::to_string(s));
            return out;
        }
        sink->deliver(*ctx);
    } else {
        req.set_body(body);
    }
    http::Response res;
    res.reset(nullptr);
    if (impl_->dispatcher.waits(*ctx)) impl_->run_waiting(*ctx, req, res);
    else impl_->dispatcher.handle(*ctx, req, res);
    impl_->keep_cookies(res);

    // A handler that failed after its response began: a client of the server sees it cut
    // short (or a 500 in the hybrid pool). Reported as 500, so a test cannot take it for
    // a success.
    out.status = res.aborted() ? 500 : res.status();
    if (!res.content_type().empty()) out.headers.emplace_back("Content-Type", std::string(res.content_type()));
    for (const auto& h : res.headers()) out.headers.push_back(h);
    if (res.has_file()) {
        uint64_t off = res.file_offset(), len = res.file_length();
        net::UniqueFd fd(res.release_file());
        out.body.resize(len);
        long got = net::read_full(fd.get(), off, out.body.data(), len);
        out.body.resize(got > 0 ? static_cast<size_t>(got) : 0);
    } else {
        out.body = std::move(res.body());
    }
    if (method == "HEAD" || http::status_has_no_body(out.status)) out.body.clear();  // as on the wire
    return out;
}

std::optional<std::string> Client::cookie(std::string_view name) const {
    for (const auto& [n, v] : impl_->cookies)
        if (n == name) return v;
    return std::nullopt;
}

void Client::clear_cookies() { impl_->cookies.clear(); }

void Client::https(bool on) { impl_->https = on; }

}  // namespace kiln::testing
