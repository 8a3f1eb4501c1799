// http::parse_proxy_header: the PROXY protocol header a balancer sends first on a
// `proxy_protocol` listener (HAProxy's proxy-protocol.txt, versions 1 and 2). A valid
// header is Incomplete until its last byte arrives and Complete from then on, with
// `consumed` its exact length (the request bytes after it are left alone); anything
// that cannot become a header is Invalid (the connection is closed).
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "http/proxy_protocol.hpp"

using kiln::http::parse_proxy_header;
using kiln::http::ProxyHeader;
using S = ProxyHeader::Status;

namespace {

const std::string kSig("\r\n\r\n\0\r\nQUIT\n", 12);
const std::string kHttp = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

std::string text_of(const kiln::net::PeerAddress& a) {
    char buf[64];
    return std::string(buf, a.format(buf, sizeof buf));
}

const char* status_name(S s) { return s == S::Incomplete ? "Incomplete" : s == S::Invalid ? "Invalid" : "Complete"; }

std::string hex(std::string_view s) {
    static const char* d = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) {
        out += d[c >> 4];
        out += d[c & 15];
    }
    return out;
}

std::string be16(size_t v) { return {static_cast<char>((v >> 8) & 0xff), static_cast<char>(v & 0xff)}; }

// A v2 header: signature, version/command byte, family/transport byte, length, body.
std::string v2(uint8_t ver_cmd, uint8_t fam, const std::string& body) {
    return kSig + static_cast<char>(ver_cmd) + static_cast<char>(fam) + be16(body.size()) + body;
}

std::string bin_addr(int family, const char* text) {
    uint8_t a[16];
    EXPECT_EQ(inet_pton(family, text, a), 1) << text;
    return std::string(reinterpret_cast<const char*>(a), family == AF_INET ? 4 : 16);
}

std::string inet_block(int family, const char* src, const char* dst, uint16_t sport, uint16_t dport) {
    return bin_addr(family, src) + bin_addr(family, dst) + be16(sport) + be16(dport);
}

std::string tlv(uint8_t type, const std::string& value) { return static_cast<char>(type) + be16(value.size()) + value; }

// PP2_TYPE_SSL: client flags (1 byte), verify (4 bytes), then sub-TLVs.
std::string ssl_tlv(uint8_t client, const std::string& sub = "") {
    return tlv(0x20, std::string(1, static_cast<char>(client)) + std::string(4, '\0') + sub);
}

// The ordinary headers of both versions, each Complete on its own.
std::vector<std::string> valid_headers() {
    return {
        "PROXY TCP4 192.0.2.10 198.51.100.1 56324 443\r\n",
        "PROXY TCP6 2001:db8::1 2001:db8::2 443 8080\r\n",
        "PROXY UNKNOWN\r\n",
        "PROXY UNKNOWN ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n",
        "PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n",
        v2(0x21, 0x11, inet_block(AF_INET, "203.0.113.7", "10.0.0.1", 40000, 80)),
        v2(0x21, 0x21, inet_block(AF_INET6, "2001:db8::7", "2001:db8::80", 40001, 443)),
        v2(0x21, 0x11, inet_block(AF_INET, "203.0.113.8", "10.0.0.1", 1, 443) + ssl_tlv(0x01)),
        v2(0x20, 0x00, ""),
        v2(0x20, 0x11, inet_block(AF_INET, "10.0.0.2", "10.0.0.1", 5, 80)),
        v2(0x21, 0x00, ""),
        v2(0x21, 0x31, std::string(216, 'p')),
        v2(0x21, 0x12, inet_block(AF_INET, "203.0.113.9", "10.0.0.1", 53, 53) + tlv(0x04, std::string(300, '\0'))),
    };
}

ProxyHeader complete(std::string_view in) {
    ProxyHeader h = parse_proxy_header(in);
    EXPECT_EQ(h.status, S::Complete) << status_name(h.status) << " for " << hex(in);
    return h;
}

void expect_invalid(std::string_view in, const char* why) {
    ProxyHeader h = parse_proxy_header(in);
    EXPECT_EQ(h.status, S::Invalid) << why << ": got " << status_name(h.status) << " for " << hex(in);
}

}  // namespace

// --- version 1 ---------------------------------------------------------------------

TEST(ProxyProtocolV1, Tcp4GivesTheSourceAddressAndPort) {
    std::string in = "PROXY TCP4 192.0.2.10 198.51.100.1 56324 443\r\n";
    ProxyHeader h = complete(in);
    EXPECT_EQ(h.consumed, in.size());
    ASSERT_TRUE(h.has_source);
    EXPECT_EQ(h.source.family, AF_INET);
    EXPECT_EQ(text_of(h.source), "192.0.2.10");
    EXPECT_EQ(h.source.port, 56324);
    EXPECT_FALSE(h.ssl);  // v1 cannot say
}

TEST(ProxyProtocolV1, Tcp6GivesTheSourceAddressAndPort) {
    std::string in = "PROXY TCP6 2001:db8::1 2001:db8::2 443 8080\r\n";
    ProxyHeader h = complete(in);
    EXPECT_EQ(h.consumed, in.size());
    ASSERT_TRUE(h.has_source);
    EXPECT_EQ(h.source.family, AF_INET6);
    EXPECT_EQ(text_of(h.source), "2001:db8::1");
    EXPECT_EQ(h.source.port, 443);
}

TEST(ProxyProtocolV1, PortBoundsAreAccepted) {
    ProxyHeader h = complete("PROXY TCP4 1.2.3.4 5.6.7.8 0 65535\r\n");
    EXPECT_EQ(h.source.port, 0);
    h = complete("PROXY TCP4 1.2.3.4 5.6.7.8 65535 1\r\n");
    EXPECT_EQ(h.source.port, 65535);
}

TEST(ProxyProtocolV1, UnknownKeepsThePeerAndIgnoresTheRestOfTheLine) {
    ProxyHeader h = complete("PROXY UNKNOWN\r\n");
    EXPECT_EQ(h.consumed, 15u);
    EXPECT_FALSE(h.has_source);
    EXPECT_FALSE(h.local);  // a client the balancer cannot name: not the balancer
    // The longest header the specification allows: 107 bytes.
    std::string longest =
        "PROXY UNKNOWN ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n";
    ASSERT_EQ(longest.size(), 107u);
    h = complete(longest + kHttp);
    EXPECT_EQ(h.consumed, 107u);
    EXPECT_FALSE(h.has_source);
}

TEST(ProxyProtocolV1, ConsumedStopsAtTheCrlfAndLeavesTheRequest) {
    std::string header = "PROXY TCP4 192.0.2.10 198.51.100.1 56324 443\r\n";
    ProxyHeader h = complete(header + kHttp);
    EXPECT_EQ(h.consumed, header.size());
    EXPECT_EQ(text_of(h.source), "192.0.2.10");
    // A second header right behind the first is the request's business, not this one's.
    h = complete(header + "PROXY TCP4 6.6.6.6 6.6.6.6 1 1\r\n");
    EXPECT_EQ(h.consumed, header.size());
    EXPECT_EQ(text_of(h.source), "192.0.2.10");
}

TEST(ProxyProtocolV1, BadPortsAreInvalid) {
    for (const char* ports : {"65536 80", "80 65536", "99999 80", "080 80", "80 00", "-1 80", "+1 80", "1a 80",
                              "0x10 80", "80 ", "123456 80"}) {
        std::string in = std::string("PROXY TCP4 1.2.3.4 5.6.7.8 ") + ports + "\r\n";
        expect_invalid(in, ports);
    }
}

TEST(ProxyProtocolV1, BadAddressesAndProtocolsAreInvalid) {
    expect_invalid("PROXY TCP4 2001:db8::1 5.6.7.8 1 2\r\n", "IPv6 source on TCP4");
    expect_invalid("PROXY TCP4 1.2.3.4 2001:db8::1 1 2\r\n", "IPv6 destination on TCP4");
    expect_invalid("PROXY TCP6 1.2.3.4 2001:db8::1 1 2\r\n", "IPv4 source on TCP6");
    expect_invalid("PROXY TCP4 1.2.3 5.6.7.8 1 2\r\n", "three-part IPv4");
    expect_invalid("PROXY TCP4 256.2.3.4 5.6.7.8 1 2\r\n", "octet > 255");
    expect_invalid("PROXY TCP4 localhost 5.6.7.8 1 2\r\n", "a name");
    expect_invalid("PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n", "TCP5");
    expect_invalid("PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n", "UDP4");
    expect_invalid("PROXY tcp4 1.2.3.4 5.6.7.8 1 2\r\n", "lower-case protocol");
    expect_invalid("proxy TCP4 1.2.3.4 5.6.7.8 1 2\r\n", "lower-case PROXY");
    expect_invalid("PROXY \r\n", "no protocol");
    expect_invalid("PROXY TCP4\r\n", "no addresses");
    expect_invalid("PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n", "no destination port");
    expect_invalid("PROXY TCP4 1.2.3.4 5.6.7.8\r\n", "no ports");
    expect_invalid("PROXY  TCP4 1.2.3.4 5.6.7.8 1 2\r\n", "two spaces");
    expect_invalid("PROXY TCP4 1.2.3.4  5.6.7.8 1 2\r\n", "two spaces between addresses");
    expect_invalid("PROXY TCP4 1.2.3.4\t5.6.7.8 1 2\r\n", "a tab");
}

TEST(ProxyProtocolV1, JunkAfterTheFieldsIsInvalid) {
    expect_invalid("PROXY TCP4 1.2.3.4 5.6.7.8 1 2 extra\r\n", "a sixth field");
    expect_invalid("PROXY TCP6 2001:db8::1 2001:db8::2 1 2 3\r\n", "a seventh field");
    expect_invalid("PROXY TCP4 1.2.3.4 5.6.7.8 1 2x\r\n", "junk glued to the port");
}

TEST(ProxyProtocolV1, TrailingSpaceBeforeCrlfIsInvalid) {
    // Fields are separated by single spaces and the destination port is followed by
    // CRLF, nothing else: a space there is junk.
    expect_invalid("PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n", "a trailing space");
    expect_invalid("PROXY TCP6 2001:db8::1 2001:db8::2 1 2 \r\n", "a trailing space after TCP6");
}

TEST(ProxyProtocolV1, WithoutCrlfWithin107BytesIsInvalid) {
    std::string line = "PROXY UNKNOWN " + std::string(91, 'a');  // 105 bytes, no CRLF yet
    ASSERT_EQ(line.size(), 105u);
    EXPECT_EQ(parse_proxy_header(line).status, S::Incomplete);
    EXPECT_EQ(parse_proxy_header(line + "a").status, S::Incomplete);   // 106: a CRLF can still fit
    EXPECT_EQ(parse_proxy_header(line + "\r").status, S::Incomplete);  // 106: the LF would be the 107th byte
    EXPECT_EQ(complete(line + "\r\n").consumed, 107u);
    expect_invalid(line + "aa", "107 bytes without CRLF");
    expect_invalid(line + "a\r", "107 bytes ending in CR: the LF would be the 108th");
    expect_invalid(line + "a\r\n", "a 108-byte line");
    expect_invalid(line + "aaaa\r\n", "a 111-byte line");
    expect_invalid(std::string("PROXY TCP4 ") + std::string(200, '1'), "200 bytes of digits");
}

TEST(ProxyProtocolV1, NulInsideAFieldIsInvalid) {
    // The field is the whole text between the spaces, not the part before a NUL.
    expect_invalid(std::string("PROXY TCP4 192.0.2.1\0junk 198.51.100.1 1 2\r\n", 44), "NUL in the source");
    expect_invalid(std::string("PROXY TCP4 192.0.2.1 198.51.100.1\0 1 2\r\n", 40), "NUL after the destination");
    expect_invalid(std::string("PROXY TCP6 ::f ::f\0: 0 0\r\n", 26), "NUL in a TCP6 destination (found by fuzz_proxy_protocol)");
}

TEST(ProxyProtocolV1, BareLfOrNulIsInvalidNotAWait) {
    expect_invalid("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n", "LF without CR");
    expect_invalid(std::string("PROXY TCP4 1.2.3.4\0", 19), "NUL before the end");
    expect_invalid("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n\r\n", "LF then CRLF");
}

// --- version 2 ---------------------------------------------------------------------

TEST(ProxyProtocolV2, Ipv4ProxyGivesTheSource) {
    std::string in = v2(0x21, 0x11, inet_block(AF_INET, "203.0.113.7", "10.0.0.1", 40000, 80));
    ASSERT_EQ(in.size(), 28u);
    ProxyHeader h = complete(in);
    EXPECT_EQ(h.consumed, 28u);
    ASSERT_TRUE(h.has_source);
    EXPECT_EQ(h.source.family, AF_INET);
    EXPECT_EQ(text_of(h.source), "203.0.113.7");
    EXPECT_EQ(h.source.port, 40000);
    EXPECT_FALSE(h.ssl);
}

TEST(ProxyProtocolV2, Ipv6ProxyGivesTheSource) {
    std::string in = v2(0x21, 0x21, inet_block(AF_INET6, "2001:db8::7", "2001:db8::80", 40001, 443));
    ASSERT_EQ(in.size(), 52u);
    ProxyHeader h = complete(in + kHttp);
    EXPECT_EQ(h.consumed, 52u);
    ASSERT_TRUE(h.has_source);
    EXPECT_EQ(h.source.family, AF_INET6);
    EXPECT_EQ(text_of(h.source), "2001:db8::7");
    EXPECT_EQ(h.source.port, 40001);
}

TEST(ProxyProtocolV2, UdpTransportStillNamesTheSource) {
    ProxyHeader h = complete(v2(0x21, 0x12, inet_block(AF_INET, "203.0.113.9", "10.0.0.1", 53, 53)));
    ASSERT_TRUE(h.has_source);
    EXPECT_EQ(text_of(h.source), "203.0.113.9");
}

TEST(ProxyProtocolV2, SslTlvWithClientSslBitSetsSsl) {
    std::string in = v2(0x21, 0x11, inet_block(AF_INET, "203.0.113.8", "10.0.0.1", 1, 443) + ssl_tlv(0x01));
    ProxyHeader h = complete(in + kHttp);
    EXPECT_EQ(h.consumed, in.size());
    EXPECT_TRUE(h.ssl);
    EXPECT_EQ(text_of(h.source), "203.0.113.8");
    // Other bits (cert in connection, cert in session) alongside: still TLS.
    EXPECT_TRUE(complete(v2(0x21, 0x11, inet_block(AF_INET, "1.2.3.4", "5.6.7.8", 1, 2) + ssl_tlv(0x07))).ssl);
    // With its sub-TLVs (PP2_SUBTYPE_SSL_VERSION "TLSv1.3") and after other TLVs (ALPN, authority, NOOP).
    std::string tlvs = tlv(0x01, "h2") + tlv(0x02, "example.com") + tlv(0x04, "") + ssl_tlv(0x01, tlv(0x21, "TLSv1.3"));
    h = complete(v2(0x21, 0x21, inet_block(AF_INET6, "2001:db8::9", "2001:db8::1", 9, 443) + tlvs));
    EXPECT_TRUE(h.ssl);
    EXPECT_EQ(text_of(h.source), "2001:db8::9");
}

TEST(ProxyProtocolV2, SslTlvWithoutTheClientBitIsNotSsl) {
    EXPECT_FALSE(complete(v2(0x21, 0x11, inet_block(AF_INET, "1.2.3.4", "5.6.7.8", 1, 2) + ssl_tlv(0x00))).ssl);
    EXPECT_FALSE(complete(v2(0x21, 0x11, inet_block(AF_INET, "1.2.3.4", "5.6.7.8", 1, 2) + ssl_tlv(0x06))).ssl);
    // Other TLVs say nothing about TLS.
    EXPECT_FALSE(complete(v2(0x21, 0x11, inet_block(AF_INET, "1.2.3.4", "5.6.7.8", 1, 2) + tlv(0x01, "h2"))).ssl);
}

TEST(ProxyProtocolV2, LocalKeepsThePeer) {
    ProxyHeader h = complete(v2(0x20, 0x00, "") + kHttp);
    EXPECT_EQ(h.consumed, 16u);
    EXPECT_FALSE(h.has_source);
    EXPECT_TRUE(h.local);  // the balancer's own connection
    EXPECT_FALSE(h.ssl);
    // Addresses and TLVs in a LOCAL header are to be ignored.
    std::string local = v2(0x20, 0x11, inet_block(AF_INET, "6.6.6.6", "10.0.0.1", 5, 80) + ssl_tlv(0x01));
    h = complete(local + kHttp);
    EXPECT_EQ(h.consumed, local.size());
    EXPECT_FALSE(h.has_source);
    EXPECT_FALSE(h.ssl);
}

TEST(ProxyProtocolV2, LocalIgnoresTheFamilyByte) {
    // "the receiver must accept this connection as valid and must use the real
    // connection endpoints and discard the protocol block including the family".
    ProxyHeader h = complete(v2(0x20, 0x11, "") + kHttp);
    EXPECT_EQ(h.consumed, 16u);
    EXPECT_FALSE(h.has_source);
    h = complete(v2(0x20, 0x21, inet_block(AF_INET, "6.6.6.6", "10.0.0.1", 5, 80)));
    EXPECT_EQ(h.consumed, 28u);
    EXPECT_FALSE(h.has_source);
}

TEST(ProxyProtocolV2, UndefinedFamilyTransportPairsAreInvalid) {
    // Only 0x00, 0x11, 0x12, 0x21, 0x22, 0x31, 0x32 are defined; "other values ...
    // must be rejected as invalid by receivers".
    for (uint8_t fam : {0x01, 0x02, 0x10, 0x13, 0x1f, 0x20, 0x23, 0x30, 0x33})
        expect_invalid(v2(0x21, fam, std::string(216, '\0')), ("family/transport byte " + std::to_string(fam)).c_str());
}

TEST(ProxyProtocolV2, UnspecifiedAndUnixFamiliesKeepThePeer) {
    ProxyHeader h = complete(v2(0x21, 0x00, ""));
    EXPECT_EQ(h.consumed, 16u);
    EXPECT_FALSE(h.has_source);
    std::string unix_block(216, '\0');
    unix_block.replace(0, 9, "/tmp/a.sk");
    h = complete(v2(0x21, 0x31, unix_block) + kHttp);
    EXPECT_EQ(h.consumed, 16u + 216u);
    EXPECT_FALSE(h.has_source);
    // TLVs after a unix block are read past its 216 bytes.
    EXPECT_TRUE(complete(v2(0x21, 0x31, unix_block + ssl_tlv(0x01))).ssl);
}

TEST(ProxyProtocolV2, ConsumedCoversTlvsAndLeavesTheRequest) {
    std::string header = v2(0x21, 0x11, inet_block(AF_INET, "203.0.113.7", "10.0.0.1", 40000, 80) +
                                            tlv(0x04, std::string(1000, '\0')) + tlv(0x05, "id"));
    ASSERT_EQ(header.size(), 16u + 12u + 1003u + 5u);
    ProxyHeader h = complete(header + kHttp);
    EXPECT_EQ(h.consumed, header.size());
    EXPECT_EQ(text_of(h.source), "203.0.113.7");
    // Trailing bytes that look like a v2 header are the request's, not parsed here.
    h = complete(header + v2(0x21, 0x11, inet_block(AF_INET, "6.6.6.6", "6.6.6.6", 1, 1)));
    EXPECT_EQ(h.consumed, header.size());
    EXPECT_EQ(text_of(h.source), "203.0.113.7");
}

TEST(ProxyProtocolV2, WrongSignatureIsInvalid) {
    std::string good = v2(0x21, 0x11, inet_block(AF_INET, "1.2.3.4", "5.6.7.8", 1, 2));
    for (size_t i = 0; i < 12; ++i) {
        std::string bad = good;
        bad[i] ^= 0x20;
        expect_invalid(bad, ("signature byte " + std::to_string(i) + " changed").c_str());
    }
    expect_invalid(kHttp, "a plain HTTP request");
    expect_invalid("\r\n\r\nGET", "CRLF CRLF then text");
    expect_invalid(std::string("\r\n\r\n\0\r\nQUIT\r", 12), "last signature byte wrong");
    expect_invalid("\x16\x03\x01\x02\x00", "a TLS ClientHello");
}

TEST(ProxyProtocolV2, VersionOtherThanTwoIsInvalid) {
    std::string block = inet_block(AF_INET, "1.2.3.4", "5.6.7.8", 1, 2);
    for (uint8_t ver : {0x0, 0x1, 0x3, 0xf}) {
        expect_invalid(v2(static_cast<uint8_t>(ver << 4 | 1), 0x11, block), ("version " + std::to_string(ver)).c_str());
        // Decided from the 16-byte fixed part: no need to wait for the body.
        expect_invalid(v2(static_cast<uint8_t>(ver << 4 | 1), 0x11, block).substr(0, 16), "version, fixed part only");
    }
}

TEST(ProxyProtocolV2, CommandAboveOneIsInvalid) {
    std::string block = inet_block(AF_INET, "1.2.3.4", "5.6.7.8", 1, 2);
    for (uint8_t cmd = 2; cmd < 16; ++cmd)
        expect_invalid(v2(static_cast<uint8_t>(0x20 | cmd), 0x11, block), ("command " + std::to_string(cmd)).c_str());
}

TEST(ProxyProtocolV2, UnknownFamilyIsInvalid) {
    for (uint8_t fam : {0x41, 0x51, 0xf1})
        expect_invalid(v2(0x21, fam, std::string(216, '\0')), ("family byte " + std::to_string(fam)).c_str());
}

TEST(ProxyProtocolV2, LengthShorterThanTheAddressesIsInvalid) {
    expect_invalid(v2(0x21, 0x11, std::string(11, '\1')), "AF_INET with 11 bytes");
    expect_invalid(v2(0x21, 0x21, inet_block(AF_INET, "1.2.3.4", "5.6.7.8", 1, 2)), "AF_INET6 with 12 bytes");
    expect_invalid(v2(0x21, 0x31, std::string(215, '\0')), "AF_UNIX with 215 bytes");
}

TEST(ProxyProtocolV2, TruncatedTlvIsInvalid) {
    std::string block = inet_block(AF_INET, "1.2.3.4", "5.6.7.8", 1, 2);
    expect_invalid(v2(0x21, 0x11, block + "\x20"), "one byte of a TLV");
    expect_invalid(v2(0x21, 0x11, block + std::string("\x20\x00", 2)), "two bytes of a TLV");
    expect_invalid(v2(0x21, 0x11, block + "\x20" + be16(5) + "\x01\x00"), "a TLV longer than the header");
    expect_invalid(v2(0x21, 0x11, block + ssl_tlv(0x01) + "\x04" + be16(1)), "a good TLV, then a cut one");
    expect_invalid(v2(0x21, 0x11, block + "\x04" + be16(0xffff)), "a TLV claiming 65535 bytes");
}

// --- both: arriving a byte at a time -------------------------------------------------

TEST(ProxyProtocol, EveryPrefixOfAValidHeaderIsIncomplete) {
    for (const std::string& header : valid_headers()) {
        for (size_t k = 0; k < header.size(); ++k) {
            ProxyHeader h = parse_proxy_header(std::string_view(header).substr(0, k));
            ASSERT_EQ(h.status, S::Incomplete) << "prefix of " << k << "/" << header.size() << " bytes of "
                                               << hex(header) << ": " << status_name(h.status);
        }
        ProxyHeader whole = complete(header);
        EXPECT_EQ(whole.consumed, header.size()) << hex(header);
        ProxyHeader more = complete(header + kHttp);
        EXPECT_EQ(more.consumed, header.size()) << hex(header);
        EXPECT_EQ(more.has_source, whole.has_source);
        EXPECT_EQ(more.ssl, whole.ssl);
        EXPECT_EQ(text_of(more.source), text_of(whole.source));
    }
}

TEST(ProxyProtocol, ShortNonHeadersAreInvalidAtTheFirstWrongByte) {
    EXPECT_EQ(parse_proxy_header("").status, S::Incomplete);
    EXPECT_EQ(parse_proxy_header("PROX").status, S::Incomplete);
    expect_invalid("G", "one byte of GET");
    expect_invalid("PROXX", "PROXX");
    expect_invalid("PROXY\r\n", "PROXY without a space");
    expect_invalid("\r\n\r\n\x01", "a v2 signature gone wrong at byte 4");
}

TEST(ProxyProtocol, HowTheBytesAreSplitDoesNotChangeTheOutcome) {
    // A header the parser accepts whole must not be refused when it arrives in two
    // reads: no prefix of a Complete input may be Invalid. (UNKNOWN lets the rest of
    // its line be anything, so these are Complete whole.)
    for (const std::string& in : {std::string("PROXY UNKNOWN a\nb\r\n"), std::string("PROXY UNKNOWN \0\r\n", 17)}) {
        ProxyHeader whole = parse_proxy_header(in);
        if (whole.status != S::Complete) continue;  // refusing them outright would be consistent too
        size_t k = 0;
        while (k < whole.consumed && parse_proxy_header(std::string_view(in).substr(0, k)).status != S::Invalid) ++k;
        EXPECT_EQ(k, whole.consumed) << "the first " << k << " bytes of " << hex(in)
                                     << " are Invalid, the whole is Complete";
    }
}
