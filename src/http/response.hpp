// http::Response: the engine's response message. Either a whole body (send) or a
// file (sendfile), serialized with Content-Length once the handler returns, or a
// stream: the first write() sends the head with chunked coding through the
// ResponseStream (the connection), each write() a chunk, end() the last one.
// Header names and values are checked: CR, LF or NUL throws std::invalid_argument
// (no header injection), Content-Length and Transfer-Encoding are the server's.
// Belongs to the thread running the handler; reused between requests (capacity kept).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/compress.hpp"

namespace kiln::http {

// Where a response's headers stood (Response::mark()).
struct HeaderMark {
    size_t count = 0;  // headers
    size_t undo = 0;   // changes recorded since the last clear()
};

class Response;
struct WsUpgrade;

// Implemented by the connection; receives a streamed response.
class ResponseStream {
public:
    virtual void begin(Response& res) = 0;         // send the head
    virtual void chunk(std::string_view data) = 0;  // send part of the body
    virtual void finish() = 0;                      // end of body
    // Bytes written but not yet taken by the socket (a slow reader's backlog).
    virtual size_t buffered() const { return 0; }
protected:
    ~ResponseStream() = default;
};

class Response {
public:
    Response();
    Response(const Response&) = delete;
    Response& operator=(const Response&) = delete;
    ~Response();

    void status(int code);  // 100..999, else std::invalid_argument
    int status() const { return status_; }
    // Sets a header, replacing any of the same name (Set-Cookie is appended instead).
    void header(std::string_view name, std::string_view value);
    void add_header(std::string_view name, std::string_view value);  // even if one of that name exists
    std::optional<std::string_view> header(std::string_view name) const;
    const std::vector<std::pair<std::string, std::string>>& headers() const { return headers_; }
    // Drops every Set-Cookie for `name` (a later cookie of that name replaces it).
    void remove_cookie(std::string_view name);

    void send(std::string_view body, std::string_view content_type);
    // The engine's own refusal (HTTP/1.1 and HTTP/2 alike): `status`, "Reason: why\n"
    // as plain text (X-Content-Type-Options: nosniff), and Retry-After when
    // retry_after_s > 0.
    void engine_error(int status, std::string_view why, uint32_t retry_after_s = 0);
    // `length` bytes of `fd` from `offset`: the response owns fd from here on.
    void file(int fd, uint64_t offset, uint64_t length, std::string_view content_type);
    bool has_file() const { return file_fd_ >= 0; }
    uint64_t file_offset() const { return file_offset_; }
    uint64_t file_length() const { return file_length_; }
    int release_file();  // the fd to the caller (the connection), which closes it
    void drop_file();

    void write(std::string_view chunk);
    void end();
    bool streaming() const { return streaming_; }
    // Bound to a connection's stream (a streamed write leaves as it is made).
    bool has_stream() const { return stream_ != nullptr; }
    // What the stream holds that the client has not read yet.
    size_t buffered() const { return stream_ ? stream_->buffered() : 0; }
    // A streamed body coded on its way (the caller sets Content-Encoding): each
    // write() is coded and flushed, end() adds the coding's trailer. Before the first write.
    void encode_stream(std::unique_ptr<StreamEncoder> encoder);

    std::string_view content_type() const { return content_type_; }
    std::string& body() { return body_; }
    const std::string& body() const { return body_; }
    void close_connection() { close_ = true; }
    bool closes_connection() const { return close_; }

    // A 101 that turns the connection into a WebSocket once written (HTTP/1.1 only;
    // see ws_session.hpp). Cleared with the rest of the response.
    void upgrade(std::unique_ptr<WsUpgrade> up);
    bool upgrading() const { return upgrade_ != nullptr; }
    std::unique_ptr<WsUpgrade> take_upgrade();

    // Status, headers and body back to nothing (not a started stream), capacity kept.
    void clear();
    // clear() as a handler asks for it: the headers' removals are recorded, so an error
    // page's clear_keeping(mark) brings back those set before the mark.
    void discard();
    // clear(), but the first `headers` headers and close_connection() stay.
    void clear_keeping(size_t headers);
    // clear(), but the headers as they were at mark(): those set since go, and those
    // replaced or removed since (a handler's cookie over a middleware's) come back.
    HeaderMark mark() const { return {headers_.size(), undo_.size()}; }
    void clear_keeping(HeaderMark m);
    // Binds to a connection (nullptr: buffer only, as a pool thread does) and clears.
    void reset(ResponseStream* stream);
    // A started stream is abandoned: the connection closes without finishing it, so
    // the client sees a truncated body rather than a false end.
    void abort() { aborted_ = true; }
    bool aborted() const { return aborted_; }
    // The stream is gone (its connection or HTTP/2 stream closed while the handler
    // runs): writes from here on are kept in the body, which nobody sends.
    void unbind() { stream_ = nullptr; }

private:
    // How to take back a change made to headers_ other than an append: a header
    // replaced in place (its old value) or removed (itself, and where it was).
    struct Undo {
        size_t index;
        bool removed;
        std::pair<std::string, std::string> header;
    };
    std::vector<Undo> undo_;  // since the last clear()
    void reset_message();     // status, type, body, file and upgrade
    int status_ = 200;
    bool close_ = false;
    bool streaming_ = false;
    bool ended_ = false;
    bool aborted_ = false;
    void check_head_open() const;  // throws std::logic_error once streaming
    std::string content_type_;
    std::string body_;
    std::vector<std::pair<std::string, std::string>> headers_;
    ResponseStream* stream_ = nullptr;
    std::unique_ptr<StreamEncoder> encoder_;
    std::unique_ptr<WsUpgrade> upgrade_;
    std::string coded_;  // one write, coded
    int file_fd_ = -1;
    uint64_t file_offset_ = 0;
    uint64_t file_length_ = 0;
};

}  // namespace kiln::http
