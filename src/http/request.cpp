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
    // The nearest proxy's word: the last item of the last line. Items before it were
    // there when the request reached that proxy, the client's own among them (a proxy
    // that appends, or one that does not set the field, passes them on).
    std::optional<std::string_view> proto;
    for (const Header& h : headers())
        if (iequals(h.name, "x-forwarded-proto")) proto = h.value;
    if (!proto) return false;
    size_t comma = proto->rfind(',');
    std::string_view last = comma == std::string_view::npos ? *proto : proto->substr(comma + 1);
    while (!last.empty() && (last.back() == ' ' || last.back() == '\t')) last.remove_suffix(1);
    while (!last.empty() && (last.front() == ' ' || last.front() == '\t')) last.remove_prefix(1);
    return iequals(last, "https");
}

}  // namespace kiln::http
