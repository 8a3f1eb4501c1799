// The PROXY protocol (HAProxy's, versions 1 and 2): the header a load balancer
// sends first on a connection to say whose it is. On a listener marked
// `proxy_protocol`, every connection must start with one; its source address then
// stands for the peer (access log, limits, rate), and a v2 header's SSL TLV says
// whether the client used TLS. A connection without a valid header is closed.
//
// v1: "PROXY TCP4|TCP6|UNKNOWN src dst sport dport\r\n", at most 107 bytes.
// v2: a 12-byte signature, version/command, family/transport, a length, the
// addresses, then TLVs. A LOCAL command (the balancer's own health check) or an
// UNKNOWN/unspecified family keeps the connection's own peer.
#pragma once
#include <cstddef>
#include <string_view>

#include "net/peer.hpp"

namespace kiln::http {

struct ProxyHeader {
    enum class Status : uint8_t { Incomplete, Invalid, Complete } status = Status::Incomplete;
    size_t consumed = 0;      // bytes of the header (Complete)
    bool has_source = false;  // false: LOCAL or UNKNOWN, keep the socket's peer
    bool local = false;       // v2 LOCAL: the balancer's own connection (a health check)
    net::PeerAddress source;
    bool ssl = false;         // v2: the client's connection to the balancer used TLS
};

ProxyHeader parse_proxy_header(std::string_view data);

}  // namespace kiln::http
