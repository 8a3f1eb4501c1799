// Who the client is behind trusted proxies: the one field the deployment names
// (server.forwarded_header): X-Forwarded-For, or Forwarded (RFC 7239, its for=
// parameters), every line of it read as one list in order. The other field is never
// read: a proxy that writes one passes the client's own copy of the other through.
// Each proxy appends the address it got the request from, so the list is walked from
// its end: the first address that is not itself a trusted proxy is the client.
// Anything before it was written by the client and proves nothing. Only called when
// the connection's own peer is a trusted proxy.
//
// A malformed element, an obfuscated identifier (for=_hidden) or "unknown" ends
// the walk: the last address found before it stands (the peer if none).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include <kiln/http_types.hpp>

#include "net/peer.hpp"

namespace kiln::http {

enum class ForwardedField : uint8_t { XForwardedFor, Forwarded };

net::PeerAddress forwarded_client(std::span<const Header> headers, const net::PeerAddress& peer,
                                  const std::vector<net::AddressRange>& trusted, ForwardedField field);

// "192.0.2.1", "[2001:db8::1]", "[2001:db8::1]:4711", "192.0.2.1:80", optionally
// quoted (Forwarded's for="..."); false for anything else.
bool parse_node(std::string_view text, net::PeerAddress* out);

}  // namespace kiln::http
