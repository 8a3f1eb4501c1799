#include "http/forwarded.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>

#include "http/parser.hpp"  // iequals

namespace kiln::http {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool trusted_by(const std::vector<net::AddressRange>& trusted, const net::PeerAddress& a) {
    for (const net::AddressRange& r : trusted)
        if (r.contains(a)) return true;
    return false;
}

// The for= value of one Forwarded element ("for=1.2.3.4;proto=https"), or "".
std::string_view for_param(std::string_view element) {
    while (!element.empty()) {
        size_t semi = element.find(';');
        std::string_view pair = trim(element.substr(0, semi));
        element = semi == std::string_view::npos ? std::string_view() : element.substr(semi + 1);
        size_t eq = pair.find('=');
        if (eq != std::string_view::npos && iequals(trim(pair.substr(0, eq)), "for")) return trim(pair.substr(eq + 1));
    }
    return {};
}

}  // namespace

bool parse_node(std::string_view text, net::PeerAddress* out) {
    if (text.size() >= 2 && text.front() == '"' && text.back() == '"') text = text.substr(1, text.size() - 2);
    if (text.empty() || text.size() > 64) return false;
    std::string_view host, port;
    if (text.front() == '[') {
        size_t close = text.find(']');
        if (close == std::string_view::npos) return false;
        host = text.substr(1, close - 1);
        std::string_view rest = text.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':' || rest.size() == 1) return false;  // "[::1]:" has no port
            port = rest.substr(1);
        }
    } else {
        size_t colon = text.find(':');
        if (colon != std::string_view::npos && text.find(':', colon + 1) != std::string_view::npos) {
            host = text;  // a bare IPv6 address (X-Forwarded-For writes them so)
        } else {
            host = text.substr(0, colon);
            if (colon != std::string_view::npos) {
                port = text.substr(colon + 1);
                if (port.empty()) return false;  // "1.2.3.4:" has no port
            }
        }
    }
    char z[65];  // NUL-terminated for inet_pton; text is at most 64 bytes
    std::memcpy(z, host.data(), host.size());
    z[host.size()] = '\0';
    net::PeerAddress a;
    if (inet_pton(AF_INET, z, a.addr) == 1) a.family = AF_INET;
    else if (inet_pton(AF_INET6, z, a.addr) == 1) a.family = AF_INET6;
    else return false;
    if (!port.empty()) {
        unsigned p = 0;
        auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
        if (ec != std::errc() || end != port.data() + port.size() || p > 65535) return false;
        a.port = static_cast<uint16_t>(p);
    }
    *out = a;
    return true;
}

net::PeerAddress forwarded_client(std::span<const Header> headers, const net::PeerAddress& peer,
                                  const std::vector<net::AddressRange>& trusted, ForwardedField field) {
    const bool rfc = field == ForwardedField::Forwarded;
    const std::string_view name = rfc ? "forwarded" : "x-forwarded-for";
    // The hops, nearest first: the field's lines from the last, each line's items
    // from the last (no copy: every request from a balancer comes this way).
    net::PeerAddress client = peer;
    for (size_t i = headers.size(); i-- > 0;) {
        if (!iequals(headers[i].name, name)) continue;
        std::string_view v = headers[i].value;
        bool more = !v.empty();
        if (more && v.back() == ',') v.remove_suffix(1);  // "a, b," lists a and b: no empty hop at the end
        while (more) {
            size_t comma = v.rfind(',');
            std::string_view item = trim(comma == std::string_view::npos ? v : v.substr(comma + 1));
            more = comma != std::string_view::npos;
            if (more) v = v.substr(0, comma);
            net::PeerAddress a;
            if (!parse_node(rfc ? for_param(item) : item, &a)) return client;
            client = a;
            if (!trusted_by(trusted, a)) return client;  // the first untrusted hop: the client
        }
    }
    return client;
}

}  // namespace kiln::http
