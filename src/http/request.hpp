// http::Request: one request as the engine knows it: the parsed head, the decoded
// path, the body once it is complete, and what the connection knows of its peer.
// Views point into the connection's read buffer (or an Exchange's) and are valid
// while the request is being handled. Filled by http::Connection; read by the layer
// above (kiln::Request wraps one). Knows nothing of routes, sessions or forms.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <kiln/http_types.hpp>

#include "http/parser.hpp"
#include "http/url.hpp"
#include "net/peer.hpp"

namespace kiln::http {

class Request {
public:
    Method method() const { return head_ ? head_->method : Method::Other; }
    std::string_view method_name() const { return head_ ? head_->method_token : std::string_view(); }
    std::string_view target() const { return head_ ? head_->target : std::string_view(); }
    std::string_view path() const { return path_; }  // percent-decoded, dot segments removed
    std::string_view query_string() const { return head_ ? head_->query : std::string_view(); }
    std::string_view host() const { return head_ ? head_->host : std::string_view(); }
    int version_major() const { return head_ ? head_->version_major : 1; }  // 2: an HTTP/2 stream
    int version_minor() const { return head_ ? head_->version_minor : 1; }
    bool keep_alive() const { return head_ && head_->keep_alive; }
    // An HTTP/2 extended CONNECT's :protocol (RFC 8441), e.g. "websocket"; else empty.
    std::string_view protocol() const { return head_ ? head_->protocol : std::string_view(); }
    std::optional<std::string_view> header(std::string_view name) const;
    std::span<const Header> headers() const;
    std::string_view body() const { return body_; }
    // HTTPS at the client: TLS to us, a trusted proxy's X-Forwarded-Proto: https, or
    // a PROXY protocol v2 header that says the client used TLS.
    bool secure() const;
    // The client: the connection's peer, or the one a PROXY protocol header named,
    // or (from a trusted proxy) the one its Forwarded / X-Forwarded-For names.
    const net::PeerAddress& client() const { return client_; }

    // Connection side: a new request on `head` (the path still to be set).
    void start(const RequestHead* head, bool via_trusted_proxy, bool secure_transport, const net::PeerAddress& client);
    // The normalized path; a copy only when decoding changed it.
    PathStatus set_path(std::string_view raw);
    void set_body(std::string_view body) { body_ = body; }

private:
    const RequestHead* head_ = nullptr;
    std::string_view path_;
    std::string_view body_;
    std::string path_storage_;  // used only when decoding changed the path
    bool via_trusted_proxy_ = false;
    bool secure_transport_ = false;
    net::PeerAddress client_;
};

}  // namespace kiln::http
