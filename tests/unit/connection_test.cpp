// http::Connection and its event loop without a listening socket: the server end of
// a socketpair is handed to an http::Server on a loop thread of the test's own, with
// a fake Service, and the test speaks raw HTTP on the other end. Faster and more
// direct than the end-to-end tests (no process, no port), so framing, pipelining,
// timeouts and the connection's lifetime can be checked byte by byte.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "http/server.hpp"
#include "net/loop.hpp"

namespace kiln::http {
namespace {

// Answers "<METHOD> <path> <body bytes>"; /big answers 200 KiB (for backpressure).
// The engine alone: http's own messages, no kiln::App.
class EchoService final : public Service {
public:
    std::unique_ptr<RequestContext> new_context() override { return std::make_unique<RequestContext>(); }
    size_t prepare(RequestContext&, const Request&) override { return 1024; }
    void handle(RequestContext&, const Request& req, Response& res) override {
        ++handled;
        if (req.path() == "/big") return res.send(std::string(200 * 1024, 'b'), "text/plain");
        res.send(std::string(req.method_name()) + " " + std::string(req.path()) + " " +
                     std::to_string(req.body().size()),
                 "text/plain");
    }
    std::atomic<int> handled{0};
};

class Counter final : public Observer {
public:
    void on_response(const Record&) override { ++responses; }
    void on_open() override { ++open; }
    void on_close() override { ++closed; }
    std::atomic<int> responses{0}, open{0}, closed{0};
};

// The test's end of one socketpair: raw bytes out, responses and EOF in.
class Peer {
public:
    explicit Peer(int fd) : fd_(fd) {}
    Peer(Peer&& o) noexcept : fd_(std::exchange(o.fd_, -1)), buf_(std::move(o.buf_)), eof_(o.eof_) {}
    ~Peer() {
        if (fd_ >= 0) ::close(fd_);
    }

    void send(std::string_view bytes) const { ASSERT_EQ(::write(fd_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size())); }
    void shut_write() const { ::shutdown(fd_, SHUT_WR); }

    // Reads until `n` complete responses (Content-Length framed) or EOF or timeout.
    std::string read_responses(int n, int timeout_ms = 2000) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        while (complete_responses() < n) {
            int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                             deadline - std::chrono::steady_clock::now()).count());
            if (left <= 0 || !read_some(left)) break;
        }
        return buf_;
    }
    // True when the server closed its end (EOF) within the time.
    bool sees_eof(int timeout_ms = 2000) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        while (!eof_) {
            int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                             deadline - std::chrono::steady_clock::now()).count());
            if (left <= 0 || !read_some(left)) break;
        }
        return eof_;
    }

private:
    bool read_some(int timeout_ms) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, timeout_ms) <= 0) return false;
        char tmp[65536];
        ssize_t n = ::read(fd_, tmp, sizeof tmp);
        if (n <= 0) {
            eof_ = true;
            return false;
        }
        buf_.append(tmp, static_cast<size_t>(n));
        return true;
    }
    int complete_responses() const {
        int count = 0;
        size_t at = 0;
        for (;;) {
            size_t end = buf_.find("\r\n\r\n", at);
            if (end == std::string::npos) return count;
            size_t cl = buf_.find("Content-Length: ", at);
            size_t len = cl != std::string::npos && cl < end ? std::stoul(buf_.substr(cl + 16)) : 0;
            if (buf_.size() < end + 4 + len) return count;
            ++count;
            at = end + 4 + len;
        }
    }

    int fd_;
    std::string buf_;
    bool eof_ = false;
};

// One loop thread serving the server ends of `peers` socketpairs (all on that one
// loop); the single-peer calls speak on the first.
class Engine {
public:
    explicit Engine(EngineConfig cfg = {}, int peers = 1) : cfg_(std::move(cfg)) {
        std::vector<int> server_ends;
        for (int i = 0; i < peers; ++i) {
            int fds[2];
            EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
            peers_.emplace_back(fds[1]);
            server_ends.push_back(fds[0]);
        }
        std::promise<net::Loop*> started;
        auto ready = started.get_future();
        thread_ = std::thread([this, server_ends, &started] {
            net::Loop loop;
            Server server(loop, service_, cfg_);
            server.set_observer(&counter_);
            for (int fd : server_ends) {
                fcntl_nonblock(fd);
                server.accept(fd);
            }
            started.set_value(&loop);
            loop.run();
            std::lock_guard<std::mutex> g(stopping_);  // stop() has returned: the loop may go
        });
        loop_ = ready.get();
    }
    ~Engine() {
        peers_.clear();
        {
            std::lock_guard<std::mutex> g(stopping_);
            loop_->stop();
        }
        thread_.join();
    }

    Peer& peer(size_t i) { return peers_.at(i); }
    void send(std::string_view bytes) { peer(0).send(bytes); }
    void shut_write() { peer(0).shut_write(); }
    std::string read_responses(int n, int timeout_ms = 2000) { return peer(0).read_responses(n, timeout_ms); }
    bool sees_eof(int timeout_ms = 2000) { return peer(0).sees_eof(timeout_ms); }
    Counter& counter() { return counter_; }
    int handled() const { return service_.handled.load(); }

private:
    static void fcntl_nonblock(int fd) {
        int fl = ::fcntl(fd, F_GETFL);
        ::fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    }

    EngineConfig cfg_;
    EchoService service_;
    Counter counter_;
    std::thread thread_;
    std::mutex stopping_;
    net::Loop* loop_ = nullptr;
    std::vector<Peer> peers_;
};

int count_of(const std::string& s, std::string_view what) {
    int n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
}

}  // namespace

TEST(Connection, AnswersARequestAndKeepsTheConnectionOpen) {
    Engine e;
    e.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string out = e.read_responses(1);
    EXPECT_EQ(out.substr(0, 17), "HTTP/1.1 200 OK\r\n");
    EXPECT_NE(out.find("\r\n\r\nGET /a 0"), std::string::npos) << out;
    e.send("GET /b HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_NE(e.read_responses(2).find("GET /b 0"), std::string::npos);
    EXPECT_EQ(e.counter().open.load(), 1);
}

TEST(Connection, PipelinedRequestsAreAnsweredInOrder) {
    Engine e;
    e.send("GET /1 HTTP/1.1\r\nHost: x\r\n\r\nPOST /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
           "GET /3 HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string out = e.read_responses(3);
    size_t a = out.find("GET /1 0"), b = out.find("POST /2 3"), c = out.find("GET /3 0");
    ASSERT_NE(c, std::string::npos) << out;
    EXPECT_LT(a, b);
    EXPECT_LT(b, c);
}

TEST(Connection, ARequestSplitAtEveryByteIsOneRequest) {
    Engine e;
    std::string req = "POST /split HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
    for (char ch : req) {
        e.send(std::string_view(&ch, 1));
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    std::string out = e.read_responses(1);
    EXPECT_NE(out.find("POST /split 5"), std::string::npos) << out;
    EXPECT_EQ(count_of(out, "HTTP/1.1 "), 1);
}

TEST(Connection, ResponsesLargerThanTheSocketBufferArriveWhole) {
    Engine e;
    e.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string out = e.read_responses(2, 5000);
    EXPECT_NE(out.find(std::string(200 * 1024, 'b')), std::string::npos);
    EXPECT_NE(out.find("GET /after 0"), std::string::npos);
}

TEST(Connection, ClientClosingAfterItsRequestStillGetsTheAnswer) {
    Engine e;
    e.send("GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    e.shut_write();
    std::string out = e.read_responses(1);
    EXPECT_NE(out.find("Connection: close"), std::string::npos) << out;
    EXPECT_TRUE(e.sees_eof());
    for (int i = 0; i < 100 && e.counter().closed.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(e.counter().closed.load(), 1);
}

TEST(Connection, AfterItsRequestBudgetAConnectionIsClosedCleanly) {
    EngineConfig cfg;
    cfg.max_requests_per_connection = 3;
    Engine e(cfg);
    e.send("GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n"
           "GET /3 HTTP/1.1\r\nHost: x\r\n\r\nGET /4 HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string out = e.read_responses(4);
    EXPECT_EQ(count_of(out, "HTTP/1.1 200"), 3) << out;
    EXPECT_EQ(count_of(out, "Connection: close"), 1);
    EXPECT_NE(out.find("GET /3 0"), std::string::npos);
    EXPECT_EQ(out.find("/4"), std::string::npos) << "the request after the budget is not answered";
    EXPECT_TRUE(e.sees_eof());
}

TEST(Connection, AnIdleConnectionServesItsNextRequestAndClosesOnlyAfterTheKeepAliveTimeout) {
    EngineConfig cfg;
    cfg.keepalive_timeout_ms = 300;
    Engine e(cfg);
    e.send("GET /1 HTTP/1.1\r\nHost: x\r\n\r\n");
    ASSERT_NE(e.read_responses(1).find("GET /1 0"), std::string::npos);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // idle, well inside the timeout
    e.send("GET /2 HTTP/1.1\r\nHost: x\r\n\r\n");
    ASSERT_NE(e.read_responses(2).find("GET /2 0"), std::string::npos);
    auto idle_since = std::chrono::steady_clock::now();
    EXPECT_TRUE(e.sees_eof(3000));
    EXPECT_GE(std::chrono::steady_clock::now() - idle_since, std::chrono::milliseconds(200));
    for (int i = 0; i < 100 && e.counter().closed.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(e.counter().closed.load(), 1);
}

TEST(Connection, ConnectionsWaitingMidRequestKeepTheirOwnBytesWhileOthersComeAndGo) {
    // Four connections on one loop: three stop mid-request (body, head, chunked body)
    // while the fourth is answered again and again; then each completes its own.
    Engine e({}, 4);
    e.peer(0).send("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello");
    e.peer(1).send("GET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nHo");
    e.peer(2).send("POST /d HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
    ASSERT_NE(e.peer(1).read_responses(1).find("GET /b 0"), std::string::npos);
    for (int i = 0; i < 3; ++i) {
        e.peer(3).send("GET /e HTTP/1.1\r\nHost: x\r\n\r\nGET /f HTTP/1.1\r\nHost: x\r\n\r\n");
        std::string out = e.peer(3).read_responses(2 * (i + 1));
        ASSERT_EQ(count_of(out, "GET /f 0"), i + 1) << out;
    }
    e.peer(0).send("world");
    e.peer(2).send("4\r\ndefg\r\n0\r\n\r\n");
    e.peer(1).send("st: x\r\n\r\n");
    std::string a = e.peer(0).read_responses(1), b = e.peer(1).read_responses(2), d = e.peer(2).read_responses(1);
    EXPECT_NE(a.find("POST /a 10"), std::string::npos) << a;
    EXPECT_EQ(count_of(a, "HTTP/1.1 "), 1) << a;
    EXPECT_NE(b.find("GET /c 0"), std::string::npos) << b;
    EXPECT_EQ(count_of(b, "HTTP/1.1 "), 2) << b;
    EXPECT_NE(d.find("POST /d 7"), std::string::npos) << d;
    EXPECT_EQ(count_of(d, "HTTP/1.1 "), 1) << d;
    EXPECT_EQ(e.handled(), 10);
}

// Error paths -----------------------------------------------------------------

TEST(Connection, MalformedHeadIsA400AndTheConnectionCloses) {
    Engine e;
    e.send("GET /x HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\nGET /never HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string out = e.read_responses(2);
    EXPECT_EQ(out.substr(0, 12), "HTTP/1.1 400");
    EXPECT_NE(out.find("\r\nContent-Type: text/plain; charset=utf-8\r\n"), std::string::npos) << out;
    EXPECT_NE(out.find("\r\nX-Content-Type-Options: nosniff\r\n"), std::string::npos) << out;
    EXPECT_EQ(out.find("/never"), std::string::npos);
    EXPECT_TRUE(e.sees_eof());
}

TEST(Connection, BodyOverTheRouteLimitIsA413BeforeItIsRead) {
    Engine e;  // EchoService allows 1024 bytes
    e.send("POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n");
    std::string out = e.read_responses(1);
    EXPECT_EQ(out.substr(0, 12), "HTTP/1.1 413") << out;
    EXPECT_TRUE(e.sees_eof());
}

TEST(Connection, AStalledHeadGets408AfterTheHeaderTimeout) {
    EngineConfig cfg;
    cfg.header_timeout_ms = 100;
    Engine e(cfg);
    e.send("GET /slow HTTP/1.1\r\nHo");
    auto start = std::chrono::steady_clock::now();
    std::string out = e.read_responses(1, 3000);
    auto waited = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(out.substr(0, 12), "HTTP/1.1 408") << out;
    EXPECT_GE(waited, std::chrono::milliseconds(50));
    EXPECT_TRUE(e.sees_eof());
}

TEST(Connection, AConnectionThatNeverSendsAByteIsClosedAfterTheHeaderTimeout) {
    EngineConfig cfg;
    cfg.header_timeout_ms = 100;
    Engine e(cfg);
    EXPECT_TRUE(e.sees_eof(3000));
    EXPECT_EQ(e.read_responses(1, 0), "") << "nothing was asked, nothing is answered";
    for (int i = 0; i < 100 && e.counter().closed.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(e.counter().closed.load(), 1);
}

TEST(Connection, PeerVanishingMidBodyReleasesTheConnection) {
    Engine e;
    e.send("POST /cut HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly part");
    e.shut_write();
    for (int i = 0; i < 200 && e.counter().closed.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(e.counter().closed.load(), 1);
    EXPECT_EQ(e.handled(), 0) << "an unfinished body reaches no handler";
}

}  // namespace kiln::http
