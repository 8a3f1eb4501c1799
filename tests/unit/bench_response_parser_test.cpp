// Unit tests of kiln bench's response parser (tools/kiln/bench/response_parser.cpp):
// a response must parse the same whether it arrives in one read, split at any byte,
// or byte by byte; bodies framed by Content-Length, chunked coding or the close;
// then the error paths (malformed heads, bad lengths, bad chunk framing).
#include "bench/response_parser.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln::bench {
namespace {

using Step = ResponseParser::Step;

struct Parsed {
    Step last = Step::NeedMore;       // Done, Error, or NeedMore if input ran out
    ResponseError error = ResponseError::None;
    int status = 0;
    bool keep_alive = false;
    BodyFraming framing = BodyFraming::None;
    std::vector<std::string> cookies;  // copied at Step::Head
    std::string body;
    size_t consumed = 0;               // bytes of the wire used when Done
    int heads = 0;
};

// Feeds `wire` as a connection would: pieces cut at `cuts` are appended to a
// buffer; the parser is offered the unread bytes until it needs more.
Parsed parse_pieces(const std::string& wire, std::vector<size_t> cuts, bool head_request = false,
                    bool eof_at_end = false) {
    Parsed p;
    ResponseParser parser;
    parser.reset(head_request);
    std::string buf;
    size_t begin = 0;
    size_t consumed_before = 0;  // wire bytes consumed and erased from buf
    cuts.push_back(wire.size());
    size_t prev = 0;
    for (size_t cut : cuts) {
        if (cut < prev || cut > wire.size()) continue;
        buf.append(wire, prev, cut - prev);
        prev = cut;
        for (;;) {
            size_t used = 0;
            Step s = parser.feed(buf.data() + begin, buf.size() - begin, &used, &p.body);
            EXPECT_LE(used, buf.size() - begin);
            begin += used;
            if (s == Step::Head) {
                ++p.heads;
                const ResponseHead& h = parser.head();
                p.status = h.status;
                p.keep_alive = h.keep_alive;
                p.framing = h.framing;
                for (size_t i = 0; i < h.set_cookie_count; ++i) p.cookies.emplace_back(h.set_cookies[i]);
                continue;
            }
            p.last = s;
            if (s == Step::Error) {
                p.error = parser.error();
                return p;
            }
            if (s == Step::Done) {
                p.consumed = consumed_before + begin;
                return p;
            }
            break;  // NeedMore
        }
        // Like the connection: drop the consumed bytes before reading more.
        consumed_before += begin;
        buf.erase(0, begin);
        begin = 0;
    }
    if (eof_at_end && parser.finish_at_eof()) {
        p.last = Step::Done;
        p.consumed = wire.size();
    }
    return p;
}

Parsed parse_once(const std::string& wire, bool head_request = false) { return parse_pieces(wire, {}, head_request); }

Parsed parse_bytewise(const std::string& wire) {
    std::vector<size_t> cuts;
    for (size_t i = 1; i < wire.size(); ++i) cuts.push_back(i);
    return parse_pieces(wire, cuts);
}

void expect_same(const Parsed& a, const Parsed& b, const std::string& what) {
    EXPECT_EQ(a.last, b.last) << what;
    EXPECT_EQ(a.error, b.error) << what;
    EXPECT_EQ(a.status, b.status) << what;
    EXPECT_EQ(a.keep_alive, b.keep_alive) << what;
    EXPECT_EQ(a.cookies, b.cookies) << what;
    EXPECT_EQ(a.body, b.body) << what;
    EXPECT_EQ(a.consumed, b.consumed) << what;
}

// Parses in one piece, byte by byte, and split in two at every byte; all must agree.
Parsed parse_all_ways(const std::string& wire) {
    Parsed whole = parse_once(wire);
    expect_same(whole, parse_bytewise(wire), "byte by byte");
    for (size_t cut = 1; cut < wire.size(); ++cut) expect_same(whole, parse_pieces(wire, {cut}), "split at " + std::to_string(cut));
    return whole;
}

// ---------------------------------------------------------------- Content-Length

TEST(BenchResponseLength, BodyOfContentLengthAtEverySplit) {
    std::string wire = "HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, World!";
    Parsed p = parse_all_ways(wire);
    EXPECT_EQ(p.last, Step::Done);
    EXPECT_EQ(p.status, 200);
    EXPECT_TRUE(p.keep_alive);
    EXPECT_EQ(p.framing, BodyFraming::Length);
    EXPECT_EQ(p.body, "Hello, World!");
    EXPECT_EQ(p.consumed, wire.size());
    EXPECT_EQ(p.heads, 1);
}

TEST(BenchResponseLength, StopsAtTheEndOfTheMessage) {
    std::string first = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    Parsed p = parse_once(first + "HTTP/1.1 200 OK\r\n");
    EXPECT_EQ(p.last, Step::Done);
    EXPECT_EQ(p.consumed, first.size());
}

TEST(BenchResponseLength, ZeroLengthIsCompleteAfterTheHead) {
    Parsed p = parse_all_ways("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    EXPECT_EQ(p.last, Step::Done);
    EXPECT_EQ(p.body, "");
}

TEST(BenchResponseLength, IncompleteBodyNeedsMore) {
    Parsed p = parse_once("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345");
    EXPECT_EQ(p.last, Step::NeedMore);
    EXPECT_EQ(p.body, "12345");
    // The server closing now leaves it cut short.
    Parsed eof = parse_pieces("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345", {}, false, true);
    EXPECT_EQ(eof.last, Step::NeedMore);
}

TEST(BenchResponseLength, SameLengthTwiceIsAccepted) {
    Parsed p = parse_once("HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\nok");
    EXPECT_EQ(p.last, Step::Done);
    EXPECT_EQ(p.body, "ok");
}

// ---------------------------------------------------------------- chunked

TEST(BenchResponseChunked, DecodesAtEverySplit) {
    std::string wire =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5\r\nhello\r\n7;ext=\"a;b\"\r\n, world\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n";
    Parsed p = parse_all_ways(wire);
    EXPECT_EQ(p.last, Step::Done);
    EXPECT_EQ(p.framing, BodyFraming::Chunked);
    EXPECT_EQ(p.body, "hello, world0123456789");
    EXPECT_EQ(p.consumed, wire.size());
}

TEST(BenchResponseChunked, UppercaseHexAndEmptyBody) {
    Parsed p = parse_all_ways("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1F\r\n" +
                              std::string(31, 'x') + "\r\n0\r\n\r\n");
    EXPECT_EQ(p.body, std::string(31, 'x'));
    Parsed empty = parse_all_ways("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
    EXPECT_EQ(empty.last, Step::Done);
    EXPECT_EQ(empty.body, "");
}

TEST(BenchResponseChunked, GzipThenChunkedIsFramedByChunks) {
    Parsed p = parse_once("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n");
    EXPECT_EQ(p.last, Step::Done);
    EXPECT_EQ(p.body, "ab");
}

// ---------------------------------------------------------------- other framing

TEST(BenchResponseFraming, NoLengthMeansUntilCloseAndNoKeepAlive) {
    std::string wire = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome body";
    Parsed open = parse_once(wire);
    EXPECT_EQ(open.last, Step::NeedMore);
    EXPECT_FALSE(open.keep_alive);
    EXPECT_EQ(open.framing, BodyFraming::UntilClose);
    Parsed closed = parse_pieces(wire, {20}, false, true);
    EXPECT_EQ(closed.last, Step::Done);
    EXPECT_EQ(closed.body, "some body");
}

TEST(BenchResponseFraming, NoBodyFor204And304AndHead) {
    EXPECT_EQ(parse_once("HTTP/1.1 204 No Content\r\n\r\n").last, Step::Done);
    EXPECT_EQ(parse_once("HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n").last, Step::Done);
    Parsed head = parse_once("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", true);
    EXPECT_EQ(head.last, Step::Done);
    EXPECT_TRUE(head.keep_alive);
}

TEST(BenchResponseFraming, InterimResponsesAreSkipped) {
    std::string wire = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
                       "HTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx";
    Parsed p = parse_all_ways(wire);
    EXPECT_EQ(p.last, Step::Done);
    EXPECT_EQ(p.status, 201);
    EXPECT_EQ(p.heads, 1);
    EXPECT_EQ(p.body, "x");
}

TEST(BenchResponseFraming, ConnectionTokensAndVersions) {
    EXPECT_FALSE(parse_once("HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n").keep_alive);
    EXPECT_FALSE(parse_once("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").keep_alive);
    EXPECT_TRUE(parse_once("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n").keep_alive);
    EXPECT_FALSE(parse_once("HTTP/1.1 200 OK\r\nConnection: foo, close\r\nContent-Length: 0\r\n\r\n").keep_alive);
}

TEST(BenchResponseHead, EverySetCookieIsKept) {
    Parsed p = parse_all_ways("HTTP/1.1 200 OK\r\nSet-Cookie: a=1; Path=/\r\nContent-Length: 0\r\n"
                              "set-cookie:  sid=xyz; HttpOnly \r\n\r\n");
    ASSERT_EQ(p.cookies.size(), 2u);
    EXPECT_EQ(p.cookies[0], "a=1; Path=/");
    EXPECT_EQ(p.cookies[1], "sid=xyz; HttpOnly");
}

TEST(BenchResponseHead, StatusWithoutReasonAndOddStatuses) {
    EXPECT_EQ(parse_once("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n").status, 200);
    Parsed p = parse_once("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy");
    EXPECT_EQ(p.status, 503);
    EXPECT_EQ(p.body, "busy");
}

// ---------------------------------------------------------------- error paths

ResponseError error_of(const std::string& wire) {
    Parsed whole = parse_once(wire);
    Parsed bytes = parse_bytewise(wire);
    EXPECT_EQ(whole.last, Step::Error) << wire;
    EXPECT_EQ(whole.error, bytes.error) << wire;
    return whole.error;
}

TEST(BenchResponseErrors, BadStatusLines) {
    for (const char* w : {"HTTP/2.0 200 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n",
                          "HTTP/1.1 099 x\r\n\r\n", "http/1.1 200 OK\r\n\r\n", "HTTP/1.1 200 O\x01K\r\n\r\n",
                          "\r\nHTTP/1.1 200 OK\r\n\r\n", "SSH-2.0-OpenSSH\r\n\r\n", "HTTP/1.1  200 OK\r\n\r\n"})
        EXPECT_EQ(error_of(w), ResponseError::BadStatusLine) << w;
}

TEST(BenchResponseErrors, BadHeaders) {
    for (const char* w : {"HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", "HTTP/1.1 200 OK\r\n: empty\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "HTTP/1.1 200 OK\r\nName : x\r\n\r\n",
                          "HTTP/1.1 200 OK\r\n folded: x\r\n\r\n", "HTTP/1.1 200 OK\r\nA: b\x01\r\n\r\n"})
        EXPECT_EQ(error_of(w), ResponseError::BadHeader) << w;
}

TEST(BenchResponseErrors, BareLineFeed) {
    EXPECT_EQ(error_of("HTTP/1.1 200 OK\nContent-Length: 0\n\n"), ResponseError::BareLF);
    EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\nA: b\n\r\n"), ResponseError::BareLF);
}

TEST(BenchResponseErrors, BadContentLength) {
    for (const char* w : {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n",
                          "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 1, 1\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx"})
        EXPECT_EQ(error_of(w), ResponseError::BadContentLength) << w;
}

TEST(BenchResponseErrors, LengthWithChunked) {
    EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
              ResponseError::LengthWithChunked);
}

TEST(BenchResponseErrors, BadChunkFraming) {
    const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (const char* body : {"g\r\n", "\r\n", ";ext\r\n", "5\r\nhelloXX", "5\r\nhello\rX", "5\nhello\r\n",
                             "1234567890abcdef0\r\n", "5 x\nhello"})
        EXPECT_EQ(error_of(head + body), ResponseError::BadChunk) << body;
    EXPECT_EQ(error_of(head + "0\r\nTrailer: x\n\r\n"), ResponseError::BareLF);
    EXPECT_EQ(error_of(head + "0\r\n" + std::string(kMaxTrailerBytes + 1, 'x')), ResponseError::TrailerTooLarge);
}

TEST(BenchResponseErrors, SwitchingProtocolsIsNotExpected) {
    EXPECT_EQ(error_of("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"), ResponseError::Upgrade);
}

TEST(BenchResponseErrors, TruncatedChunkedBodyIsNotCompleteAtEof) {
    Parsed p = parse_pieces("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", {}, false, true);
    EXPECT_EQ(p.last, Step::NeedMore);
}

TEST(BenchResponseErrors, DescribeNamesEveryError) {
    for (int e = static_cast<int>(ResponseError::BadStatusLine); e <= static_cast<int>(ResponseError::Upgrade); ++e)
        EXPECT_NE(describe(static_cast<ResponseError>(e)), "unknown error");
}

}  // namespace
}  // namespace kiln::bench
