// The address of a connection's peer, kept small (20 bytes) because every
// connection holds one; formatted only when a log line needs it.
#pragma once
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

namespace kiln::net {

struct PeerAddress {
    uint8_t family = 0;  // AF_INET, AF_INET6, or 0 (unknown)
    uint16_t port = 0;
    uint8_t addr[16] = {};

    static PeerAddress from(const sockaddr* sa);
    // Writes "127.0.0.1" or "::1" (no port) into out (>= 46 bytes); returns its length.
    size_t format(char* out, size_t cap) const;
};

}  // namespace kiln::net
