#include <kiln/response.hpp>

#include <unistd.h>

#include <stdexcept>
#include <string>

#include "http/chars.hpp"
#include "http/parser.hpp"

namespace kiln {
namespace {
void check_header(std::string_view name, std::string_view value) {
    if (name.empty()) throw std::invalid_argument("empty header name");
    for (char c : name)
        if (!http::chars::is_token(static_cast<uint8_t>(c)))
            throw std::invalid_argument("invalid character in header name '" + std::string(name) + "'");
    for (char c : value)
        if (c == '\r' || c == '\n' || c == '\0')
            throw std::invalid_argument("CR, LF or NUL in the value of header '" + std::string(name) + "'");
    if (http::iequals(name, "content-length") || http::iequals(name, "transfer-encoding"))
        throw std::invalid_argument("header '" + std::string(name) + "' is set by the server from the body");
}
}  // namespace

Response& Response::status(int code) {
    if (code < 100 || code > 999) throw std::invalid_argument("status code out of range: " + std::to_string(code));
    status_ = code;
    return *this;
}

Response& Response::add_header(std::string_view name, std::string_view value) {
    check_header(name, value);
    if (http::iequals(name, "connection")) {
        if (http::iequals(value, "close")) close_ = true;
        return *this;  // connection management is the server's
    }
    if (http::iequals(name, "content-type")) {
        content_type_.assign(value);
        return *this;
    }
    headers_.emplace_back(std::string(name), std::string(value));
    return *this;
}

Response& Response::header(std::string_view name, std::string_view value) {
    if (!http::iequals(name, "set-cookie")) {
        for (auto& [n, v] : headers_) {
            if (http::iequals(n, name)) {
                check_header(name, value);
                v.assign(value);
                return *this;
            }
        }
    }
    return add_header(name, value);
}

std::optional<std::string_view> Response::header(std::string_view name) const {
    if (http::iequals(name, "content-type") && !content_type_.empty()) return std::string_view(content_type_);
    for (const auto& [n, v] : headers_)
        if (http::iequals(n, name)) return std::string_view(v);
    return std::nullopt;
}

Response::~Response() { drop_file(); }

void Response::drop_file() {
    if (file_fd_ >= 0) ::close(file_fd_);
    file_fd_ = -1;
    file_offset_ = file_length_ = 0;
}

void Response::send(std::string_view body, std::string_view content_type) {
    check_header("Content-Type", content_type);  // the one check every header value passes
    drop_file();
    content_type_.assign(content_type);
    body_.assign(body);
}

void Response::file(int fd, uint64_t offset, uint64_t length, std::string_view content_type) {
    if (fd < 0) throw std::invalid_argument("Response::file: invalid file descriptor");
    if (streaming_) {
        ::close(fd);
        throw std::logic_error("Response::file after a streamed write");
    }
    try {
        check_header("Content-Type", content_type);
    } catch (...) {
        ::close(fd);  // ours from the call on, as it would have been once queued
        throw;
    }
    drop_file();
    body_.clear();
    content_type_.assign(content_type);
    file_fd_ = fd;
    file_offset_ = offset;
    file_length_ = length;
}

void Response::text(std::string_view body) { send(body, "text/plain; charset=utf-8"); }
void Response::html(std::string_view body) { send(body, "text/html; charset=utf-8"); }
void Response::json(std::string_view body) { send(body, "application/json"); }

void Response::redirect(std::string_view location, int code) {
    status(code);
    header("Location", location);
    drop_file();
    body_.clear();
}

void Response::write(std::string_view chunk) {
    drop_file();
    if (!stream_) {  // not attached to a connection (tests): just accumulate
        streaming_ = true;
        body_.append(chunk);
        return;
    }
    if (ended_) throw std::logic_error("Response::write after end()");
    if (!streaming_) {
        streaming_ = true;
        stream_->begin(*this);
    }
    stream_->chunk(chunk);
}

void Response::end() {
    if (!streaming_ || ended_) return;
    ended_ = true;
    if (stream_) stream_->finish();
}

void Response::clear() {
    close_ = false;
    clear_keeping(0);
}

void Response::clear_keeping(size_t headers) {
    status_ = 200;
    content_type_.clear();
    body_.clear();
    if (headers < headers_.size()) headers_.resize(headers);
    drop_file();
}

void Response::reset(ResponseStream* stream) {
    clear();
    streaming_ = ended_ = aborted_ = false;
    stream_ = stream;
}

}  // namespace kiln
