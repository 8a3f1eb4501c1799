// http::RateTable (limits.rate): a burst passes, then one request per interval;
// the refusal says how long to wait; addresses have buckets of their own; a full
// table lets requests through rather than refusing innocent clients, and counts it.
// http::AddressCounts (limits.max_connections_per_address) beside it: both count an
// IPv6 client by its /64 and a dual-stack listener's IPv4 client by its IPv4 address.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <cstring>
#include <vector>

#include "http/address_counts.hpp"
#include "http/rate_table.hpp"
#include "util/siphash.hpp"

namespace {

kiln::net::PeerAddress v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
    kiln::net::PeerAddress p;
    p.family = AF_INET;
    p.addr[0] = a;
    p.addr[1] = b;
    p.addr[2] = c;
    p.addr[3] = d;
    return p;
}

kiln::net::PeerAddress v6(const char* text) {
    kiln::net::PeerAddress p;
    p.family = AF_INET6;
    EXPECT_EQ(inet_pton(AF_INET6, text, p.addr), 1) << text;
    return p;
}

struct Table {
    explicit Table(size_t slots) : memory(kiln::http::RateTable::bytes_for(slots) / 8 + 1, 0) {
        kiln::http::RateTable::format(memory.data(), slots);
        t = kiln::http::RateTable::attach(memory.data(), memory.size() * 8);
    }
    std::vector<uint64_t> memory;
    kiln::http::RateTable* t;
};

constexpr uint64_t kSecond = 1'000'000;

}  // namespace

TEST(RateTable, ABurstPassesThenOnePerIntervalAndRefusalsSayWhen) {
    Table tb(1024);
    ASSERT_NE(tb.t, nullptr);
    auto client = v4(10, 0, 0, 1);
    uint64_t now = 1000 * kSecond;
    for (int i = 0; i < 5; ++i) EXPECT_TRUE(tb.t->take(client, now, 5, 5).allowed) << i;
    auto refused = tb.t->take(client, now, 5, 5);
    EXPECT_FALSE(refused.allowed);
    EXPECT_EQ(refused.retry_after_s, 1u);
    EXPECT_FALSE(tb.t->take(client, now + kSecond / 10, 5, 5).allowed);  // 100 ms: not yet
    EXPECT_TRUE(tb.t->take(client, now + kSecond / 5, 5, 5).allowed);    // 200 ms: one more
    EXPECT_FALSE(tb.t->take(client, now + kSecond / 5, 5, 5).allowed);
    EXPECT_TRUE(tb.t->take(v4(10, 0, 0, 2), now, 5, 5).allowed);  // another address: its own bucket
    // A second of quiet refills five.
    uint64_t later = now + 2 * kSecond;
    for (int i = 0; i < 5; ++i) EXPECT_TRUE(tb.t->take(client, later, 5, 5).allowed) << i;
    EXPECT_FALSE(tb.t->take(client, later, 5, 5).allowed);
    // A slow rate says how long in whole seconds (rounded up).
    auto slow = v4(10, 0, 0, 3);
    EXPECT_TRUE(tb.t->take(slow, now, 0.1, 1).allowed);
    EXPECT_EQ(tb.t->take(slow, now, 0.1, 1).retry_after_s, 10u);
}

TEST(RateTable, AFullTableLetsRequestsThroughAndCountsThem) {
    Table tb(64);
    uint64_t now = 5 * kSecond;
    int refused = 0;
    for (int round = 0; round < 3; ++round)
        for (int a = 0; a < 200; ++a) refused += !tb.t->take(v4(10, 1, 0, static_cast<uint8_t>(a)), now, 1, 1).allowed;
    EXPECT_GT(tb.t->overflows(), 0u);  // 200 active addresses, 64 slots
    EXPECT_LE(refused, 2 * 64);        // only tracked addresses were ever refused
    // Refilled buckets free their slots for others.
    for (int a = 0; a < 64; ++a) EXPECT_TRUE(tb.t->take(v4(10, 2, 0, static_cast<uint8_t>(a)), now + 10 * kSecond, 1, 1).allowed);
}

// A client whose bucket sits past another's in its probe window kept it only until that
// other bucket refilled: then the client's next request claimed the freed slot with a
// full burst. Two slots, so one of the two is each client's first probe.
TEST(RateTable, AClientKeepsItsBucketWhenASlotBeforeItFreesUp) {
    constexpr uint64_t kInterval = kSecond / 10;  // 10 a second, bursts of 3
    int refused_late = 0;
    for (uint8_t x = 1; x <= 16; ++x) {
        Table tb(2);
        ASSERT_NE(tb.t, nullptr);
        ASSERT_TRUE(tb.t->take(v4(192, 0, 2, 1), 0, 10, 3).allowed);  // Y: one request, full again at 1 interval
        for (int i = 0; i < 3; ++i) ASSERT_TRUE(tb.t->take(v4(198, 51, 100, x), kInterval / 2, 10, 3).allowed) << int(x);
        EXPECT_FALSE(tb.t->take(v4(198, 51, 100, x), kInterval / 2, 10, 3).allowed) << int(x);
        // Y's bucket is full again; X's still has half an interval to wait.
        if (!tb.t->take(v4(198, 51, 100, x), kInterval, 10, 3).allowed) ++refused_late;
    }
    EXPECT_EQ(refused_late, 16);
}

TEST(RateTable, ARateNearZeroOrAHugeBurstDoesNotOverflow) {
    Table tb(1024);
    ASSERT_NE(tb.t, nullptr);
    EXPECT_TRUE(tb.t->take(v4(192, 0, 2, 1), kSecond, 1e-300, 1).allowed);
    auto d = tb.t->take(v4(192, 0, 2, 1), kSecond, 1e-300, 1);
    EXPECT_FALSE(d.allowed);
    EXPECT_GT(d.retry_after_s, 1'000'000u);
    EXPECT_TRUE(tb.t->take(v4(192, 0, 2, 2), kSecond, 1e-7, 16'777'216).allowed);
    EXPECT_TRUE(tb.t->take(v4(192, 0, 2, 2), kSecond, 1e-7, 16'777'216).allowed);  // the burst holds
}

TEST(RateTable, AttachRefusesWhatIsNotATable) {
    std::vector<uint64_t> junk(64, 7);
    EXPECT_EQ(kiln::http::RateTable::attach(junk.data(), junk.size() * 8), nullptr);
}

TEST(RateTable, AnIpv6ClientIsOneBucketForItsSlash64) {
    Table tb(1024);
    uint64_t now = 1000 * kSecond;
    // Three addresses of one /64 share a burst of three.
    EXPECT_TRUE(tb.t->take(v6("2001:db8:1:2::1"), now, 1, 3).allowed);
    EXPECT_TRUE(tb.t->take(v6("2001:db8:1:2::2"), now, 1, 3).allowed);
    EXPECT_TRUE(tb.t->take(v6("2001:db8:1:2:ffff:ffff:ffff:ffff"), now, 1, 3).allowed);
    EXPECT_FALSE(tb.t->take(v6("2001:db8:1:2::4"), now, 1, 3).allowed);
    EXPECT_TRUE(tb.t->take(v6("2001:db8:1:3::1"), now, 1, 3).allowed);  // the next /64
    // Dual-stack: ::ffff:10.0.0.9 is 10.0.0.9, and ::ffff:10.0.0.10 another client.
    EXPECT_TRUE(tb.t->take(v4(10, 0, 0, 9), now, 1, 1).allowed);
    EXPECT_FALSE(tb.t->take(v6("::ffff:10.0.0.9"), now, 1, 1).allowed);
    EXPECT_TRUE(tb.t->take(v6("::ffff:10.0.0.10"), now, 1, 1).allowed);
}

// The slots an address probes follow the table's own random key: addresses chosen
// to crowd one table's probe window are spread out in another's. Which of 200
// addresses a 64-slot table tracks (a second request at once is refused) differs.
TEST(RateTable, WhichAddressesShareSlotsDependsOnTheTablesKey) {
    auto tracked = [](Table& tb) {
        std::vector<int> out;
        for (int a = 0; a < 200; ++a) tb.t->take(v4(10, 3, 0, static_cast<uint8_t>(a)), kSecond, 1, 1);
        for (int a = 0; a < 200; ++a)
            if (!tb.t->take(v4(10, 3, 0, static_cast<uint8_t>(a)), kSecond, 1, 1).allowed) out.push_back(a);
        return out;
    };
    Table one(64), two(64);
    std::vector<int> a = tracked(one), b = tracked(two);
    EXPECT_GE(a.size(), 32u);
    EXPECT_GE(b.size(), 32u);
    EXPECT_NE(a, b);
}

// The reference vectors of SipHash-2-4 (key 00 01 .. 0f, message 00 01 .. n-1).
TEST(SipHash, MatchesTheReferenceVectors) {
    kiln::util::SipKey key{0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
    unsigned char msg[16];
    for (int i = 0; i < 16; ++i) msg[i] = static_cast<unsigned char>(i);
    EXPECT_EQ(kiln::util::siphash24(key, msg, 0), 0x726fdb47dd0e0e31ull);
    EXPECT_EQ(kiln::util::siphash24(key, msg, 8), 0x93f5f5799a932462ull);
    EXPECT_EQ(kiln::util::siphash24(key, msg, 15), 0xa129ca6149be45e5ull);
}

TEST(AddressCounts, CountsAnIpv6ClientByItsSlash64AndAMappedOneAsIpv4) {
    kiln::http::AddressCounts counts;
    EXPECT_TRUE(counts.add(v6("2001:db8:1:2::1"), 2));
    EXPECT_TRUE(counts.add(v6("2001:db8:1:2::2"), 2));
    EXPECT_FALSE(counts.add(v6("2001:db8:1:2::3"), 2));  // a third connection from the /64
    EXPECT_TRUE(counts.add(v6("2001:db8:1:3::1"), 2));
    EXPECT_EQ(counts.addresses(), 2u);
    counts.remove(v6("2001:db8:1:2::1"));  // closing any of them frees one
    EXPECT_TRUE(counts.add(v6("2001:db8:1:2::3"), 2));

    EXPECT_TRUE(counts.add(v4(10, 0, 0, 9), 1));
    EXPECT_FALSE(counts.add(v6("::ffff:10.0.0.9"), 1));
    EXPECT_TRUE(counts.add(v6("::ffff:10.0.0.10"), 1));
    counts.remove(v6("::ffff:10.0.0.9"));
    EXPECT_TRUE(counts.add(v4(10, 0, 0, 9), 1));
}
