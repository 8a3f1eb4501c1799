// Open connections per client address, for limits.max_connections_per_address:
// shared by every loop of a process (a mutex; taken once at accept and once at
// close, never per request). An IPv6 client counts by its /64
// (net::PeerAddress::counted); addresses of unknown family (Unix sockets) are not
// counted.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "net/peer.hpp"

namespace kiln::http {

class AddressCounts {
public:
    // Counts one more connection from peer unless `limit` are open already (false).
    bool add(const net::PeerAddress& peer, size_t limit);
    void remove(const net::PeerAddress& peer);
    size_t addresses() const;  // with at least one connection open

private:
    static std::string key(const net::PeerAddress& peer);
    mutable std::mutex mu_;
    std::unordered_map<std::string, uint32_t> open_;  // guarded by mu_
};

}  // namespace kiln::http
