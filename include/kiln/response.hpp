// kiln::Response: what a handler fills in. Either a whole body (text/html/json/send),
// serialized with Content-Length after the handler returns, or a stream: the first
// write() sends the head with chunked coding, each write() sends a chunk, and the
// stream ends when the handler returns (or at end()). Header names and values are
// checked: CR, LF or NUL in either throws std::invalid_argument (no header injection).
// Belongs to the event-loop thread running the handler; reused between requests.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <kiln/cookie.hpp>

namespace kiln {

class Response;

// Implemented by the connection; receives a streamed response.
class ResponseStream {
public:
    virtual void begin(Response& res) = 0;         // send the head
    virtual void chunk(std::string_view data) = 0;  // send part of the body
    virtual void finish() = 0;                      // end of body
protected:
    ~ResponseStream() = default;
};

class Response {
public:
    Response() = default;
    Response(const Response&) = delete;
    Response& operator=(const Response&) = delete;
    ~Response();

    Response& status(int code);
    int status() const { return status_; }

    // Sets a header, replacing any of the same name (Set-Cookie is appended instead).
    Response& header(std::string_view name, std::string_view value);
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

    // Appends a header even if one of that name exists.
    Response& add_header(std::string_view name, std::string_view value);
    std::optional<std::string_view> header(std::string_view name) const;
    const std::vector<std::pair<std::string, std::string>>& headers() const { return headers_; }

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
    bool has_file() const { return file_fd_ >= 0; }
    int file_fd() const { return file_fd_; }
    uint64_t file_offset() const { return file_offset_; }
    uint64_t file_length() const { return file_length_; }
    // Framework use: hands the fd to the caller (the connection), which closes it.
    int release_file() { int fd = file_fd_; file_fd_ = -1; return fd; }

    // Streaming: sends the head (status and headers as set so far) on first call.
    void write(std::string_view chunk);
    void end();
    bool streaming() const { return streaming_; }

    std::string_view content_type() const { return content_type_; }
    const std::string& body() const { return body_; }
    std::string& body() { return body_; }

    // Close the connection after this response.
    void close_connection() { close_ = true; }
    bool closes_connection() const { return close_; }

    // Discards status, headers and body (not a started stream), keeping capacity.
    void clear();
    // Framework use: binds the response to a connection (nullptr: buffer only) and clears it.
    void reset(ResponseStream* stream);
    // Framework use: abandons a started stream; the connection closes without
    // finishing it, so the client sees a truncated body rather than a false end.
    void abort() { aborted_ = true; }
    bool aborted() const { return aborted_; }

private:
    friend class App;
    void drop_file();
    // clear(), but the first `headers` headers stay (what middleware set before the
    // handler that failed) and so does close_connection().
    void clear_keeping(size_t headers);
    const std::string* secret_ = nullptr;  // set by App::handle, for signed cookies
    int status_ = 200;
    bool close_ = false;
    bool streaming_ = false;
    bool ended_ = false;
    bool aborted_ = false;
    std::string content_type_;
    std::string body_;
    std::vector<std::pair<std::string, std::string>> headers_;
    ResponseStream* stream_ = nullptr;
    int file_fd_ = -1;
    uint64_t file_offset_ = 0;
    uint64_t file_length_ = 0;
};

// Reason phrase for a status code ("Not Found"); "Unknown" if not registered.
std::string_view reason_phrase(int status);

}  // namespace kiln
