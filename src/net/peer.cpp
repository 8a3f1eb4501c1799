#include "net/peer.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace kiln::net {

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

}  // namespace kiln::net
