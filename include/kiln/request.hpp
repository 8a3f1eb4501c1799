// kiln::Request: one HTTP request as a handler sees it. Views returned by its
// accessors point into the connection's buffers and are valid until the handler
// returns; copy what you keep. A Request belongs to the event-loop thread running
// the handler and is reused for the next request on that loop.
#pragma once
#include <any>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <kiln/form.hpp>
#include <kiln/http_types.hpp>
#include <kiln/locals.hpp>
#include <kiln/session.hpp>

namespace kiln {
namespace http {
class Request;
}  // namespace http
namespace app {
class Dispatcher;
}  // namespace app
class App;
class Next;

namespace detail {
struct WsHandshake;
}  // namespace detail

class Request {
public:
    Request();
    Method method() const { return method_; }
    std::string_view method_name() const;      // as sent, e.g. "GET" or "PROPFIND"
    std::string_view target() const;           // raw request-target as sent
    std::string_view path() const;             // percent-decoded, dot segments removed
    std::string_view query_string() const;     // raw, without '?'
    std::string_view host() const;             // Host header (or absolute-form authority)
    int version_major() const;                 // 1, or 2 for a request on an HTTP/2 stream
    int version_minor() const;                 // 0 for HTTP/1.0, 1 for HTTP/1.1 (0 for HTTP/2)
    bool keep_alive() const;

    // Decoded value of the first query parameter `name` ('+' means space).
    std::optional<std::string_view> query(std::string_view name) const;
    // All decoded query parameters, in order.
    const std::vector<std::pair<std::string, std::string>>& query_params() const;

    // Case-insensitive header lookup (first field with that name).
    std::optional<std::string_view> header(std::string_view name) const;
    std::span<const Header> headers() const;

    // Route parameter (":id" or "*rest" in the pattern), decoded; empty if absent.
    std::string_view param(std::string_view name) const;
    // The parameter as a T (an integer or floating-point type, std::string or
    // std::string_view). A value that does not convert whole ("abc", "12x", out of
    // range) throws HttpError(404): /users/abc names no user, and the handler stops.
    template <class T>
    T param(std::string_view name) const;
    // A query parameter as a T: nullopt if absent, or empty for a T other than a string
    // (a GET form's blank field sends "?min="); HttpError(400) if it does not convert.
    // A bool takes true/false, 1/0 and on/off (a ticked checkbox without a value: "on").
    template <class T>
    std::optional<T> query(std::string_view name) const;
    // A query parameter as a T, or `fallback` when absent or not convertible: for
    // values where nonsense means the default ("?page=x" shows the first page).
    template <class T>
    T query_or(std::string_view name, T fallback) const;

    std::string_view body() const;
    // The pattern of the route this request matched, as registered ("/posts/:id"), for
    // logs, metrics and middleware; empty when none matched (a 404 or a 405 to come).
    std::string_view route_pattern() const;

    // The fields and files of a form post (urlencoded or multipart; empty for other
    // bodies). Throws HttpError(400 or 413) for a malformed urlencoded body.
    const Form& form() const;
    // The body parsed as JSON. Throws HttpError(415) unless the Content-Type is
    // application/json (or +json), HttpError(400) for malformed or too deeply nested JSON.
    // More values than the route's max_json_values (RouteOptions): HttpError(413).
    const nlohmann::json& json() const;
    // The body as a T through its from_json (nlohmann's convention); a body that does
    // not fit T (a missing key, a string for a number) is HttpError(400) saying where.
    // Defined in <kiln/json.hpp>.
    template <class T>
    T json() const;

    // Value of the first cookie `name` in the Cookie header (not decoded).
    std::optional<std::string_view> cookie(std::string_view name) const;
    // A cookie set with Response::signed_cookie: its value if the signature checks
    // out with the app's secret and has not expired, nullopt if absent, unsigned,
    // tampered with or past the expiry it was signed with.
    std::optional<std::string_view> signed_cookie(std::string_view name) const;

    // This client's session, loaded on first use (see <kiln/session.hpp>). Throws
    // std::logic_error outside a handler run by an App.
    Session& session();
    // The session the request's cookie names, or nullptr: never starts one (for
    // reads such as a flash message, so a visitor without a session costs nothing).
    Session* existing_session();
    // True when the client connected over HTTPS: to us over TLS, or to a trusted
    // proxy (config `server.trusted_proxies`) that says so with X-Forwarded-Proto:
    // https, or to a balancer whose PROXY protocol v2 header says so.
    bool secure() const;
    // The client's IP address ("192.0.2.7", "2001:db8::1"; "" for a unix socket):
    // the connection's peer, the address a PROXY protocol header gave, or, from a
    // trusted proxy, the first address of Forwarded / X-Forwarded-For (walked from
    // the nearest hop) that is not itself a trusted proxy. What a client writes in
    // those fields itself never counts.
    std::string client_address() const;
    // The client as per-client limits count it: its IPv4 address ("192.0.2.7", also
    // for a dual-stack listener's ::ffff:192.0.2.7), or its IPv6 address's /64
    // ("2001:db8:1:2::/64"), since one host usually holds a whole /64. "" when unknown.
    // limits.rate, limits.max_connections_per_address and the log-in throttle count
    // clients this way; an app's own limits should too.
    std::string client_block() const;

    // Per-request values, one per type, from middleware to handler: a middleware
    // calls req.set_local(CurrentUser{...}), the handler req.local<CurrentUser>()
    // (nullptr if none was set). Gone when the request is.
    template <class T>
    void set_local(T value);
    template <class T>
    T* local();

private:
    friend class App;
    friend class Next;
    friend class app::Dispatcher;
    friend struct detail::WsHandshake;  // moves the locals to the WebSocket
    // A new request on `msg` (the engine's message): everything of the last one goes.
    void bind(const http::Request& msg);
    // The request is answered: what it holds goes now (an upload's temporary files),
    // not when the loop's next request comes.
    void release();
    void set_form(Form&& form);  // what the upload parser collected while the body arrived
    [[noreturn]] static void bad_param(std::string_view name, int status);  // HttpError(status)
    template <class T>
    static bool convert(std::string_view text, T& out);


    const http::Request* msg_;  // the engine's request (an empty one until bound)
    Method method_ = Method::Other;  // the message's, or what a form's _method says
    RouteParam params_[kMaxRouteParams];
    size_t param_count_ = 0;
    const void* route_ = nullptr;  // the matched route (App-private type)
    const std::string* secret_ = nullptr;        // set by App::handle
    Session::Binding* session_binding_ = nullptr;  // set by App::handle
    Session session_;
    uint32_t allowed_methods_ = 0;  // bit per Method: for 405 and OPTIONS
    bool handler_failed_ = false;     // it threw: its session changes are not saved
    mutable std::optional<Form> form_;
    mutable std::shared_ptr<nlohmann::json> json_;
    mutable bool query_parsed_ = false;
    mutable std::vector<std::pair<std::string, std::string>> query_;
    detail::Locals locals_;
};

template <class T>
bool Request::convert(std::string_view text, T& out) {
    if constexpr (std::is_same_v<T, std::string_view>) {
        out = text;
        return true;
    } else if constexpr (std::is_same_v<T, std::string>) {
        out.assign(text);
        return true;
    } else if constexpr (std::is_same_v<T, bool>) {
        if (text == "true" || text == "1" || text == "on") out = true;
        else if (text == "false" || text == "0" || text == "off") out = false;
        else return false;
        return true;
    } else {
        static_assert(std::is_arithmetic_v<T>, "Request::param<T>/query<T>: T must be a number, std::string or std::string_view");
        if (text.empty()) return false;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
        if (ec != std::errc() || end != text.data() + text.size()) return false;
        if constexpr (std::is_floating_point_v<T>) return std::isfinite(out);  // "nan" passes every range check
        return true;
    }
}

template <class T>
T Request::param(std::string_view name) const {
    T out{};
    if (!convert(param(name), out)) bad_param(name, 404);
    return out;
}

template <class T>
std::optional<T> Request::query(std::string_view name) const {
    auto raw = query(name);
    constexpr bool text = std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view>;
    if (!raw || (!text && raw->empty())) return std::nullopt;
    T out{};
    if (!convert(*raw, out)) bad_param(name, 400);
    return out;
}

template <class T>
T Request::query_or(std::string_view name, T fallback) const {
    auto raw = query(name);
    T out{};
    return raw && convert(*raw, out) ? out : fallback;
}

template <class T>
void Request::set_local(T value) {
    locals_.set(std::move(value));
}

template <class T>
T* Request::local() {
    return locals_.get<T>();
}

}  // namespace kiln
