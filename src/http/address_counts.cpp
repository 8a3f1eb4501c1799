#include "http/address_counts.hpp"

#include <sys/socket.h>

namespace kiln::http {

std::string AddressCounts::key(const net::PeerAddress& peer) {
    const net::PeerAddress c = peer.counted();  // an IPv6 client by its /64
    std::string k(1, static_cast<char>(c.family));
    k.append(reinterpret_cast<const char*>(c.addr), c.family == AF_INET ? 4 : 8);
    return k;
}

bool AddressCounts::add(const net::PeerAddress& peer, size_t limit) {
    if (peer.family != AF_INET && peer.family != AF_INET6) return true;
    std::string k = key(peer);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = open_.find(k);
    if (it == open_.end()) {
        if (limit == 0) return false;
        open_.emplace(std::move(k), 1);
        return true;
    }
    if (it->second >= limit) return false;
    ++it->second;
    return true;
}

void AddressCounts::remove(const net::PeerAddress& peer) {
    if (peer.family != AF_INET && peer.family != AF_INET6) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = open_.find(key(peer));
    if (it == open_.end()) return;
    if (--it->second == 0) open_.erase(it);
}

size_t AddressCounts::addresses() const {
    std::lock_guard<std::mutex> lock(mu_);
    return open_.size();
}

}  // namespace kiln::http
