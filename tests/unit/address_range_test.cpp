// net::AddressRange: the address blocks of `proxy.trusted`, matched against peers;
// net::PeerAddress::counted: the client per-client limits count a peer as.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "net/peer.hpp"

using kiln::net::AddressRange;
using kiln::net::PeerAddress;

namespace {
PeerAddress peer(const char* text) {
    sockaddr_storage ss{};
    if (inet_pton(AF_INET, text, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr) == 1) {
        ss.ss_family = AF_INET;
    } else {
        EXPECT_EQ(inet_pton(AF_INET6, text, &reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr), 1) << text;
        ss.ss_family = AF_INET6;
    }
    return PeerAddress::from(reinterpret_cast<const sockaddr*>(&ss));
}

AddressRange range(const char* text) {
    AddressRange r;
    EXPECT_TRUE(AddressRange::parse(text, &r)) << text;
    return r;
}
}  // namespace

TEST(AddressRange, SingleAddressMatchesOnlyItself) {
    EXPECT_TRUE(range("10.1.2.3").contains(peer("10.1.2.3")));
    EXPECT_FALSE(range("10.1.2.3").contains(peer("10.1.2.4")));
    EXPECT_TRUE(range("::1").contains(peer("::1")));
    EXPECT_FALSE(range("::1").contains(peer("::2")));
}

TEST(AddressRange, PrefixesCoverTheirBlock) {
    AddressRange r = range("192.168.16.0/20");
    EXPECT_TRUE(r.contains(peer("192.168.16.1")));
    EXPECT_TRUE(r.contains(peer("192.168.31.255")));
    EXPECT_FALSE(r.contains(peer("192.168.32.0")));
    EXPECT_FALSE(r.contains(peer("192.168.15.255")));
    EXPECT_TRUE(range("0.0.0.0/0").contains(peer("8.8.8.8")));
    EXPECT_TRUE(range("fd00::/8").contains(peer("fd12:3456::1")));
    EXPECT_FALSE(range("fd00::/8").contains(peer("fe80::1")));
}

TEST(AddressRange, MappedIpv6PeerMatchesIpv4Blocks) {
    EXPECT_TRUE(range("127.0.0.0/8").contains(peer("::ffff:127.0.0.1")));
    EXPECT_FALSE(range("127.0.0.0/8").contains(peer("::ffff:10.0.0.1")));
    EXPECT_FALSE(range("::1").contains(peer("127.0.0.1")));
}

// Error paths -----------------------------------------------------------------

TEST(AddressRange, MalformedTextIsRefused) {
    AddressRange r;
    for (const char* bad : {"", "localhost", "10.0.0.0/", "10.0.0.0/33", "::/129", "10.0.0.0/8x", "1.2.3", "10.0.0.0/-1"})
        EXPECT_FALSE(AddressRange::parse(bad, &r)) << bad;
}

TEST(AddressRange, UnknownPeerMatchesNothing) {
    EXPECT_FALSE(range("0.0.0.0/0").contains(PeerAddress{}));
}

namespace {
std::string text(const PeerAddress& p) {
    char buf[64];
    return std::string(buf, p.format(buf, sizeof buf));
}
}  // namespace

TEST(PeerAddress, CountedIsTheIpv4AddressOrTheIpv6Slash64) {
    EXPECT_EQ(text(peer("192.0.2.7").counted()), "192.0.2.7");
    EXPECT_EQ(text(peer("2001:db8:1:2:aaaa:bbbb:cccc:dddd").counted()), "2001:db8:1:2::");
    EXPECT_EQ(text(peer("::1").counted()), "::");
    // A dual-stack listener's IPv4 peer is that IPv4 client, not the /64 all of them share.
    PeerAddress mapped = peer("::ffff:192.0.2.7").counted();
    EXPECT_EQ(mapped.family, AF_INET);
    EXPECT_EQ(text(mapped), "192.0.2.7");
    EXPECT_EQ(text(peer("::ffff:192.0.2.8").counted()), "192.0.2.8");
    EXPECT_EQ(PeerAddress{}.counted().family, 0);
    PeerAddress with_port = peer("192.0.2.7");
    with_port.port = 4711;
    EXPECT_EQ(with_port.counted().port, 0);
}
