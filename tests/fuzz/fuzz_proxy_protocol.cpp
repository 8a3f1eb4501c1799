// Fuzzes the PROXY protocol header parser (http::parse_proxy_header), which reads the
// first bytes of every connection on a `proxy_protocol` listener.
// - Only Complete has a length: 0 < consumed <= size, at most 107 bytes for v1 and
//   exactly 16 + the length field for v2; Incomplete and Invalid carry nothing.
// - A Complete header is one no matter what follows it: its own bytes parse to the
//   same result, and every shorter prefix is Incomplete, so how the bytes are split
//   into reads never turns an accepted header into a refused one (or an early accept).
// - Incomplete only while a header can still fit: under 107 bytes for v1, under
//   16 + length for v2.
// - A source is an IPv4/IPv6 address read from the header itself (v1: the text of the
//   source field, v2: the bytes after the fixed part), and ssl only comes from v2. An
//   accepted v1 line holds no NUL or LF.
// - Round trip: the source written back as a v1 line and as a v2 header (with an SSL
//   TLV when ssl) parses to the same address, port and ssl.
#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "http/proxy_protocol.hpp"

using namespace kiln::http;
using kiln::net::PeerAddress;
using S = ProxyHeader::Status;

namespace {

const std::string_view kSig("\r\n\r\n\0\r\nQUIT\n", 12);

bool same(const ProxyHeader& a, const ProxyHeader& b) {
    if (a.status != b.status || a.consumed != b.consumed || a.has_source != b.has_source || a.ssl != b.ssl) return false;
    if (!a.has_source) return true;
    return a.source.family == b.source.family && a.source.port == b.source.port &&
           std::memcmp(a.source.addr, b.source.addr, 16) == 0;
}

size_t addr_len(const PeerAddress& a) { return a.family == AF_INET ? 4 : 16; }

std::string be16(size_t v) { return {static_cast<char>((v >> 8) & 0xff), static_cast<char>(v & 0xff)}; }

void check_round_trip(const ProxyHeader& h) {
    char text[64];
    size_t n = h.source.format(text, sizeof text);
    std::string addr(text, n);
    FUZZ_CHECK(addr != "-");
    // v1: "PROXY TCP4|TCP6 src dst sport dport\r\n"
    bool v4 = h.source.family == AF_INET;
    std::string line = std::string("PROXY ") + (v4 ? "TCP4 " : "TCP6 ") + addr + (v4 ? " 0.0.0.0 " : " :: ") +
                       std::to_string(h.source.port) + " 80\r\n";
    ProxyHeader back = parse_proxy_header(line + "GET");
    FUZZ_CHECK(back.status == S::Complete && back.consumed == line.size() && back.has_source && !back.ssl);
    FUZZ_CHECK(back.source.family == h.source.family && back.source.port == h.source.port);
    FUZZ_CHECK(std::memcmp(back.source.addr, h.source.addr, addr_len(h.source)) == 0);
    // v2: PROXY command, TCP, the source, a zero destination, an SSL TLV when ssl.
    std::string body(reinterpret_cast<const char*>(h.source.addr), addr_len(h.source));
    body += std::string(addr_len(h.source), '\0') + be16(h.source.port) + be16(80);
    if (h.ssl) body += std::string("\x20", 1) + be16(5) + std::string("\x01\0\0\0\0", 5);
    std::string v2 = std::string(kSig) + "\x21" + (v4 ? "\x11" : "\x21") + be16(body.size()) + body;
    back = parse_proxy_header(v2);
    FUZZ_CHECK(back.status == S::Complete && back.consumed == v2.size() && back.has_source && back.ssl == h.ssl);
    FUZZ_CHECK(back.source.family == h.source.family && back.source.port == h.source.port);
    FUZZ_CHECK(std::memcmp(back.source.addr, h.source.addr, addr_len(h.source)) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    ProxyHeader h = parse_proxy_header(in);
    bool is_v1 = in.starts_with("PROXY ");
    bool is_v2 = in.starts_with(kSig);

    if (h.status != S::Complete) {
        FUZZ_CHECK(h.consumed == 0 && !h.has_source && !h.ssl);
        if (h.status == S::Incomplete) {
            // Still a prefix of one of the two forms, and a header could still fit.
            FUZZ_CHECK(std::string_view("PROXY ").starts_with(in.substr(0, 6)) ||
                       kSig.starts_with(in.substr(0, 12)));
            if (is_v1) FUZZ_CHECK(size < 107);
            if (is_v2 && size >= 16) {
                size_t len = static_cast<uint8_t>(in[14]) << 8 | static_cast<uint8_t>(in[15]);
                FUZZ_CHECK(size < 16 + len);
            }
        }
        return 0;
    }

    FUZZ_CHECK(is_v1 || is_v2);
    FUZZ_CHECK(h.consumed > 0 && h.consumed <= size);
    if (is_v1) {
        FUZZ_CHECK(h.consumed <= 107 && h.consumed >= 8);
        FUZZ_CHECK(in.substr(h.consumed - 2, 2) == "\r\n");
        FUZZ_CHECK(in.substr(0, h.consumed - 2).find("\r\n") == std::string_view::npos);  // the first CRLF
        FUZZ_CHECK(!h.ssl);
        // No NUL or LF inside an accepted line: a prefix holding one is refused (so the
        // outcome would depend on the reads), and a NUL would cut an address field short.
        std::string_view whole_line = in.substr(0, h.consumed - 2);
        FUZZ_CHECK(whole_line.find('\0') == std::string_view::npos);
        FUZZ_CHECK(whole_line.find('\n') == std::string_view::npos);
        if (h.has_source) {
            // The source is the third field, written in the header's own text.
            std::string_view line = in.substr(6, h.consumed - 8);
            size_t a = line.find(' ');
            FUZZ_CHECK(a != std::string_view::npos);
            size_t b = line.find(' ', a + 1);
            std::string field(line.substr(a + 1, b == std::string_view::npos ? std::string_view::npos : b - a - 1));
            uint8_t want[16] = {};
            FUZZ_CHECK(inet_pton(h.source.family, field.c_str(), want) == 1);
            FUZZ_CHECK(std::memcmp(want, h.source.addr, addr_len(h.source)) == 0);
            FUZZ_CHECK(line.starts_with(h.source.family == AF_INET ? "TCP4 " : "TCP6 "));
        }
    } else {
        FUZZ_CHECK(size >= 16);
        size_t len = static_cast<uint8_t>(in[14]) << 8 | static_cast<uint8_t>(in[15]);
        FUZZ_CHECK(h.consumed == 16 + len);
        FUZZ_CHECK((static_cast<uint8_t>(in[12]) >> 4) == 2);
        if (h.has_source || h.ssl) FUZZ_CHECK((static_cast<uint8_t>(in[12]) & 0x0f) == 1);  // PROXY, not LOCAL
        if (h.has_source) {
            FUZZ_CHECK(std::memcmp(in.data() + 16, h.source.addr, addr_len(h.source)) == 0);
            size_t port_at = 16 + 2 * addr_len(h.source);
            FUZZ_CHECK(h.source.port == (static_cast<uint8_t>(in[port_at]) << 8 | static_cast<uint8_t>(in[port_at + 1])));
        }
    }
    if (h.has_source) FUZZ_CHECK(h.source.family == AF_INET || h.source.family == AF_INET6);

    // The header alone gives the same; nothing after it counts.
    std::string_view own = in.substr(0, h.consumed);
    FUZZ_CHECK(same(parse_proxy_header(own), h));
    // Split anywhere, the first part is only ever Incomplete (long v2 headers: a sample).
    size_t step = h.consumed <= 512 ? 1 : h.consumed / 256;
    for (size_t k = 0; k < h.consumed; k += step) FUZZ_CHECK(parse_proxy_header(own.substr(0, k)).status == S::Incomplete);
    FUZZ_CHECK(parse_proxy_header(own.substr(0, h.consumed - 1)).status == S::Incomplete);

    if (h.has_source) check_round_trip(h);
    return 0;
}
