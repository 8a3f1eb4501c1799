// Unit tests of the HTTP/1.1 request-head parser (src/http/parser.cpp).
// Valid forms first, then incremental feeding, then the head_may_be_complete
// pre-check, then the error paths: each asserts the exact ParseError and status.
#include "http/parser.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace kiln::http {
namespace {

std::string hdr(std::string_view name, std::string_view value) {
    return std::string(name) + ": " + std::string(value) + "\r\n";
}

// Owns the head (3 KiB) and the buffer it points into.
struct Parsed {
    std::string buf;
    std::unique_ptr<RequestHead> head = std::make_unique<RequestHead>();
    ParseResult r;
};

std::unique_ptr<Parsed> parse(std::string req, const Limits& limits = {}) {
    auto p = std::make_unique<Parsed>();
    p->buf = std::move(req);
    p->r = parse_request_head(p->buf, *p->head, limits);
    return p;
}

std::string field(const RequestHead& h, std::string_view name) {
    const Header* f = h.find(name);
    return f ? std::string(f->value) : std::string("<absent>");
}

// Asserts that `req` is rejected with exactly `err` and that it maps to `status`.
void expect_error(const std::string& req, ParseError err, int status, const Limits& limits = {}) {
    auto p = parse(req, limits);
    EXPECT_EQ(p->r.status, ParseStatus::Error) << describe(err);
    EXPECT_EQ(p->r.error, err) << "got: " << describe(p->r.error) << ", want: " << describe(err);
    EXPECT_EQ(status_for(p->r.error), status);
}

// ---------------------------------------------------------------- valid requests

TEST(ParserValid, GetWithHeadersYieldsFieldsInOrderAndConsumedCoversHead) {
    std::string head = "GET /index.html?a=1&b=2 HTTP/1.1\r\n"
                       "Host: example.com\r\n"
                       "User-Agent: test/1.0\r\n"
                       "Accept: */*\r\n"
                       "\r\n";
    auto p = parse(head + "BODYBYTES");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_EQ(p->r.consumed, head.size());
    const RequestHead& h = *p->head;
    EXPECT_EQ(h.method, Method::Get);
    EXPECT_EQ(h.method_token, "GET");
    EXPECT_EQ(h.target, "/index.html?a=1&b=2");
    EXPECT_EQ(h.path, "/index.html");
    EXPECT_EQ(h.query, "a=1&b=2");
    EXPECT_EQ(h.version_minor, 1);
    ASSERT_EQ(h.header_count, 3u);
    EXPECT_EQ(h.headers[0].name, "Host");
    EXPECT_EQ(h.headers[0].value, "example.com");
    EXPECT_EQ(h.headers[1].name, "User-Agent");
    EXPECT_EQ(h.headers[1].value, "test/1.0");
    EXPECT_EQ(h.headers[2].name, "Accept");
    EXPECT_EQ(h.headers[2].value, "*/*");
    EXPECT_EQ(h.host, "example.com");
    EXPECT_EQ(h.content_length, -1);
    EXPECT_FALSE(h.chunked);
    EXPECT_TRUE(h.keep_alive);
    EXPECT_FALSE(h.expect_continue);
    EXPECT_FALSE(h.upgrade);
}

TEST(ParserValid, FindIsCaseInsensitiveAndReturnsFirstField) {
    auto p = parse("GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nx-a: 2\r\n\r\n");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_EQ(field(*p->head, "X-A"), "1");
    EXPECT_EQ(field(*p->head, "x-A"), "1");
    EXPECT_EQ(p->head->find("x-b"), nullptr);
}

TEST(ParserValid, ExtensionMethodKeepsTokenAndMapsToOther) {
    auto p = parse("PROPFIND /dav HTTP/1.1\r\nHost: h\r\n\r\n");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_EQ(p->head->method, Method::Other);
    EXPECT_EQ(p->head->method_token, "PROPFIND");
    EXPECT_EQ(method_name(Method::Other), "");
    EXPECT_EQ(method_name(Method::Delete), "DELETE");
}

TEST(ParserValid, MethodFromRecognisesEveryStandardMethodCaseSensitively) {
    const std::pair<const char*, Method> known[] = {
        {"GET", Method::Get},         {"HEAD", Method::Head},   {"POST", Method::Post},
        {"PUT", Method::Put},         {"DELETE", Method::Delete}, {"PATCH", Method::Patch},
        {"OPTIONS", Method::Options}, {"CONNECT", Method::Connect}, {"TRACE", Method::Trace}};
    for (auto [name, m] : known) {
        EXPECT_EQ(method_from(name), m) << name;
        EXPECT_EQ(method_name(m), name);
    }
    EXPECT_EQ(method_from("get"), Method::Other);  // methods are case-sensitive (RFC 9110 §9.1)
    EXPECT_EQ(method_from("GETS"), Method::Other);
}

TEST(ParserValid, AbsoluteFormSetsHostPathAndQueryFromTarget) {
    auto p = parse("GET http://example.org:8080/a/b?x=1 HTTP/1.1\r\nHost: other\r\n\r\n");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_EQ(p->head->target, "http://example.org:8080/a/b?x=1");
    EXPECT_EQ(p->head->host, "example.org:8080");  // RFC 9112 §3.2.2: target authority wins
    EXPECT_EQ(p->head->path, "/a/b");
    EXPECT_EQ(p->head->query, "x=1");
}

TEST(ParserValid, AbsoluteFormWithoutPathGivesRootAndSchemeIsCaseInsensitive) {
    auto p = parse("GET HTTPS://example.org HTTP/1.1\r\nHost: example.org\r\n\r\n");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_EQ(p->head->host, "example.org");
    EXPECT_EQ(p->head->path, "/");
    EXPECT_EQ(p->head->query, "");

    auto q = parse("GET http://example.org?k=v HTTP/1.1\r\nHost: example.org\r\n\r\n");
    ASSERT_EQ(q->r.status, ParseStatus::Complete);
    EXPECT_EQ(q->head->path, "/");
    EXPECT_EQ(q->head->query, "k=v");
}

TEST(ParserValid, AsteriskFormAcceptedForOptions) {
    auto p = parse("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_EQ(p->head->method, Method::Options);
    EXPECT_EQ(p->head->path, "*");
    EXPECT_EQ(p->head->query, "");
}

TEST(ParserValid, AuthorityFormAcceptedForConnect) {
    auto p = parse("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_EQ(p->head->method, Method::Connect);
    EXPECT_EQ(p->head->target, "example.com:443");
    EXPECT_EQ(p->head->path, "");
    EXPECT_EQ(p->head->host, "example.com:443");
}

TEST(ParserValid, Http10DefaultsToCloseAndKeepAliveTokenKeeps) {
    auto p = parse("GET / HTTP/1.0\r\n\r\n");  // no Host needed on 1.0
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_EQ(p->head->version_minor, 0);
    EXPECT_FALSE(p->head->keep_alive);

    auto q = parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
    ASSERT_EQ(q->r.status, ParseStatus::Complete);
    EXPECT_TRUE(q->head->keep_alive);

    auto r = parse("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n");
    ASSERT_EQ(r->r.status, ParseStatus::Complete);
    EXPECT_FALSE(r->head->keep_alive);
}

TEST(ParserValid, Http11DefaultsToKeepAliveAndCloseTokenCloses) {
    auto p = parse("GET / HTTP/1.1\r\nHost: h\r\n\r\n");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_TRUE(p->head->keep_alive);

    auto q = parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: CLOSE\r\n\r\n");
    ASSERT_EQ(q->r.status, ParseStatus::Complete);
    EXPECT_FALSE(q->head->keep_alive);

    auto r = parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: foo,\tclose ,bar\r\n\r\n");
    ASSERT_EQ(r->r.status, ParseStatus::Complete);
    EXPECT_FALSE(r->head->keep_alive);
}

TEST(ParserValid, ConnectionUpgradeTokenSetsUpgrade) {
    auto p = parse("GET /ws HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_TRUE(p->head->upgrade);
    EXPECT_TRUE(p->head->keep_alive);
}

TEST(ParserValid, Expect100ContinueOnHttp11OnlyAndCaseInsensitive) {
    auto p = parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-Continue\r\n\r\n");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_TRUE(p->head->expect_continue);
    EXPECT_EQ(p->head->content_length, 5);

    // RFC 9110 §10.1.1: a server MUST ignore 100-continue in an HTTP/1.0 request.
    auto q = parse("POST / HTTP/1.0\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
    ASSERT_EQ(q->r.status, ParseStatus::Complete);
    EXPECT_FALSE(q->head->expect_continue);

    auto r = parse("POST / HTTP/1.1\r\nHost: h\r\nExpect: something-else\r\n\r\n");
    ASSERT_EQ(r->r.status, ParseStatus::Complete);
    EXPECT_FALSE(r->head->expect_continue);
}

TEST(ParserValid, OwsAroundValuesIsTrimmedButInnerWhitespaceKept) {
    auto p = parse("GET / HTTP/1.1\r\nHost:h\r\nX-A: \t a b \t \r\nX-Empty:\r\nX-Sp:   \r\n\r\n");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_EQ(field(*p->head, "Host"), "h");
    EXPECT_EQ(field(*p->head, "X-A"), "a b");
    EXPECT_EQ(field(*p->head, "X-Empty"), "");
    EXPECT_EQ(field(*p->head, "X-Sp"), "");
}

TEST(ParserValid, ObsTextInValueIsAccepted) {
    auto p = parse("GET / HTTP/1.1\r\nHost: h\r\nX-Name: caf\xc3\xa9\r\n\r\n");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_EQ(field(*p->head, "X-Name"), "caf\xc3\xa9");
}

TEST(ParserValid, LeadingEmptyLinesAreSkippedAndCounted) {
    std::string req = "\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n";
    auto p = parse(req);
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_EQ(p->r.consumed, req.size());
    EXPECT_EQ(p->head->target, "/");
}

TEST(ParserValid, ContentLengthParsedAndIdenticalDuplicatesAccepted) {
    auto p = parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0042\r\ncontent-length: 42\r\n\r\n");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_EQ(p->head->content_length, 42);

    auto q = parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 999999999999999999\r\n\r\n");  // 18 digits
    ASSERT_EQ(q->r.status, ParseStatus::Complete);
    EXPECT_EQ(q->head->content_length, 999999999999999999LL);
}

TEST(ParserValid, ChunkedTransferEncodingSetsChunkedAndCaseInsensitive) {
    auto p = parse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_TRUE(p->head->chunked);
    EXPECT_EQ(p->head->content_length, -1);

    // Empty list elements are allowed (RFC 9110 §5.6.1).
    auto q = parse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: , chunked ,\r\n\r\n");
    ASSERT_EQ(q->r.status, ParseStatus::Complete);
    EXPECT_TRUE(q->head->chunked);
}

TEST(ParserValid, EmptyHostIsAllowedOnHttp11) {
    // RFC 9110 §7.2: Host may be empty when the target URI has no authority.
    auto p = parse("GET / HTTP/1.1\r\nHost:\r\n\r\n");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_EQ(p->head->host, "");
}

TEST(ParserValid, HigherMinorVersionIsProcessedAsHttp11) {
    // RFC 9112 §2.3: a higher minor version of a known major SHOULD be processed as
    // the highest minor version implemented.
    auto p = parse("GET / HTTP/1.7\r\nHost: h\r\n\r\n");
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_EQ(p->head->version_minor, 1);
    EXPECT_TRUE(p->head->keep_alive);
}

TEST(ParserValid, ReusedHeadIsResetBetweenParses) {
    RequestHead h;
    std::string a = "POST http://a.example/x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
                    "Expect: 100-continue\r\nConnection: close, upgrade\r\n\r\n";
    ASSERT_EQ(parse_request_head(a, h).status, ParseStatus::Complete);
    std::string b = "GET /y HTTP/1.1\r\nHost: b\r\n\r\n";
    ASSERT_EQ(parse_request_head(b, h).status, ParseStatus::Complete);
    EXPECT_EQ(h.host, "b");
    EXPECT_EQ(h.path, "/y");
    EXPECT_FALSE(h.chunked);
    EXPECT_FALSE(h.expect_continue);
    EXPECT_FALSE(h.upgrade);
    EXPECT_TRUE(h.keep_alive);
    EXPECT_EQ(h.content_length, -1);
    EXPECT_EQ(h.header_count, 1u);
}

// ---------------------------------------------------------------- incremental input

// Every proper prefix must be Incomplete; the whole gives Complete with the same
// fields as a one-shot parse.
void expect_every_split_incomplete(const std::string& req) {
    RequestHead full;
    ParseResult fr = parse_request_head(req, full);
    ASSERT_EQ(fr.status, ParseStatus::Complete);
    ASSERT_EQ(fr.consumed, req.size());
    for (size_t n = 1; n < req.size(); ++n) {
        std::string prefix = req.substr(0, n);  // own allocation so ASan sees over-reads
        RequestHead h;
        ParseResult r = parse_request_head(prefix, h);
        ASSERT_EQ(r.status, ParseStatus::Incomplete) << "prefix length " << n << ": " << describe(r.error);
    }
    RequestHead again;
    ParseResult ar = parse_request_head(req, again);
    ASSERT_EQ(ar.status, ParseStatus::Complete);
    EXPECT_EQ(again.method_token, full.method_token);
    EXPECT_EQ(again.target, full.target);
    EXPECT_EQ(again.path, full.path);
    EXPECT_EQ(again.query, full.query);
    EXPECT_EQ(again.host, full.host);
    EXPECT_EQ(again.content_length, full.content_length);
    EXPECT_EQ(again.chunked, full.chunked);
    ASSERT_EQ(again.header_count, full.header_count);
    for (size_t i = 0; i < full.header_count; ++i) {
        EXPECT_EQ(again.headers[i].name, full.headers[i].name);
        EXPECT_EQ(again.headers[i].value, full.headers[i].value);
    }
}

TEST(ParserIncremental, EveryPrefixOfGetIsIncomplete) {
    expect_every_split_incomplete("\r\nGET /a/b?c=d HTTP/1.1\r\nHost: example.com\r\nX-Trim:  v  \r\n"
                                  "Accept: */*\r\n\r\n");
}

TEST(ParserIncremental, EveryPrefixOfPostWithLengthIsIncomplete) {
    expect_every_split_incomplete("POST http://h/p HTTP/1.0\r\nContent-Length: 12\r\nConnection: keep-alive\r\n\r\n");
}

TEST(ParserIncremental, SplitsAtEveryPointYieldSameHeadWhenFedInTwoBuffers) {
    // A server keeps appending to one buffer: prefixes then the whole must agree,
    // and the head must point into the latest buffer.
    std::string req = "PUT /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (size_t n = 1; n < req.size(); ++n) {
        std::string buf = req.substr(0, n);
        RequestHead h;
        ASSERT_EQ(parse_request_head(buf, h).status, ParseStatus::Incomplete) << n;
        buf += req.substr(n);
        ParseResult r = parse_request_head(buf, h);
        ASSERT_EQ(r.status, ParseStatus::Complete) << n;
        EXPECT_TRUE(h.chunked);
        EXPECT_EQ(h.target.data(), buf.data() + 4);
    }
}

TEST(ParserIncremental, EmptyBufferIsIncomplete) {
    RequestHead h;
    EXPECT_EQ(parse_request_head("", h).status, ParseStatus::Incomplete);
    EXPECT_EQ(parse_request_head("\r", h).status, ParseStatus::Incomplete);
    EXPECT_EQ(parse_request_head("\r\n", h).status, ParseStatus::Incomplete);
}

// ---------------------------------------------------------------- head_may_be_complete

TEST(HeadMayBeComplete, FirstCallAlwaysTrue) {
    EXPECT_TRUE(head_may_be_complete("", 0, Limits{}));
    EXPECT_TRUE(head_may_be_complete("GET", 0, Limits{}));
}

TEST(HeadMayBeComplete, FalseWhenNewBytesHoldNoLineEnd) {
    std::string buf = "GET /path HTTP/1.1\r\nHost: example";
    EXPECT_FALSE(head_may_be_complete(buf, buf.size() - 5, Limits{}));
}

TEST(HeadMayBeComplete, TrueWhenTerminatorSpansOldAndNewBytes) {
    std::string buf = "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
    // The previous read ended after "\r\n\r" : only "\n" is new.
    EXPECT_TRUE(head_may_be_complete(buf, buf.size() - 1, Limits{}));
}

TEST(HeadMayBeComplete, NeverMissesACompleteHeadWhenFedByteByByte) {
    std::string req = "GET /a HTTP/1.1\r\nHost: h\r\nX: y\r\n\r\n";
    for (size_t n = 1; n <= req.size(); ++n) {
        std::string buf = req.substr(0, n);
        RequestHead h;
        if (parse_request_head(buf, h).status != ParseStatus::Incomplete) {
            EXPECT_TRUE(head_may_be_complete(buf, n - 1, Limits{})) << n;
        }
    }
}

// Feeds `req` one byte at a time, as a client that trickles it: until the byte that
// makes the parser fail, the pre-check says "not yet"; at that byte it says "parse
// now", so a client that stops right after crossing a limit still gets its 414 or 431.
// Returns the buffer size at which the parser failed (0: never).
size_t first_refusal(const std::string& req, const Limits& lim, ParseError want) {
    for (size_t n = 2; n <= req.size(); ++n) {
        std::string buf = req.substr(0, n);
        RequestHead h;
        ParseResult r = parse_request_head(buf, h, lim);
        if (r.status == ParseStatus::Error) {
            EXPECT_EQ(r.error, want);
            EXPECT_TRUE(head_may_be_complete(buf, n - 1, lim)) << "buffer of " << n << " bytes";
            return n;
        }
        if (buf.find('\n', n - 1 > 3 ? n - 4 : 0) == std::string::npos) {
            EXPECT_FALSE(head_may_be_complete(buf, n - 1, lim)) << "buffer of " << n << " bytes";
        }
    }
    return 0;
}

TEST(HeadMayBeComplete, ReportsRequestLineLimitAtTheSameByteAsTheParser) {
    Limits lim;
    lim.max_request_line = 64;
    EXPECT_EQ(first_refusal("GET /" + std::string(200, 'a'), lim, ParseError::RequestLineTooLong),
              lim.max_request_line + 1);
}

TEST(HeadMayBeComplete, CountsTheRequestLineAfterTheEmptyLinesBeforeIt) {
    // Empty lines before the request line are skipped (RFC 9112 §2.2) and not part of
    // it; the pre-check once counted them, and said "not yet" to a line already too long
    // (found by fuzz_parser under small limits).
    Limits lim;
    lim.max_request_line = 64;
    EXPECT_EQ(first_refusal("\r\n\r\nGET /" + std::string(200, 'a'), lim, ParseError::RequestLineTooLong),
              4 + lim.max_request_line + 1);
}

TEST(HeadMayBeComplete, ReportsHeaderLimitAtTheSameByteAsTheParser) {
    // One endless header value after a short request line: the fields pass their limit
    // long before a maximal request line would have; the pre-check once waited for the
    // latter (up to max_request_line more bytes, then a timeout for a client that stops).
    Limits lim;
    lim.max_request_line = 64;
    lim.max_header_bytes = 256;
    std::string line = "GET / HTTP/1.1\r\n";
    EXPECT_EQ(first_refusal(line + "X: " + std::string(1000, 'v'), lim, ParseError::HeadersTooLarge),
              line.size() + lim.max_header_bytes + 1);
    EXPECT_EQ(first_refusal("\r\n" + line + "Host: h\r\nX: " + std::string(1000, 'v'), lim,
                            ParseError::HeadersTooLarge),
              2 + line.size() + lim.max_header_bytes + 1);
}

// ---------------------------------------------------------------- error paths: framing

TEST(ParserErrors, ContentLengthWithTransferEncodingRejected) {
    expect_error("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
                 ParseError::ContentLengthWithChunked, 400);
    expect_error("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
                 ParseError::ContentLengthWithChunked, 400);
}

TEST(ParserErrors, TwoDifferentContentLengthsRejected) {
    expect_error("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
                 ParseError::ConflictingContentLength, 400);
}

TEST(ParserErrors, MalformedContentLengthRejected) {
    const char* bad[] = {"-1", "+5", "abc", "", "5a", "0x10", "1 2", "5, 5",
                         "1234567890123456789"};  // 19 digits: could overflow, refused
    for (const char* v : bad)
        expect_error("POST / HTTP/1.1\r\nHost: h\r\n" + hdr("Content-Length", v) + "\r\n",
                     ParseError::BadContentLength, 400);
}

TEST(ParserErrors, TransferEncodingGzipAloneIs400) {
    // RFC 9112 §6.3: final coding not chunked in a request -> length undeterminable.
    expect_error("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n",
                 ParseError::BadTransferEncoding, 400);
    expect_error("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
                 ParseError::BadTransferEncoding, 400);
    expect_error("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n\r\n",
                 ParseError::BadTransferEncoding, 400);
}

TEST(ParserErrors, TransferEncodingGzipThenChunkedIs501) {
    expect_error("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
                 ParseError::UnsupportedTransferCoding, 501);
    expect_error("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
                 ParseError::UnsupportedTransferCoding, 501);
}

TEST(ParserErrors, ChunkedTwiceIs400) {
    expect_error("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
                 ParseError::BadTransferEncoding, 400);
    expect_error("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
                 ParseError::BadTransferEncoding, 400);
    // RFC 9112 §6.1: chunked MUST NOT be applied more than once, adjacent or not.
    expect_error("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip, chunked\r\n\r\n",
                 ParseError::BadTransferEncoding, 400);
}

TEST(ParserErrors, TransferEncodingOnHttp10Is400) {
    // RFC 9112 §6.1: TE in a 1.0 message may be a smuggling attempt; framing is faulty.
    expect_error("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", ParseError::BadTransferEncoding, 400);
}

TEST(ParserErrors, MalformedTransferCodingIs400) {
    expect_error("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gz\"ip, chunked\r\n\r\n",
                 ParseError::BadTransferEncoding, 400);
}

// ---------------------------------------------------------------- error paths: header syntax

TEST(ParserErrors, SpaceBeforeColonRejected) {
    expect_error("GET / HTTP/1.1\r\nHost: h\r\nContent-Length : 5\r\n\r\n", ParseError::BadHeaderName, 400);
    expect_error("GET / HTTP/1.1\r\nHost: h\r\nX\t: 5\r\n\r\n", ParseError::BadHeaderName, 400);
}

TEST(ParserErrors, ControlOrSeparatorInHeaderNameRejected) {
    expect_error("GET / HTTP/1.1\r\nHost: h\r\nX\x01Y: 1\r\n\r\n", ParseError::BadHeaderName, 400);
    expect_error("GET / HTTP/1.1\r\nHost: h\r\nX(Y): 1\r\n\r\n", ParseError::BadHeaderName, 400);
    expect_error("GET / HTTP/1.1\r\nHost: h\r\nX\x80: 1\r\n\r\n", ParseError::BadHeaderName, 400);
}

TEST(ParserErrors, EmptyHeaderNameRejected) {
    expect_error("GET / HTTP/1.1\r\nHost: h\r\n: value\r\n\r\n", ParseError::BadHeaderName, 400);
}

TEST(ParserErrors, HeaderLineWithoutColonRejected) {
    expect_error("GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", ParseError::BadHeaderName, 400);
}

TEST(ParserErrors, ObsFoldRejected) {
    expect_error("GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n 2\r\n\r\n", ParseError::ObsFold, 400);
    expect_error("GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\t2\r\n\r\n", ParseError::ObsFold, 400);
    // Whitespace between the request line and the first field (RFC 9112 §2.2).
    expect_error("GET / HTTP/1.1\r\n Host: h\r\n\r\n", ParseError::ObsFold, 400);
}

TEST(ParserErrors, BareCRRejectedEverywhere) {
    expect_error("GET / HTTP/1.1\rHost: h\r\n\r\n", ParseError::BareCR, 400);
    expect_error("GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n", ParseError::BareCR, 400);
    expect_error("GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n", ParseError::BareCR, 400);
    expect_error("GET / HTTP/1.1\r\nHost: h\r\n\rX", ParseError::BareCR, 400);
}

TEST(ParserErrors, BareLFRejectedEverywhere) {
    expect_error("GET / HTTP/1.1\nHost: h\r\n\r\n", ParseError::BareLF, 400);
    expect_error("GET / HTTP/1.1\r\nHost: h\n\r\n", ParseError::BareLF, 400);
    expect_error("GET / HTTP/1.1\r\nHost: h\r\n\n", ParseError::BareLF, 400);
    expect_error("GET / HTTP/1.1\r\nHost: h\r\nX: a\nb\r\n\r\n", ParseError::BareLF, 400);
}

TEST(ParserErrors, ControlCharacterInValueRejected) {
    for (char c : {'\x01', '\x7f', '\x00', '\x1f', '\x0b'}) {
        std::string req = "GET / HTTP/1.1\r\nHost: h\r\nX: a";
        req += c;
        req += "b\r\n\r\n";
        expect_error(req, ParseError::BadHeaderValue, 400);
    }
}

// ---------------------------------------------------------------- error paths: request line

TEST(ParserErrors, Http2VersionIs505) {
    expect_error("GET / HTTP/2.0\r\nHost: h\r\n\r\n", ParseError::UnsupportedVersion, 505);
    expect_error("GET / HTTP/0.9\r\nHost: h\r\n\r\n", ParseError::UnsupportedVersion, 505);
}

TEST(ParserErrors, GarbageVersionIs400) {
    const char* bad[] = {"HTTP/1.1x", "HTTP/11.1", "http/1.1", "HTTP/1", "HTTP/1.", "HTTP/a.b",
                         "HTTX/1.1",  "HTTP/1,1",  "HTTP/1.1 "};
    for (const char* v : bad)
        expect_error(std::string("GET / ") + v + "\r\nHost: h\r\n\r\n", ParseError::BadVersion, 400);
}

TEST(ParserErrors, GarbageVersionRejectedBeforeLineEnds) {
    expect_error("GET / XT", ParseError::BadVersion, 400);
}

TEST(ParserErrors, BadMethodRejected) {
    expect_error(" GET / HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadMethod, 400);
    expect_error("GE(T / HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadMethod, 400);
    expect_error("GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadMethod, 400);
}

TEST(ParserErrors, TwoSpacesBetweenMethodAndTargetRejected) {
    expect_error("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadTarget, 400);
}

TEST(ParserErrors, NonAsciiSpaceOrControlInTargetRejected) {
    expect_error("GET /caf\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadTarget, 400);
    expect_error("GET /a\x01 HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadTarget, 400);
    expect_error("GET /a\x7f HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadTarget, 400);
    expect_error("GET /a\tb HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadTarget, 400);
    // "/a b" splits at the space; "b HTTP/1.1" is then not a version.
    expect_error("GET /a b HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadVersion, 400);
}

TEST(ParserErrors, AsteriskFormOnlyForOptions) {
    expect_error("GET * HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadTarget, 400);
}

TEST(ParserErrors, AuthorityFormOnlyForConnect) {
    expect_error("GET example.com:80 HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadTarget, 400);
    expect_error("CONNECT example.com:80/x HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadTarget, 400);
}

TEST(ParserErrors, AbsoluteFormWithoutAuthorityOrWithUserinfoRejected) {
    expect_error("GET http:///x HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadTarget, 400);
    expect_error("GET http://user@h/x HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadTarget, 400);
    expect_error("GET ftp://h/x HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadTarget, 400);
}

TEST(ParserErrors, MissingHostOnHttp11Rejected) {
    expect_error("GET / HTTP/1.1\r\n\r\n", ParseError::MissingHost, 400);
    // Absolute form does not excuse a missing Host (RFC 9112 §3.2.2: client MUST send it).
    expect_error("GET http://h/ HTTP/1.1\r\n\r\n", ParseError::MissingHost, 400);
}

TEST(ParserErrors, DuplicateHostRejected) {
    expect_error("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", ParseError::DuplicateHost, 400);
    expect_error("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", ParseError::DuplicateHost, 400);
}

// ---------------------------------------------------------------- error paths: limits

TEST(ParserErrors, RequestLineOver8KiBIs414) {
    // The line without CRLF may be exactly kMaxRequestLine bytes.
    std::string fixed = "GET / HTTP/1.1";
    std::string ok_target = "/" + std::string(kMaxRequestLine - fixed.size(), 'a');
    std::string ok = "GET " + ok_target + " HTTP/1.1\r\nHost: h\r\n\r\n";
    auto p = parse(ok);
    ASSERT_EQ(p->r.status, ParseStatus::Complete);
    EXPECT_EQ(p->head->target.size() + fixed.size() - 1, kMaxRequestLine);

    expect_error("GET " + ok_target + "a HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::RequestLineTooLong, 414);
}

TEST(ParserErrors, RequestLineOver8KiBIs414EvenWhenIncomplete) {
    expect_error("GET /" + std::string(kMaxRequestLine + 10, 'a'), ParseError::RequestLineTooLong, 414);
    expect_error(std::string(kMaxRequestLine + 10, 'G'), ParseError::RequestLineTooLong, 414);
    // At exactly the limit without a line end, more bytes may still make a valid line.
    auto p = parse("GET /" + std::string(kMaxRequestLine - 5, 'a'));
    EXPECT_EQ(p->r.status, ParseStatus::Incomplete);
}

TEST(ParserErrors, HeadersOver64KiBIs431) {
    std::string big;
    while (big.size() <= kMaxHeaderBytes) big += hdr("X-Fill", std::string(1000, 'f'));
    expect_error("GET / HTTP/1.1\r\nHost: h\r\n" + big + "\r\n", ParseError::HeadersTooLarge, 431);
}

TEST(ParserErrors, HeadersOver64KiBIs431EvenWhenIncomplete) {
    expect_error("GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + std::string(kMaxHeaderBytes, 'v'),
                 ParseError::HeadersTooLarge, 431);
}

TEST(ParserErrors, HeadersAtExactly64KiBAccepted) {
    std::string fields = hdr("Host", "h");
    std::string prefix = "X-Fill: ";
    fields += prefix + std::string(kMaxHeaderBytes - fields.size() - prefix.size() - 2, 'f') + "\r\n";
    ASSERT_EQ(fields.size(), kMaxHeaderBytes);
    auto p = parse("GET / HTTP/1.1\r\n" + fields + "\r\n");
    EXPECT_EQ(p->r.status, ParseStatus::Complete) << describe(p->r.error);
}

TEST(ParserErrors, MoreThan100FieldsIs431) {
    std::string fields = hdr("Host", "h");
    for (size_t i = 1; i < kMaxHeaderCount; ++i) fields += hdr("X-" + std::to_string(i), "v");
    auto ok = parse("GET / HTTP/1.1\r\n" + fields + "\r\n");
    ASSERT_EQ(ok->r.status, ParseStatus::Complete);
    EXPECT_EQ(ok->head->header_count, kMaxHeaderCount);

    expect_error("GET / HTTP/1.1\r\n" + fields + hdr("X-Extra", "v") + "\r\n", ParseError::TooManyHeaders, 431);
}

TEST(ParserErrors, LimitsFromConfigAreHonoured) {
    Limits lim;
    lim.max_header_count = 2;
    expect_error("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\n\r\n", ParseError::TooManyHeaders, 431, lim);
    lim = Limits{};
    lim.max_request_line = 16;
    expect_error("GET /0123456789 HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::RequestLineTooLong, 414, lim);
    lim = Limits{};
    lim.max_header_bytes = 10;
    expect_error("GET / HTTP/1.1\r\nHost: hostname\r\n\r\n", ParseError::HeadersTooLarge, 431, lim);
}

TEST(ParserErrors, StatusForAndDescribeCoverEveryError) {
    for (int i = 1; i <= static_cast<int>(ParseError::DuplicateHost); ++i) {
        auto e = static_cast<ParseError>(i);
        int s = status_for(e);
        EXPECT_TRUE(s == 400 || s == 414 || s == 431 || s == 501 || s == 505) << i;
        EXPECT_NE(describe(e), "unknown error") << i;
        EXPECT_FALSE(describe(e).empty());
    }
    EXPECT_EQ(status_for(ParseError::None), 200);
}

}  // namespace
}  // namespace kiln::http

namespace kiln::http {
namespace {
// Regression: a peer sending nothing but CRLFs got Incomplete forever, so the
// connection buffered them without bound.
TEST(ParserErrors, EndlessLeadingEmptyLinesHitTheRequestLineLimit) {
    std::string crlfs;
    for (size_t i = 0; i < kMaxRequestLine; i += 2) crlfs += "\r\n";
    crlfs += "\r\n";
    expect_error(crlfs, ParseError::RequestLineTooLong, 414);
}
}  // namespace
}  // namespace kiln::http

namespace kiln::http {
namespace {
// Regressions found end to end: RFC 9112 §3.2 requires 400 for an invalid Host.
TEST(ParserErrors, InvalidHostValuesRejected) {
    for (const char* host : {"a b", "a/b", "a@b", "a?b", "[::1", "h:80x", "h:8:0"})
        expect_error(std::string("GET / HTTP/1.1\r\nHost: ") + host + "\r\n\r\n", ParseError::BadHost, 400);
}

TEST(ParserValid, HostFormsAccepted) {
    for (const char* host : {"example.com", "example.com:8080", "127.0.0.1:1", "[::1]:8080", "[fe80::1]", "xn--bcher-kva.de", ""}) {
        auto p = parse(std::string("GET / HTTP/1.1\r\nHost: ") + host + "\r\n\r\n");
        EXPECT_EQ(p->r.status, ParseStatus::Complete) << host;
        EXPECT_EQ(p->head->host, host);
    }
}

// A fragment is never sent in a request-target (RFC 9112 §3.2).
TEST(ParserErrors, FragmentInTargetRejected) {
    expect_error("GET /users/1#frag HTTP/1.1\r\nHost: h\r\n\r\n", ParseError::BadTarget, 400);
}
}  // namespace
}  // namespace kiln::http
