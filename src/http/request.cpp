#include "http/request.hpp"

namespace kiln::http {

void Request::start(const RequestHead* head, bool via_trusted_proxy, bool secure_transport, const net::PeerAddress& client) {
    head_ = head;
    path_ = {};
    body_ = {};
    via_trusted_proxy_ = via_trusted_proxy;
    secure_transport_ = secure_transport;
    client_ = client;
}

PathStatus Request::set_path(std::string_view raw) {
    if (raw.empty() || raw == "*" || !path_needs_normalizing(raw)) {
        path_ = raw;
        return PathStatus::Ok;
    }
    PathStatus ps = normalize_path(raw, path_storage_);
    if (ps == PathStatus::Ok) path_ = path_storage_;
    return ps;
}

std::optional<std::string_view> Request::header(std::string_view name) const {
    if (!head_) return std::nullopt;
    if (const Header* h = head_->find(name)) return h->value;
    return std::nullopt;
}

std::span<const Header> Request::headers() const {
    if (!head_) return {};
    return {head_->headers, head_->header_count};
}

bool Request::secure() const {
    if (secure_transport_) return true;
    if (!via_trusted_proxy_) return false;  // X-Forwarded-Proto from anyone else is a claim, not a fact
    auto proto = header("x-forwarded-proto");
    if (!proto) return false;
    std::string_view first = proto->substr(0, proto->find(','));  // a chain of proxies: the first hop's
    while (!first.empty() && (first.back() == ' ' || first.back() == '\t')) first.remove_suffix(1);
    while (!first.empty() && (first.front() == ' ' || first.front() == '\t')) first.remove_prefix(1);
    return iequals(first, "https");
}

}  // namespace kiln::http
