// kiln::Request: one HTTP request as a handler sees it. Views returned by its
// accessors point into the connection's buffers and are valid until the handler
// returns; copy what you keep. A Request belongs to the event-loop thread running
// the handler and is reused for the next request on that loop.
#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <kiln/http_types.hpp>

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
    uint32_t allowed_methods_ = 0;  // bit per Method: for 405 and OPTIONS
    mutable bool query_parsed_ = false;
    mutable std::vector<std::pair<std::string, std::string>> query_;
};

}  // namespace kiln
