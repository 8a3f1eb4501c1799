// kiln::Response: what a handler fills in. Either a whole body (text/html/json/send),
// sent with Content-Length after the handler returns, or a stream: the first
// write() sends the head with chunked coding, each write() sends a chunk, and the
// stream ends when the handler returns (or at end()). Header names and values are
// checked: CR, LF or NUL in either throws std::invalid_argument (no header injection).
// A handle on the engine's response for this request (http::Response): belongs to
// the thread running the handler and is valid until the handler returns. A
// default-constructed Response owns a message of its own (tests, rendering).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <kiln/cookie.hpp>
#include <kiln/http_types.hpp>

namespace kiln {
namespace http {
class Response;
struct HeaderMark;
}
namespace app {
class Dispatcher;
struct Context;
struct CompressionPolicy;
class HeadHook;
}
class Request;
class EventStream;
namespace detail {
struct WsHandshake;
}

class Response {
public:
    Response();
    Response(const Response&) = delete;
    Response& operator=(const Response&) = delete;
    ~Response();

    Response& status(int code);
    int status() const;
    // Sets a header, replacing any of the same name (Set-Cookie is appended instead).
    Response& header(std::string_view name, std::string_view value);
    // Appends a header even if one of that name exists.
    Response& add_header(std::string_view name, std::string_view value);
    std::optional<std::string_view> header(std::string_view name) const;
    const std::vector<std::pair<std::string, std::string>>& headers() const;

    // Sets a cookie, replacing one of the same name set earlier on this response.
    // Throws std::invalid_argument for a name that is not a token, a value outside
    // cookie-octets, or a bad attribute (the message says which).
    Response& cookie(std::string_view name, std::string_view value, const CookieOptions& opts = {});
    // Asks the client to delete the cookie (give the path and domain it was set with).
    Response& clear_cookie(std::string_view name, const CookieOptions& opts = {});
    // A cookie the client can read but not forge: value "." expiry "." HMAC-SHA256
    // (secret, name "=" value "." expiry) in base64url. The expiry is the cookie's
    // own (max_age or expires; else 400 days) and is enforced by the server too, so
    // a copy kept past it is refused. Read it back with Request::signed_cookie.
    Response& signed_cookie(std::string_view name, std::string_view value, const CookieOptions& opts = {});

    void text(std::string_view body);  // text/plain; charset=utf-8
    void html(std::string_view body);  // text/html; charset=utf-8
    void json(std::string_view body);  // application/json; body is already JSON
    // application/json from any value nlohmann::json converts (to_json); defined in
    // <kiln/json.hpp>.
    template <class T>
        requires(!std::is_convertible_v<const T&, std::string_view>)
    void json(const T& value);
    void send(std::string_view body, std::string_view content_type);
    void redirect(std::string_view location, int code = 302);

    // A file as the body: `length` bytes of the open file `fd` from `offset`, sent
    // with sendfile(2) and Content-Length. The response owns `fd` from here on and
    // closes it (also when it is replaced or never sent).
    void file(int fd, uint64_t offset, uint64_t length, std::string_view content_type);
    bool has_file() const;

    // Server-sent events (<kiln/event_stream.hpp>): 200, Content-Type
    // text/event-stream, Cache-Control no-cache, X-Accel-Buffering no (nginx passes it
    // on at once), and the head is sent now.
    EventStream event_stream();
    // Streaming: sends the head (status and headers as set so far) on first call.
    void write(std::string_view chunk);
    void end();
    bool streaming() const;

    std::string_view content_type() const;
    const std::string& body() const;
    std::string& body();
    // Close the connection after this response.
    void close_connection();
    bool closes_connection() const;
    // Discards status, headers and body (not a started stream), keeping capacity.
    void clear();

private:
    friend class App;
    friend class Next;  // the handler's point in the chain: what an error page keeps
    friend class EventStream;
    friend struct detail::WsHandshake;  // attaches the upgrade to the message
    friend class app::Dispatcher;
    friend struct app::Context;
    friend class app::HeadHook;
    struct Unowned {};
    explicit Response(Unowned);  // bound to the engine's message per request
    void bind(http::Response& msg) {
        msg_ = &msg;
        head_hook_ = nullptr;
        head_hook_ran_ = false;
    }

    http::Response* msg_;
    std::unique_ptr<http::Response> owned_;  // a Response made outside a request
    const std::string* secret_ = nullptr;    // set by App::handle, for signed cookies
    // Set by the dispatcher for a request whose streamed answer may be compressed.
    const app::CompressionPolicy* compression_ = nullptr;
    const Request* compression_request_ = nullptr;  // its Accept-Encoding, read only if coding
    // Runs before the head leaves (app::HeadHook: the security headers), with its request.
    const app::HeadHook* head_hook_ = nullptr;
    Request* head_request_ = nullptr;
    bool head_hook_ran_ = false;  // for the head being made (clear() starts another)
};

}  // namespace kiln
