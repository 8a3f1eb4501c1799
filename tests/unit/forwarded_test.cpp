// http::forwarded_client and http::parse_node: who the client is behind trusted
// proxies (server.trusted_proxies). Forwarded (RFC 7239, for=) or, without it, every
// X-Forwarded-For line as one list is walked from its end; the first address that is
// not a trusted proxy is the client, so whatever the client itself wrote further left
// never counts. A malformed, obfuscated or "unknown" hop ends the walk: the last
// address found stands, or the peer when there was none.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "http/forwarded.hpp"

using kiln::Header;
using kiln::http::forwarded_client;
using kiln::http::parse_node;
using kiln::net::AddressRange;
using kiln::net::PeerAddress;

namespace {

PeerAddress addr(const char* text, uint16_t port = 0) {
    PeerAddress a;
    if (inet_pton(AF_INET, text, a.addr) == 1) {
        a.family = AF_INET;
    } else {
        EXPECT_EQ(inet_pton(AF_INET6, text, a.addr), 1) << text;
        a.family = AF_INET6;
    }
    a.port = port;
    return a;
}

std::string text_of(const PeerAddress& a) {
    char buf[64];
    return std::string(buf, a.format(buf, sizeof buf));
}

std::vector<AddressRange> ranges(std::initializer_list<const char*> list) {
    std::vector<AddressRange> out;
    for (const char* t : list) {
        AddressRange r;
        EXPECT_TRUE(AddressRange::parse(t, &r)) << t;
        out.push_back(r);
    }
    return out;
}

using Fields = std::vector<std::pair<std::string, std::string>>;

// The client for these header fields from `peer`, as text, reading X-Forwarded-For
// (client) or Forwarded (rfc_client).
std::string client_by(kiln::http::ForwardedField field, const Fields& fields, const char* peer,
                      std::initializer_list<const char*> trusted) {
    std::vector<Header> headers;
    for (const auto& [n, v] : fields) headers.push_back({n, v});
    return text_of(forwarded_client(headers, addr(peer), ranges(trusted), field));
}
std::string client(const Fields& fields, const char* peer = "127.0.0.1",
                   std::initializer_list<const char*> trusted = {"127.0.0.1"}) {
    return client_by(kiln::http::ForwardedField::XForwardedFor, fields, peer, trusted);
}
std::string rfc_client(const Fields& fields, const char* peer = "127.0.0.1",
                       std::initializer_list<const char*> trusted = {"127.0.0.1"}) {
    return client_by(kiln::http::ForwardedField::Forwarded, fields, peer, trusted);
}

}  // namespace

// --- X-Forwarded-For ----------------------------------------------------------------

TEST(ForwardedClient, NoFieldsGivesThePeer) {
    EXPECT_EQ(client({}), "127.0.0.1");
    EXPECT_EQ(client({{"Host", "x"}, {"X-Real-IP", "6.6.6.6"}}), "127.0.0.1");
}

TEST(ForwardedClient, OneXffAddressIsTheClient) {
    EXPECT_EQ(client({{"X-Forwarded-For", "203.0.113.9"}}), "203.0.113.9");
    EXPECT_EQ(client({{"x-forwarded-for", "203.0.113.9"}}), "203.0.113.9");  // names are case-insensitive
    EXPECT_EQ(client({{"X-Forwarded-For", "2001:db8::5"}}), "2001:db8::5");  // bare IPv6, as XFF writes it
}

TEST(ForwardedClient, ATrailingCommaIsNoHopButAnEmptyItemEndsTheWalk) {
    // Found by fuzz_forwarded when the walk was rewritten to go from the end.
    EXPECT_EQ(client({{"X-Forwarded-For", "203.0.113.9,"}}), "203.0.113.9");
    EXPECT_EQ(client({{"X-Forwarded-For", "6.6.6.6, 10.1.2.3,"}}, "127.0.0.1", {"127.0.0.1", "10.0.0.0/8"}), "6.6.6.6");
    EXPECT_EQ(client({{"X-Forwarded-For", "6.6.6.6,,203.0.113.9"}}), "203.0.113.9");
    EXPECT_EQ(client({{"X-Forwarded-For", "6.6.6.6, ,10.1.2.3"}}, "127.0.0.1", {"127.0.0.1", "10.0.0.0/8"}), "10.1.2.3");
    EXPECT_EQ(client({{"X-Forwarded-For", ","}}), "127.0.0.1");
}

TEST(ForwardedClient, SpoofedLeftmostEntriesAreIgnored) {
    // The client sent "X-Forwarded-For: 6.6.6.6"; our proxy appended what it saw.
    EXPECT_EQ(client({{"X-Forwarded-For", "6.6.6.6, 203.0.113.9"}}), "203.0.113.9");
    EXPECT_EQ(client({{"X-Forwarded-For", "1.1.1.1,2.2.2.2 ,  6.6.6.6,203.0.113.9"}}), "203.0.113.9");
    // Even when the spoofed entry claims to be a trusted proxy.
    EXPECT_EQ(client({{"X-Forwarded-For", "127.0.0.1, 203.0.113.9"}}), "203.0.113.9");
}

TEST(ForwardedClient, TrustedHopsAreSkippedFromTheEnd) {
    EXPECT_EQ(client({{"X-Forwarded-For", "6.6.6.6, 203.0.113.9, 10.1.2.3"}}, "127.0.0.1", {"127.0.0.1", "10.0.0.0/8"}),
              "203.0.113.9");
    EXPECT_EQ(client({{"X-Forwarded-For", "6.6.6.6, 203.0.113.9, 10.1.2.3, 10.9.9.9"}}, "10.0.0.1",
                     {"127.0.0.1", "10.0.0.0/8"}),
              "203.0.113.9");
    // Without 10/8 trusted, the nearest hop is the client.
    EXPECT_EQ(client({{"X-Forwarded-For", "6.6.6.6, 203.0.113.9, 10.1.2.3"}}), "10.1.2.3");
    // IPv6 proxies.
    EXPECT_EQ(client({{"X-Forwarded-For", "6.6.6.6, 2001:db8::77, fd00::1"}}, "::1", {"::1", "fd00::/8"}),
              "2001:db8::77");
}

TEST(ForwardedClient, AllTrustedChainGivesTheLeftmost) {
    EXPECT_EQ(client({{"X-Forwarded-For", "10.0.0.1, 10.0.0.2, 10.0.0.3"}}, "127.0.0.1", {"127.0.0.1", "10.0.0.0/8"}),
              "10.0.0.1");
    EXPECT_EQ(rfc_client({{"Forwarded", "for=10.0.0.1, for=10.0.0.2"}}, "127.0.0.1", {"127.0.0.1", "10.0.0.0/8"}),
              "10.0.0.1");
}

TEST(ForwardedClient, EveryXffLineIsOneList) {
    // Walked as "6.6.6.6, 203.0.113.9, 10.1.2.3": the nearest hop is in the last line.
    EXPECT_EQ(client({{"X-Forwarded-For", "6.6.6.6, 203.0.113.9"}, {"X-Forwarded-For", "10.1.2.3"}}, "127.0.0.1",
                     {"127.0.0.1", "10.0.0.0/8"}),
              "203.0.113.9");
    EXPECT_EQ(client({{"X-Forwarded-For", "1.1.1.1"}, {"Host", "x"}, {"x-forwarded-for", "2.2.2.2"}}), "2.2.2.2");
    EXPECT_EQ(client({{"X-Forwarded-For", "1.1.1.1"}, {"X-Forwarded-For", "10.0.0.7"}}, "127.0.0.1",
                     {"127.0.0.1", "10.0.0.0/8"}),
              "1.1.1.1");
}

TEST(ForwardedClient, UnknownOrMalformedStopsTheWalk) {
    // "unknown" from a proxy: the last good address before it stands.
    EXPECT_EQ(client({{"X-Forwarded-For", "203.0.113.9, unknown, 10.1.2.3"}}, "127.0.0.1", {"127.0.0.1", "10.0.0.0/8"}),
              "10.1.2.3");
    // Nothing good before it: the peer.
    EXPECT_EQ(client({{"X-Forwarded-For", "203.0.113.9, unknown"}}), "127.0.0.1");
    EXPECT_EQ(client({{"X-Forwarded-For", "203.0.113.9, garbage"}}), "127.0.0.1");
    EXPECT_EQ(client({{"X-Forwarded-For", "203.0.113.9, 1.2.3.4.5"}}), "127.0.0.1");
    EXPECT_EQ(client({{"X-Forwarded-For", "203.0.113.9, 300.1.1.1"}}), "127.0.0.1");
    EXPECT_EQ(client({{"X-Forwarded-For", "203.0.113.9,,"}}), "127.0.0.1");
    EXPECT_EQ(client({{"X-Forwarded-For", "203.0.113.9, example.com"}}), "127.0.0.1");
    EXPECT_EQ(client({{"X-Forwarded-For", ""}}), "127.0.0.1");
}

// --- Forwarded (RFC 7239) -----------------------------------------------------------

TEST(ForwardedClient, ForwardedForIsTheClient) {
    EXPECT_EQ(rfc_client({{"Forwarded", "for=203.0.113.9"}}), "203.0.113.9");
    EXPECT_EQ(rfc_client({{"forwarded", "For=203.0.113.9;proto=https"}}), "203.0.113.9");
    EXPECT_EQ(rfc_client({{"Forwarded", "proto=https; by=10.0.0.1; for=203.0.113.9"}}), "203.0.113.9");
    EXPECT_EQ(rfc_client({{"Forwarded", "for=\"203.0.113.9:4711\""}}), "203.0.113.9");
}

TEST(ForwardedClient, ForwardedQuotedIpv6WithPort) {
    std::vector<Header> headers{{"Forwarded", "for=\"[2001:db8::1]:4711\""}};
    PeerAddress c = forwarded_client(headers, addr("127.0.0.1"), ranges({"127.0.0.1"}),
                                     kiln::http::ForwardedField::Forwarded);
    EXPECT_EQ(c.family, AF_INET6);
    EXPECT_EQ(text_of(c), "2001:db8::1");
    EXPECT_EQ(c.port, 4711);
    EXPECT_EQ(rfc_client({{"Forwarded", "for=\"[2001:db8::1]\""}}), "2001:db8::1");
}

TEST(ForwardedClient, ForwardedSpoofedLeftmostIgnoredAndTrustedSkipped) {
    EXPECT_EQ(rfc_client({{"Forwarded", "for=6.6.6.6, for=203.0.113.9;proto=https, for=10.1.2.3"}}, "127.0.0.1",
                     {"127.0.0.1", "10.0.0.0/8"}),
              "203.0.113.9");
    // Two lines, one list.
    EXPECT_EQ(rfc_client({{"Forwarded", "for=6.6.6.6, for=203.0.113.9"}, {"Forwarded", "for=10.1.2.3"}}, "127.0.0.1",
                     {"127.0.0.1", "10.0.0.0/8"}),
              "203.0.113.9");
}

// Only the field the deployment names: a proxy that writes one passes a client's own
// copy of the other through (the reviewer's case: a client-written Forwarded behind
// nginx's X-Forwarded-For chose the client's address).
TEST(ForwardedClient, OnlyTheNamedFieldIsRead) {
    const Fields both{{"X-Forwarded-For", "198.51.100.1"}, {"Forwarded", "for=203.0.113.9"}};
    EXPECT_EQ(client(both), "198.51.100.1");
    EXPECT_EQ(rfc_client(both), "203.0.113.9");
    EXPECT_EQ(client({{"Forwarded", "for=203.0.113.9"}}), "127.0.0.1");
    EXPECT_EQ(rfc_client({{"X-Forwarded-For", "198.51.100.1"}}), "127.0.0.1");
    EXPECT_EQ(client({{"Forwarded", "for=unknown"}, {"X-Forwarded-For", "198.51.100.1"}}), "198.51.100.1");
}

TEST(ForwardedClient, ObfuscatedOrUnknownStopsTheWalk) {
    EXPECT_EQ(rfc_client({{"Forwarded", "for=_hidden"}}), "127.0.0.1");
    EXPECT_EQ(rfc_client({{"Forwarded", "for=unknown"}}), "127.0.0.1");
    EXPECT_EQ(rfc_client({{"Forwarded", "for=\"unknown\""}}), "127.0.0.1");
    // The spoofer's entry left of the obfuscated hop never counts.
    EXPECT_EQ(rfc_client({{"Forwarded", "for=203.0.113.9, for=_hidden"}}), "127.0.0.1");
    EXPECT_EQ(rfc_client({{"Forwarded", "for=6.6.6.6, for=_hidden, for=10.1.2.3"}}, "127.0.0.1",
                     {"127.0.0.1", "10.0.0.0/8"}),
              "10.1.2.3");
    // An element without for= is malformed for this purpose.
    EXPECT_EQ(rfc_client({{"Forwarded", "for=203.0.113.9, by=10.0.0.1;proto=https"}}), "127.0.0.1");
    EXPECT_EQ(rfc_client({{"Forwarded", "203.0.113.9"}}), "127.0.0.1");
}

TEST(ForwardedClient, AnIpv6PeerWithIpv6Proxies) {
    EXPECT_EQ(rfc_client({{"Forwarded", "for=\"[2001:db8::1]:4711\", for=\"[fd00::2]\""}}, "::1", {"::1", "fd00::/8"}),
              "2001:db8::1");
}

// --- parse_node ---------------------------------------------------------------------

TEST(ParseNode, AcceptsAddressesWithAndWithoutPorts) {
    struct Case {
        const char* in;
        const char* address;
        uint16_t port;
    };
    for (const Case& c : {Case{"1.2.3.4", "1.2.3.4", 0}, Case{"1.2.3.4:80", "1.2.3.4", 80},
                          Case{"[::1]", "::1", 0}, Case{"[::1]:80", "::1", 80},
                          Case{"[2001:db8::1]:4711", "2001:db8::1", 4711}, Case{"2001:db8::1", "2001:db8::1", 0},
                          Case{"\"1.2.3.4\"", "1.2.3.4", 0}, Case{"\"[2001:db8::1]:4711\"", "2001:db8::1", 4711},
                          Case{"255.255.255.255:65535", "255.255.255.255", 65535}}) {
        PeerAddress a;
        ASSERT_TRUE(parse_node(c.in, &a)) << c.in;
        EXPECT_EQ(text_of(a), c.address) << c.in;
        EXPECT_EQ(a.port, c.port) << c.in;
    }
}

TEST(ParseNode, RejectsEverythingElse) {
    for (const char* in : {"", "\"\"", "unknown", "_hidden", "\"_hidden\"", "example.com", "1.2.3", "1.2.3.4.5",
                           "256.1.1.1", "1.2.3.4:65536", "1.2.3.4:abc", "1.2.3.4:-1", "1.2.3.4:80:81", "[::1",
                           "[::1]x", "[::1]:http", "[2001:db8::1]:99999", "\"1.2.3.4", "1.2.3.4\"", "[]", "[]:80",
                           " 1.2.3.4", "[not-an-address]:80"}) {
        PeerAddress a;
        EXPECT_FALSE(parse_node(in, &a)) << "'" << in << "' gave " << text_of(a) << " port " << a.port;
    }
}
