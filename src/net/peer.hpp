// The address of a connection's peer, kept small (20 bytes) because every
// connection holds one; formatted only when a log line needs it. AddressRange is
// an address block ("10.0.0.0/8", "::1"), e.g. the proxies trusted to say how a
// client connected.
#pragma once
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln::net {

struct PeerAddress {
    uint8_t family = 0;  // AF_INET, AF_INET6, or 0 (unknown)
    uint16_t port = 0;
    uint8_t addr[16] = {};

    static PeerAddress from(const sockaddr* sa);
    // Writes "127.0.0.1" or "::1" (no port) into out (>= 46 bytes); returns its length.
    size_t format(char* out, size_t cap) const;
    // The address per-client limits count this peer as, port cleared: an IPv4 address
    // as it is; an IPv4-mapped IPv6 one (a dual-stack listener's IPv4 peer,
    // ::ffff:192.0.2.7) as that IPv4 address; any other IPv6 address as its /64, the
    // block one host is usually given, so a client cannot count as 2^64 clients.
    PeerAddress counted() const;
};

struct AddressRange {
    uint8_t family = 0;  // AF_INET or AF_INET6
    uint8_t prefix = 0;  // leading bits that must match
    uint8_t addr[16] = {};

    // "1.2.3.4", "1.2.3.0/24", "::1", "fd00::/8"; false for anything else.
    static bool parse(std::string_view text, AddressRange* out);
    // True if `peer` is in the block; an IPv4-mapped IPv6 peer (::ffff:1.2.3.4, from
    // a dual-stack listener) matches IPv4 blocks.
    bool contains(const PeerAddress& peer) const;
};

}  // namespace kiln::net
