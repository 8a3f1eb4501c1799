// kiln::Request: one HTTP request as a handler sees it. Views returned by its
// accessors point into the connection's buffers and are valid until the handler
// returns; copy what you keep. A Request belongs to the event-loop thread running
// the handler and is reused for the next request on that loop.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <kiln/form.hpp>
#include <kiln/http_types.hpp>
#include <kiln/session.hpp>

namespace kiln {
namespace http {
struct RequestHead;
class Connection;
}  // namespace http
class App;
class Next;

class Request {
public:
    Method method() const { return method_; }
    std::string_view method_name() const;      // as sent, e.g. "GET" or "PROPFIND"
    std::string_view target() const;           // raw request-target as sent
    std::string_view path() const { return path_; }  // percent-decoded, dot segments removed
    std::string_view query_string() const;     // raw, without '?'
    std::string_view host() const;             // Host header (or absolute-form authority)
    int version_minor() const;                 // 0 for HTTP/1.0, 1 for HTTP/1.1
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

    std::string_view body() const { return body_; }

    // The fields and files of a form post (urlencoded or multipart; empty for other
    // bodies). Throws HttpError(400 or 413) for a malformed urlencoded body.
    const Form& form() const;
    // The body parsed as JSON. Throws HttpError(415) unless the Content-Type is
    // application/json (or +json), HttpError(400) for malformed or too deeply nested JSON.
    const nlohmann::json& json() const;

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
    // proxy (config `proxy.trusted`) that says so with X-Forwarded-Proto: https.
    bool secure() const;

    // Framework use: the form an upload parser collected while the body arrived.
    void set_form(Form&& form);

private:
    friend class http::Connection;
    friend class App;
    friend class Next;
    void reset();


    const http::RequestHead* head_ = nullptr;
    Method method_ = Method::Other;
    std::string_view path_;
    std::string_view body_;
    std::string path_storage_;  // used only when decoding changed the path
    RouteParam params_[kMaxRouteParams];
    size_t param_count_ = 0;
    const void* route_ = nullptr;  // the matched route (App-private type)
    const std::string* secret_ = nullptr;        // set by App::handle
    Session::Binding* session_binding_ = nullptr;  // set by App::handle
    Session session_;
    uint32_t allowed_methods_ = 0;  // bit per Method: for 405 and OPTIONS
    bool via_trusted_proxy_ = false;  // set by the connection
    mutable std::optional<Form> form_;
    mutable std::shared_ptr<nlohmann::json> json_;
    mutable bool query_parsed_ = false;
    mutable std::vector<std::pair<std::string, std::string>> query_;
};

}  // namespace kiln
