// net::ProcessBus between two of its slots in one process: a burst larger than the
// kernel's datagram queue (net.unix.max_dgram_qlen, 10 by default) arrives whole and
// in order once the receiver reads (before, all but the first ten were dropped); a
// free slot is passed over; a peer that does not read holds at most
// kMaxPendingBytes, then its datagrams are dropped and counted, and the sender
// never blocks.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "net/process_bus.hpp"

using kiln::net::ProcessBus;
using namespace std::chrono_literals;

namespace {

uint64_t fresh_node() {  // a name no other test run binds
    return (static_cast<uint64_t>(getpid()) << 20) ^ std::random_device{}();
}

struct Received {
    std::mutex mu;
    std::vector<std::string> got;
    size_t size() {
        std::lock_guard<std::mutex> lock(mu);
        return got.size();
    }
};

bool wait_for(Received& r, size_t n) {
    for (auto until = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < until;) {
        if (r.size() >= n) return true;
        std::this_thread::sleep_for(5ms);
    }
    return r.size() >= n;
}

}  // namespace

TEST(ProcessBus, ABurstPastTheKernelsQueueArrivesWholeAndInOrder) {
    std::string err;
    uint64_t node = fresh_node();
    auto a = ProcessBus::open(node, 0, 3, &err);  // slot 2 stays free
    auto b = ProcessBus::open(node, 1, 3, &err);
    ASSERT_TRUE(a && b) << err;
    a->start([](std::string_view) {});
    for (int i = 0; i < 500; ++i) ASSERT_TRUE(a->send_others("message " + std::to_string(i)));
    Received r;
    b->start([&](std::string_view d) {  // reading only now: the burst waited
        std::lock_guard<std::mutex> lock(r.mu);
        r.got.emplace_back(d);
    });
    ASSERT_TRUE(wait_for(r, 500)) << r.size() << " of 500 arrived";
    for (int i = 0; i < 500; ++i) EXPECT_EQ(r.got[static_cast<size_t>(i)], "message " + std::to_string(i));
    EXPECT_EQ(a->dropped(), 0u);
}

TEST(ProcessBus, APeerThatDoesNotReadHoldsAtMostTheBoundAndNeverBlocksTheSender) {
    std::string err;
    uint64_t node = fresh_node();
    auto a = ProcessBus::open(node, 0, 2, &err);
    auto late = ProcessBus::open(node, 1, 2, &err);  // bound, reading only at the end
    ASSERT_TRUE(a && late) << err;
    a->start([](std::string_view) {});
    const size_t size = 64 * 1024;
    const size_t n = ProcessBus::kMaxPendingBytes / size + 200;  // past what may wait
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < n; ++i) {
        std::string d = std::to_string(i) + ":";
        d.resize(size, 'x');
        a->send_others(d);
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
    size_t dropped = a->dropped();
    EXPECT_GT(dropped, 0u);
    // What was not dropped is the first of them, whole and in order: the kernel's
    // queue, then at most the bound's worth that waited (before, ten).
    Received r;
    late->start([&](std::string_view d) {
        std::lock_guard<std::mutex> lock(r.mu);
        r.got.emplace_back(d.substr(0, d.find(':')));
    });
    ASSERT_TRUE(wait_for(r, n - dropped)) << r.size() << " of " << n - dropped;
    EXPECT_GE(n - dropped, ProcessBus::kMaxPendingBytes / size);
    for (size_t i = 0; i < r.got.size(); ++i) EXPECT_EQ(r.got[i], std::to_string(i));
}
