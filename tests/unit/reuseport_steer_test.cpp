// net::steer_reuseport on a real SO_REUSEPORT group of four sockets on 127.0.0.1:
// steered to two of them, every new connection lands on one of those two (and each
// gets some); steered to none or all, the kernel spreads them over all four again.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include "net/listener.hpp"
#include "net/reuseport_steer.hpp"

namespace {

constexpr int kConnections = 200;

struct Group {
    std::vector<int> fds;
    uint16_t port = 0;
    explicit Group(size_t n) {
        for (size_t i = 0; i < n; ++i) {
            kiln::net::ListenResult l = kiln::net::listen_tcp("127.0.0.1", port, 1024, true);
            EXPECT_GE(l.fd, 0) << l.error;
            if (l.fd < 0) return;
            fds.push_back(l.fd);
            if (port == 0) {
                sockaddr_in a{};
                socklen_t len = sizeof a;
                ::getsockname(l.fd, reinterpret_cast<sockaddr*>(&a), &len);
                port = ntohs(a.sin_port);
            }
        }
    }
    ~Group() {
        for (int fd : fds) ::close(fd);
    }
    // Connects kConnections times; how many each socket of the group took.
    std::vector<int> spread() {
        std::vector<int> clients;
        for (int i = 0; i < kConnections; ++i) {
            int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_port = htons(port);
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            EXPECT_EQ(::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
            clients.push_back(c);
        }
        std::vector<int> took(fds.size());
        for (size_t i = 0; i < fds.size(); ++i)
            for (int c; (c = ::accept4(fds[i], nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) {  // (non-blocking)
                ++took[i];
                ::close(c);
            }
        for (int c : clients) ::close(c);
        return took;
    }
};

TEST(ReuseportSteer, NewConnectionsGoOnlyToTheSocketsNamed) {
    Group g(4);
    ASSERT_EQ(g.fds.size(), 4u);
    ASSERT_EQ(kiln::net::steer_reuseport(g.fds[0], {1, 3}, 4), "");
    std::vector<int> took = g.spread();
    EXPECT_EQ(took[0], 0);
    EXPECT_EQ(took[2], 0);
    EXPECT_GT(took[1], 0);
    EXPECT_GT(took[3], 0);
    EXPECT_EQ(took[1] + took[3], kConnections);
    // One left: all to it (set through another socket of the group: it is the group's).
    ASSERT_EQ(kiln::net::steer_reuseport(g.fds[2], {2}, 4), "");
    took = g.spread();
    EXPECT_EQ(took[2], kConnections);
}

TEST(ReuseportSteer, NoneOrAllIsTheKernelsOwnSpread) {
    Group g(4);
    ASSERT_EQ(g.fds.size(), 4u);
    for (const std::vector<unsigned>& accepting : {std::vector<unsigned>{0}, std::vector<unsigned>{},
                                                   std::vector<unsigned>{0}, std::vector<unsigned>{0, 1, 2, 3}}) {
        ASSERT_EQ(kiln::net::steer_reuseport(g.fds[0], accepting, 4), "");
        std::vector<int> took = g.spread();
        int sum = 0;
        for (size_t i = 0; i < took.size(); ++i) {
            sum += took[i];
            if (accepting.size() == 1) EXPECT_EQ(took[i], i == 0 ? kConnections : 0);
            else EXPECT_GT(took[i], 0) << "socket " << i << " took none";  // (3/4)^200 by chance
        }
        EXPECT_EQ(sum, kConnections);
    }
}

}  // namespace
