// http::serialize_head and net::OutputQueue: the bytes a response puts on the wire;
// http::Response's checks on what a handler puts in it.
#include "http/serializer.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace kiln::http {
namespace {

std::string drain(net::OutputQueue& q, net::BufferPool& pool) {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    size_t written = 0;
    EXPECT_EQ(q.write_to(sv[0], pool, &written), net::OutputQueue::Status::Done);
    std::string out(written, '\0');
    size_t got = 0;
    while (got < written) got += static_cast<size_t>(read(sv[1], out.data() + got, written - got));
    close(sv[0]);
    close(sv[1]);
    return out;
}

HeadParams params() {
    HeadParams p;
    p.date = "Sun, 06 Nov 1994 08:49:37 GMT";
    p.server = "kiln";
    return p;
}

TEST(Serializer, WritesStatusServerDateTypeLength) {
    net::BufferPool pool;
    net::OutputQueue q;
    Response res;
    res.reset(nullptr);
    res.send("Hello", "text/plain; charset=utf-8");
    HeadParams p = params();
    p.content_length = 5;
    serialize_head(res, p, q, pool);
    EXPECT_EQ(drain(q, pool),
              "HTTP/1.1 200 OK\r\nServer: kiln\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
              "Content-Type: text/plain; charset=utf-8\r\nContent-Length: 5\r\n\r\n");
}

TEST(Serializer, ConnectionHeaderFollowsKeepAliveAndVersion) {
    net::BufferPool pool;
    net::OutputQueue q;
    Response res;
    res.reset(nullptr);
    HeadParams p = params();
    p.keep_alive = false;
    serialize_head(res, p, q, pool);
    EXPECT_NE(drain(q, pool).find("Connection: close\r\n"), std::string::npos);
    p.keep_alive = true;
    p.http10 = true;
    serialize_head(res, p, q, pool);
    EXPECT_NE(drain(q, pool).find("Connection: keep-alive\r\n"), std::string::npos);
}

TEST(Serializer, ChunkedAndNoBodyFraming) {
    net::BufferPool pool;
    net::OutputQueue q;
    Response res;
    res.reset(nullptr);
    res.status(304);
    HeadParams p = params();
    p.framing = Framing::NoBody;
    serialize_head(res, p, q, pool);
    std::string s = drain(q, pool);
    EXPECT_EQ(s.find("Content-Length"), std::string::npos);
    EXPECT_EQ(s.rfind("HTTP/1.1 304 Not Modified\r\n", 0), 0u);
    p.framing = Framing::Chunked;
    serialize_head(res, p, q, pool);
    EXPECT_NE(drain(q, pool).find("Transfer-Encoding: chunked\r\n"), std::string::npos);
}

TEST(Serializer, UserHeadersInOrderAndUserServerWins) {
    net::BufferPool pool;
    net::OutputQueue q;
    Response res;
    res.reset(nullptr);
    res.header("X-A", "1");
    res.header("Server", "mine");
    res.add_header("Set-Cookie", "a=1");
    res.add_header("Set-Cookie", "b=2");
    serialize_head(res, params(), q, pool);
    std::string s = drain(q, pool);
    EXPECT_EQ(s.find("Server: kiln"), std::string::npos);
    EXPECT_LT(s.find("X-A: 1"), s.find("Set-Cookie: a=1"));
    EXPECT_LT(s.find("Set-Cookie: a=1"), s.find("Set-Cookie: b=2"));
}

TEST(OutputQueue, KeepsOrderAcrossCopiedAndOwnedSegments) {
    net::BufferPool pool;
    net::OutputQueue q;
    q.append("head1|", pool);
    q.append_owned(std::string(100000, 'x'));
    q.append("|head2", pool);
    EXPECT_EQ(q.size(), 6u + 100000u + 6u);
    std::string s = drain(q, pool);
    EXPECT_EQ(s.size(), 100012u);
    EXPECT_EQ(s.substr(0, 6), "head1|");
    EXPECT_EQ(s.substr(s.size() - 6), "|head2");
    EXPECT_TRUE(q.empty());
}

// A regular file as the destination never blocks, so every stop short of Done is the
// queue yielding its turn: each call sends at most its share (plus what one write
// took), whatever the source, and the bytes come out whole and in order.
TEST(OutputQueue, EachCallSendsAtMostItsShareThenYields) {
    constexpr size_t kShare = net::OutputQueue::kWriteShare;
    char src_path[] = "/tmp/kiln-output-src-XXXXXX";
    char dst_path[] = "/tmp/kiln-output-dst-XXXXXX";
    int src = mkstemp(src_path);
    int dst = mkstemp(dst_path);
    ASSERT_GE(src, 0);
    ASSERT_GE(dst, 0);
    unlink(src_path);
    unlink(dst_path);
    std::string file(3 * kShare + 12345, '\0');
    for (size_t i = 0; i < file.size(); ++i) file[i] = static_cast<char>('a' + i % 26);
    ASSERT_EQ(pwrite(src, file.data(), file.size(), 0), static_cast<ssize_t>(file.size()));

    net::BufferPool pool;
    net::OutputQueue q;
    q.append("head|", pool);
    q.append_file(src, 100, file.size() - 100);  // the queue owns src now
    q.append_owned(std::string(kShare + 7, 'z'));
    size_t total = q.size();
    size_t sent = 0;
    int calls = 0;
    net::OutputQueue::Status st = net::OutputQueue::Status::Yield;
    while (st == net::OutputQueue::Status::Yield && calls < 100) {
        size_t written = 0;
        st = q.write_to(dst, pool, &written);
        ++calls;
        EXPECT_LE(written, kShare + kShare + 7) << "call " << calls;
        if (st == net::OutputQueue::Status::Yield) {
            EXPECT_GE(written, kShare) << "yielded before its share, call " << calls;
        }
        sent += written;
    }
    EXPECT_EQ(st, net::OutputQueue::Status::Done);
    EXPECT_EQ(sent, total);
    EXPECT_GE(calls, 4);
    EXPECT_TRUE(q.empty());
    std::string out(total, '\0');
    ASSERT_EQ(pread(dst, out.data(), total, 0), static_cast<ssize_t>(total));
    EXPECT_EQ(out.substr(0, 5), "head|");
    EXPECT_TRUE(out.compare(5, file.size() - 100, file, 100, file.size() - 100) == 0);
    EXPECT_EQ(out.substr(5 + file.size() - 100), std::string(kShare + 7, 'z'));
    close(dst);
}

// --- error paths ---

TEST(ResponseErrors, HeaderInjectionIsRefused) {
    Response res;
    res.reset(nullptr);
    EXPECT_THROW(res.header("X-A", "1\r\nSet-Cookie: evil=1"), std::invalid_argument);
    EXPECT_THROW(res.header("X A", "1"), std::invalid_argument);
    EXPECT_THROW(res.header("Content-Length", "5"), std::invalid_argument);
    EXPECT_THROW(res.status(42), std::invalid_argument);
}

// Security finding 9: send() and file() took a content type with CR/LF unchecked.
TEST(ResponseErrors, ContentTypeInjectionIsRefusedByEveryWayIn) {
    Response res;
    res.reset(nullptr);
    EXPECT_THROW(res.send("x", "text/html\r\nSet-Cookie: evil=1"), std::invalid_argument);
    EXPECT_THROW(res.send("x", std::string_view("text/html\0x", 11)), std::invalid_argument);
    int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    EXPECT_THROW(res.file(fd, 0, 0, "text/plain\nX-Evil: 1"), std::invalid_argument);
    EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "the refused file's descriptor is closed, not leaked";
    EXPECT_FALSE(res.header("X-Evil"));
    EXPECT_NE(res.header("Content-Type").value_or(""), "text/plain\nX-Evil: 1");
}

}  // namespace
}  // namespace kiln::http
