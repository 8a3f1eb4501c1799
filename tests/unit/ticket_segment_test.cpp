// server::TicketSegment: the node's TLS session-ticket keys in shared memory. A worker
// that adopts the segment and then exits (a reload's old generation, a recycled
// prefork worker, a failed start) leaves the keys as they were for everyone else:
// the segment is one mapping shared by the whole node, so only its maker wipes it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "server/ticket_segment.hpp"

namespace {

using kiln::server::TicketSegment;

bool zero(const unsigned char* p, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (p[i]) return false;
    return true;
}

bool same(const kiln::net::TicketKey& a, const kiln::net::TicketKey& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(TicketSegment, AWorkerThatExitsLeavesTheNodesKeysAsTheyWere) {
    TicketSegment node;
    ASSERT_EQ(node.create(), "");
    kiln::net::TicketKeys before = node.read();
    ASSERT_FALSE(zero(before.current.aes, sizeof before.current.aes));
    {
        TicketSegment worker;  // as a worker finds it: the fd in KILN_TICKET_FD
        setenv(kiln::server::kEnvTicketFd, std::to_string(dup(node.fd())).c_str(), 1);
        ASSERT_TRUE(worker.adopt_from_env());
        EXPECT_TRUE(same(worker.read().current, before.current));
    }
    kiln::net::TicketKeys after = node.read();
    EXPECT_TRUE(same(after.current, before.current)) << "a worker's exit changed the node's current key";
    EXPECT_TRUE(same(after.previous, before.previous)) << "a worker's exit changed the node's previous key";
    EXPECT_FALSE(zero(after.current.name, sizeof after.current.name));
}

TEST(TicketSegment, RotationMovesTheCurrentKeyToPreviousForEveryReader) {
    TicketSegment node;
    ASSERT_EQ(node.create(), "");
    TicketSegment worker;
    setenv(kiln::server::kEnvTicketFd, std::to_string(dup(node.fd())).c_str(), 1);
    ASSERT_TRUE(worker.adopt_from_env());
    kiln::net::TicketKeys before = worker.read();
    node.rotate();
    kiln::net::TicketKeys after = worker.read();
    EXPECT_TRUE(same(after.previous, before.current));
    EXPECT_FALSE(same(after.current, before.current));
}

}  // namespace
