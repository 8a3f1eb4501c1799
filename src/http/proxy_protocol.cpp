#include "http/proxy_protocol.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>
#include <string>

namespace kiln::http {
namespace {

constexpr std::string_view kV2Signature("\r\n\r\n\0\r\nQUIT\n", 12);
constexpr size_t kV1Max = 107;
constexpr uint8_t kTlvSsl = 0x20;       // PP2_TYPE_SSL
constexpr uint8_t kSslClientSsl = 0x01;  // PP2_CLIENT_SSL

using S = ProxyHeader::Status;

ProxyHeader invalid() { return {S::Invalid, 0, false, {}, false}; }

// One space-separated field of a v1 line.
bool next_field(std::string_view& line, std::string_view& out) {
    size_t sp = line.find(' ');
    out = line.substr(0, sp);
    line = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
    return !out.empty();
}

bool parse_port(std::string_view s, uint16_t* out) {
    if (s.empty() || s.size() > 5 || (s.size() > 1 && s[0] == '0')) return false;
    unsigned v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v > 65535) return false;
    *out = static_cast<uint16_t>(v);
    return true;
}

ProxyHeader parse_v1(std::string_view data) {
    size_t crlf = data.substr(0, kV1Max).find("\r\n");
    if (crlf == std::string_view::npos) {
        if (data.size() >= kV1Max) return invalid();
        // Not a line yet: whatever arrived must still be able to become one (the
        // same bytes the complete line accepts, and a CR only as its last byte).
        for (size_t i = 0; i < data.size(); ++i) {
            char c = data[i];
            if ((c < 0x20 || c > 0x7e) && !(c == '\r' && i + 1 == data.size())) return invalid();
        }
        return {};
    }
    std::string_view line = data.substr(6, crlf - 6);  // after "PROXY "
    // Printable ASCII fields, one space apart (a NUL would cut an address short for
    // inet_pton; a stray LF or a trailing space is not what a balancer writes).
    for (char c : line)
        if (c < 0x20 || c > 0x7e) return invalid();
    if (line.empty() || line.back() == ' ' || line.find("  ") != std::string_view::npos) return invalid();
    ProxyHeader h;
    h.consumed = crlf + 2;
    std::string_view proto, src, dst, sport, dport;
    if (!next_field(line, proto)) return invalid();
    if (proto == "UNKNOWN") {  // the rest of the line is to be ignored
        h.status = S::Complete;
        return h;
    }
    int family = proto == "TCP4" ? AF_INET : proto == "TCP6" ? AF_INET6 : 0;
    if (!family) return invalid();
    if (!next_field(line, src) || !next_field(line, dst) || !next_field(line, sport) || !next_field(line, dport) ||
        !line.empty())
        return invalid();
    uint8_t dst_addr[16];
    uint16_t dst_port;
    std::string src_text(src), dst_text(dst);
    if (inet_pton(family, src_text.c_str(), h.source.addr) != 1 || inet_pton(family, dst_text.c_str(), dst_addr) != 1 ||
        !parse_port(sport, &h.source.port) || !parse_port(dport, &dst_port))
        return invalid();
    h.source.family = static_cast<uint8_t>(family);
    h.has_source = true;
    h.status = S::Complete;
    return h;
}

uint16_t be16(const char* p) {
    return static_cast<uint16_t>(static_cast<uint8_t>(p[0]) << 8 | static_cast<uint8_t>(p[1]));
}

ProxyHeader parse_v2(std::string_view data) {
    if (data.size() < 16) return {};
    auto ver_cmd = static_cast<uint8_t>(data[12]);
    auto fam = static_cast<uint8_t>(data[13]);
    size_t len = be16(data.data() + 14);
    if ((ver_cmd >> 4) != 2) return invalid();
    uint8_t command = ver_cmd & 0x0f;
    if (command > 1) return invalid();  // 0 LOCAL, 1 PROXY
    if (data.size() < 16 + len) return {};
    ProxyHeader h;
    h.consumed = 16 + len;
    h.status = S::Complete;
    // LOCAL (the balancer's own health check): the block is skipped whatever it
    // holds, its family included, and the connection's own endpoints stand.
    if (command == 0) {
        h.local = true;
        return h;
    }
    std::string_view body = data.substr(16, len);
    size_t addr_len = 0;
    uint8_t family = fam >> 4, transport = fam & 0x0f;
    if (fam == 0x00) addr_len = 0;                                      // UNSPEC: no addresses
    else if (family == 1 && (transport == 1 || transport == 2)) addr_len = 12;   // AF_INET: src, dst, ports
    else if (family == 2 && (transport == 1 || transport == 2)) addr_len = 36;   // AF_INET6
    else if (family == 3 && (transport == 1 || transport == 2)) addr_len = 216;  // AF_UNIX: two paths
    else return invalid();  // the combinations the protocol defines, no others
    if (body.size() < addr_len) return invalid();
    if (family == 1 || family == 2) {
        size_t n = family == 1 ? 4 : 16;
        h.source.family = family == 1 ? AF_INET : AF_INET6;
        std::memcpy(h.source.addr, body.data(), n);
        h.source.port = be16(body.data() + 2 * n);
        h.has_source = true;
    }
    // TLVs: type (1), length (2), value. Only PP2_TYPE_SSL matters here.
    std::string_view tlvs = body.substr(addr_len);
    while (!tlvs.empty()) {
        if (tlvs.size() < 3) return invalid();
        auto type = static_cast<uint8_t>(tlvs[0]);
        size_t n = be16(tlvs.data() + 1);
        if (tlvs.size() < 3 + n) return invalid();
        if (type == kTlvSsl && n >= 1) h.ssl = (static_cast<uint8_t>(tlvs[3]) & kSslClientSsl) != 0;
        tlvs.remove_prefix(3 + n);
    }
    return h;
}

}  // namespace

ProxyHeader parse_proxy_header(std::string_view data) {
    // Which version: decided by the first bytes; a prefix of either is still undecided.
    std::string_view v1 = "PROXY ";
    size_t n1 = std::min(data.size(), v1.size());
    if (data.substr(0, n1) == v1.substr(0, n1)) return data.size() < v1.size() ? ProxyHeader{} : parse_v1(data);
    size_t n2 = std::min(data.size(), kV2Signature.size());
    if (data.substr(0, n2) == kV2Signature.substr(0, n2))
        return data.size() < kV2Signature.size() ? ProxyHeader{} : parse_v2(data);
    return invalid();
}

}  // namespace kiln::http
