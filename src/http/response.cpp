#include "http/response.hpp"

#include <unistd.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "http/chars.hpp"
#include "http/compress.hpp"
#include "http/parser.hpp"
#include "http/ws_session.hpp"

namespace kiln::http {
namespace {
void check_header(std::string_view name, std::string_view value) {
    if (name.empty()) throw std::invalid_argument("empty header name");
    for (char c : name)
        if (!chars::is_token(static_cast<uint8_t>(c)))
            throw std::invalid_argument("invalid character in header name '" + std::string(name) + "'");
    // Field content is visible characters, spaces and tabs (RFC 9110 5.5): CR and LF
    // would split the response, and the other controls make HTTP/2 clients reset the
    // stream (a malformed field), where HTTP/1.1 browsers take them.
    for (char c : value)
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f)
            throw std::invalid_argument("a control character in the value of header '" + std::string(name) + "'");
    if (iequals(name, "content-length") || iequals(name, "transfer-encoding"))
        throw std::invalid_argument("header '" + std::string(name) + "' is set by the server from the body");
}
}  // namespace

void Response::check_head_open() const {
    // The head goes out with the first write(): what is set after it would be dropped
    // by a live stream and sent by a buffered one (the hybrid pool, the test client).
    // Refused in every mode, so the mistake shows in tests.
    if (streaming_)
        throw std::logic_error("the response head went out with the first write(): set the status, headers and "
                               "cookies (the session's too) before it");
}

void Response::status(int code) {
    check_head_open();
    // A final status (200 to 599), or 101 for an upgrade: any other 1xx is an interim
    // answer to a client, which would take the next response as this one's.
    if (code != 101 && (code < 200 || code > 599))
        throw std::invalid_argument("status code " + std::to_string(code) + " is not a final status (200 to 599)");
    status_ = code;
}

void Response::add_header(std::string_view name, std::string_view value) {
    check_head_open();
    check_header(name, value);
    if (iequals(name, "connection")) {
        if (iequals(value, "close")) close_ = true;
        return;  // connection management is the server's
    }
    if (iequals(name, "content-type")) {
        content_type_.assign(value);
        return;
    }
    headers_.emplace_back(std::string(name), std::string(value));
}

void Response::header(std::string_view name, std::string_view value) {
    check_head_open();
    if (!iequals(name, "set-cookie")) {
        for (size_t i = 0; i < headers_.size(); ++i) {
            auto& [n, v] = headers_[i];
            if (iequals(n, name)) {
                check_header(name, value);
                // (value may be a view of v: the new string is made before v changes)
                // The undo keeps the old value only: the name stays where it is.
                undo_.push_back({i, false, {std::string(), std::exchange(v, std::string(value))}});
                return;
            }
        }
    }
    add_header(name, value);
}

void Response::remove_cookie(std::string_view name) {
    for (size_t i = 0; i < headers_.size();) {
        const auto& h = headers_[i];
        if (iequals(h.first, "set-cookie") && h.second.size() > name.size() &&
            h.second.compare(0, name.size(), name) == 0 && h.second[name.size()] == '=') {
            undo_.push_back({i, true, std::move(headers_[i])});
            headers_.erase(headers_.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
            ++i;
        }
    }
}

int Response::release_file() {
    int fd = file_fd_;
    file_fd_ = -1;
    return fd;
}

std::optional<std::string_view> Response::header(std::string_view name) const {
    if (iequals(name, "content-type") && !content_type_.empty()) return std::string_view(content_type_);
    for (const auto& [n, v] : headers_)
        if (iequals(n, name)) return std::string_view(v);
    return std::nullopt;
}

Response::Response() = default;
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

void Response::engine_error(int status_code, std::string_view why, uint32_t retry_after_s) {
    status(status_code);
    if (retry_after_s > 0) header("Retry-After", std::to_string(retry_after_s));
    // Plain text, to be read as such: `why` may carry what an upload's sink said of it.
    header("X-Content-Type-Options", "nosniff");
    std::string text;
    text.reserve(reason_phrase(status_code).size() + why.size() + 3);
    text.append(reason_phrase(status_code)).append(": ").append(why).append("\n");
    send(text, "text/plain; charset=utf-8");
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
    if (!encoder_) {
        stream_->chunk(chunk);
        return;
    }
    coded_.clear();
    if (!encoder_->write(chunk, &coded_)) throw std::runtime_error("Response::write: the content coding failed");
    if (stream_) stream_->chunk(coded_);  // (a failed write may have unbound it)
}

void Response::end() {
    if (!streaming_ || ended_) return;
    ended_ = true;
    if (!stream_) return;
    if (encoder_) {
        coded_.clear();
        if (encoder_->finish(&coded_)) stream_->chunk(coded_);
        encoder_.reset();
    }
    if (stream_) stream_->finish();
}

void Response::encode_stream(std::unique_ptr<StreamEncoder> encoder) { encoder_ = std::move(encoder); }

void Response::clear() {
    close_ = false;
    if (!stream_) streaming_ = false;  // buffered: nothing went out yet
    clear_keeping(0);
}

void Response::clear_keeping(HeaderMark m) {
    // Backwards: each change undone finds the headers as they were when it was made
    // (appends aside, which the resize drops).
    while (undo_.size() > m.undo) {
        Undo& u = undo_.back();
        if (u.removed && u.index <= headers_.size())
            headers_.insert(headers_.begin() + static_cast<std::ptrdiff_t>(u.index), std::move(u.header));
        else if (!u.removed && u.index < headers_.size())
            headers_[u.index].second = std::move(u.header.second);
        undo_.pop_back();
    }
    clear_keeping(m.count);
}

void Response::discard() {
    close_ = false;
    if (!stream_) streaming_ = false;
    // From the back, so that each removal's index holds when undone in reverse.
    for (size_t i = headers_.size(); i-- > 0;) undo_.push_back({i, true, std::move(headers_[i])});
    headers_.clear();
    reset_message();
}

void Response::clear_keeping(size_t headers) {
    if (headers == 0) undo_.clear();
    if (headers < headers_.size()) headers_.resize(headers);
    reset_message();
}

void Response::reset_message() {
    status_ = 200;
    content_type_.clear();
    body_.clear();
    drop_file();
    upgrade_.reset();
}

void Response::upgrade(std::unique_ptr<WsUpgrade> up) { upgrade_ = std::move(up); }

std::unique_ptr<WsUpgrade> Response::take_upgrade() { return std::move(upgrade_); }

void Response::reset(ResponseStream* stream) {
    clear();
    streaming_ = ended_ = aborted_ = false;
    stream_ = stream;
    encoder_.reset();
}

}  // namespace kiln::http
