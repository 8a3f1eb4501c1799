#include "net/peer.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <cstring>
#include <string>

namespace kiln::net {
namespace {

constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};  // ::ffff:a.b.c.d

}  // namespace

PeerAddress PeerAddress::from(const sockaddr* sa) {
    PeerAddress p;
    if (!sa) return p;
    if (sa->sa_family == AF_INET) {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(sa);
        p.family = AF_INET;
        p.port = ntohs(v4->sin_port);
        std::memcpy(p.addr, &v4->sin_addr, 4);
    } else if (sa->sa_family == AF_INET6) {
        const auto* v6 = reinterpret_cast<const sockaddr_in6*>(sa);
        p.family = AF_INET6;
        p.port = ntohs(v6->sin6_port);
        std::memcpy(p.addr, &v6->sin6_addr, 16);
    }
    return p;
}

size_t PeerAddress::format(char* out, size_t cap) const {
    if (family == 0 || !inet_ntop(family, addr, out, static_cast<socklen_t>(cap))) {
        if (cap < 2) return 0;
        out[0] = '-';
        return 1;
    }
    return std::strlen(out);
}

PeerAddress PeerAddress::counted() const {
    PeerAddress c;
    c.family = family;
    if (family == AF_INET) {
        std::memcpy(c.addr, addr, 4);
    } else if (family == AF_INET6 && std::memcmp(addr, kMapped, 12) == 0) {
        c.family = AF_INET;
        std::memcpy(c.addr, addr + 12, 4);
    } else if (family == AF_INET6) {
        std::memcpy(c.addr, addr, 8);
    }
    return c;
}

bool AddressRange::parse(std::string_view text, AddressRange* out) {
    size_t slash = text.find('/');
    std::string host(text.substr(0, slash));
    AddressRange r;
    if (inet_pton(AF_INET, host.c_str(), r.addr) == 1) r.family = AF_INET;
    else if (inet_pton(AF_INET6, host.c_str(), r.addr) == 1) r.family = AF_INET6;
    else return false;
    unsigned bits = r.family == AF_INET ? 32 : 128;
    r.prefix = static_cast<uint8_t>(bits);
    if (slash != std::string_view::npos) {
        std::string_view p = text.substr(slash + 1);
        unsigned n = 0;
        auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), n);
        if (p.empty() || ec != std::errc() || end != p.data() + p.size() || n > bits) return false;
        r.prefix = static_cast<uint8_t>(n);
    }
    *out = r;
    return true;
}

bool AddressRange::contains(const PeerAddress& peer) const {
    const uint8_t* a = peer.addr;
    if (peer.family == AF_INET6 && family == AF_INET && std::memcmp(a, kMapped, 12) == 0) a += 12;
    else if (peer.family != family) return false;
    unsigned full = prefix / 8, rest = prefix % 8;
    if (std::memcmp(a, addr, full) != 0) return false;
    if (rest == 0) return true;
    uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
    return (a[full] & mask) == (addr[full] & mask);
}

}  // namespace kiln::net
