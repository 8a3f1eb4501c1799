// Unit tests of the in-place chunked decoder (src/http/chunked.cpp): the same wire
// bytes must decode identically in one call and byte by byte; then the error paths.
#include "http/chunked.hpp"

#include <gtest/gtest.h>

#include <string>

namespace kiln::http {
namespace {

struct Decoded {
    ChunkedStatus status;
    std::string body;  // buf[0 .. write)
    size_t read;       // index one past the last byte consumed
    uint64_t body_size;
};

// Decodes `wire` (starting at offset 0) in one call.
Decoded decode_once(const std::string& wire, size_t max_body = kMaxBodyBytes) {
    std::string buf = wire;
    ChunkedDecoder d;
    size_t r = 0, w = 0;
    ChunkedStatus s = d.decode(buf.data(), &r, &w, buf.size(), max_body);
    EXPECT_LE(w, r);
    return {s, buf.substr(0, w), r, d.body_size()};
}

// Feeds `wire` one byte at a time into a buffer that grows like a socket buffer;
// stops at the first status other than NeedMore.
Decoded decode_bytewise(const std::string& wire, size_t max_body = kMaxBodyBytes) {
    std::string buf(wire.size(), '\0');
    ChunkedDecoder d;
    size_t r = 0, w = 0;
    ChunkedStatus s = ChunkedStatus::NeedMore;
    for (size_t end = 1; end <= wire.size(); ++end) {
        buf[end - 1] = wire[end - 1];
        s = d.decode(buf.data(), &r, &w, end, max_body);
        EXPECT_LE(w, r);
        if (s != ChunkedStatus::NeedMore) break;
    }
    return {s, buf.substr(0, w), r, d.body_size()};
}

// Both ways must agree; returns the one-call result.
Decoded decode_both(const std::string& wire, size_t max_body = kMaxBodyBytes) {
    Decoded a = decode_once(wire, max_body);
    Decoded b = decode_bytewise(wire, max_body);
    EXPECT_EQ(a.status, b.status);
    EXPECT_EQ(a.body, b.body);
    EXPECT_EQ(a.read, b.read);
    EXPECT_EQ(a.body_size, b.body_size);
    return a;
}

// ---------------------------------------------------------------- valid bodies

TEST(ChunkedValid, DecodesInOneCallAndByteByByteIdentically) {
    std::string wire = "5\r\nhello\r\n7\r\n, world\r\n1\r\n!\r\n0\r\n\r\n";
    Decoded d = decode_both(wire);
    EXPECT_EQ(d.status, ChunkedStatus::Done);
    EXPECT_EQ(d.body, "hello, world!");
    EXPECT_EQ(d.read, wire.size());
    EXPECT_EQ(d.body_size, 13u);
}

TEST(ChunkedValid, EmptyBodyIsJustTheLastChunk) {
    Decoded d = decode_both("0\r\n\r\n");
    EXPECT_EQ(d.status, ChunkedStatus::Done);
    EXPECT_EQ(d.body, "");
    EXPECT_EQ(d.read, 5u);
}

TEST(ChunkedValid, UpperAndLowerCaseHexAndLeadingZeros) {
    std::string payload(0x1aF, 'x');
    Decoded d = decode_both("1aF\r\n" + payload + "\r\n00A\r\n0123456789\r\n000\r\n\r\n");
    EXPECT_EQ(d.status, ChunkedStatus::Done);
    EXPECT_EQ(d.body, payload + "0123456789");
}

TEST(ChunkedValid, ChunkExtensionsAreIgnored) {
    Decoded d = decode_both("3;name=value\r\nabc\r\n2 ; a=\"q;x\" ;b\r\nde\r\n0;last\r\n\r\n");
    EXPECT_EQ(d.status, ChunkedStatus::Done);
    EXPECT_EQ(d.body, "abcde");
}

TEST(ChunkedValid, TrailersAreConsumedAndDiscarded) {
    std::string wire = "4\r\nwiki\r\n0\r\nExpires: never\r\nX-Checksum: abc\r\n\r\n";
    Decoded d = decode_both(wire);
    EXPECT_EQ(d.status, ChunkedStatus::Done);
    EXPECT_EQ(d.body, "wiki");
    EXPECT_EQ(d.read, wire.size());
}

TEST(ChunkedValid, PipelinedBytesAfterFinalCrlfAreLeftForTheNextRequest) {
    std::string msg = "3\r\nabc\r\n0\r\n\r\n";
    std::string next = "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
    Decoded d = decode_once(msg + next);
    EXPECT_EQ(d.status, ChunkedStatus::Done);
    EXPECT_EQ(d.body, "abc");
    EXPECT_EQ(d.read, msg.size());

    Decoded b = decode_bytewise(msg + next);
    EXPECT_EQ(b.status, ChunkedStatus::Done);
    EXPECT_EQ(b.read, msg.size());
}

TEST(ChunkedValid, DecoderStaysDoneAndDoesNotReadPastTheMessage) {
    std::string buf = "1\r\na\r\n0\r\n\r\nNEXT";
    ChunkedDecoder d;
    size_t r = 0, w = 0;
    ASSERT_EQ(d.decode(buf.data(), &r, &w, buf.size(), 100), ChunkedStatus::Done);
    size_t r2 = r, w2 = w;
    EXPECT_EQ(d.decode(buf.data(), &r2, &w2, buf.size(), 100), ChunkedStatus::Done);
    EXPECT_EQ(r2, r);
    EXPECT_EQ(w2, w);
    EXPECT_EQ(buf.substr(r), "NEXT");
}

TEST(ChunkedValid, DecodesAtAnOffsetAfterTheHead) {
    // As a server does: the body starts after the head in the same buffer.
    std::string head = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
    std::string buf = head + "2\r\nok\r\n0\r\n\r\n";
    ChunkedDecoder d;
    size_t r = head.size(), w = head.size();
    ASSERT_EQ(d.decode(buf.data(), &r, &w, buf.size(), 100), ChunkedStatus::Done);
    EXPECT_EQ(buf.substr(head.size(), w - head.size()), "ok");
    EXPECT_EQ(buf.substr(0, head.size()), head);  // the head is untouched
    EXPECT_EQ(r, buf.size());
}

TEST(ChunkedValid, SplitAtEveryPointInTwoCallsGivesSameBody) {
    std::string wire = "a;x=1\r\n0123456789\r\n3\r\nabc\r\n0\r\nT: v\r\n\r\n";
    for (size_t cut = 0; cut <= wire.size(); ++cut) {
        std::string buf(wire.size(), '\0');
        wire.copy(buf.data(), cut);
        ChunkedDecoder d;
        size_t r = 0, w = 0;
        ChunkedStatus s1 = d.decode(buf.data(), &r, &w, cut, 100);
        ASSERT_EQ(s1, cut == wire.size() ? ChunkedStatus::Done : ChunkedStatus::NeedMore) << cut;
        wire.copy(buf.data() + cut, wire.size() - cut, cut);
        ChunkedStatus s2 = d.decode(buf.data(), &r, &w, wire.size(), 100);
        ASSERT_EQ(s2, ChunkedStatus::Done) << cut;
        EXPECT_EQ(buf.substr(0, w), "0123456789abc") << cut;
        EXPECT_EQ(r, wire.size());
    }
}

TEST(ChunkedValid, BodyExactlyAtMaxBodyIsAccepted) {
    Decoded d = decode_both("4\r\nabcd\r\n2\r\nef\r\n0\r\n\r\n", 6);
    EXPECT_EQ(d.status, ChunkedStatus::Done);
    EXPECT_EQ(d.body, "abcdef");
}

// ---------------------------------------------------------------- error paths

TEST(ChunkedErrors, BadSizeCharacterIsMalformed) {
    for (const char* wire : {"g\r\n", "x\r\n", "-1\r\n", " 5\r\nhello\r\n0\r\n\r\n", "0x5\r\nhello\r\n",
                             "5+\r\nhello\r\n", "\r\n0\r\n\r\n", ";ext\r\n"})
        EXPECT_EQ(decode_both(wire).status, ChunkedStatus::Malformed) << wire;
}

TEST(ChunkedErrors, WhitespaceAfterSizeMustLeadToAnExtension) {
    // RFC 9112 §7.1.1: only BWS ";" may follow the size; "5 5" must not read as 5.
    EXPECT_EQ(decode_both("5 5\r\nhello\r\n0\r\n\r\n").status, ChunkedStatus::Malformed);
    EXPECT_EQ(decode_both("5\tx\r\nhello\r\n0\r\n\r\n").status, ChunkedStatus::Malformed);
    Decoded ok = decode_both("5 \t;a=b\r\nhello\r\n0 ;x\r\n\r\n");
    EXPECT_EQ(ok.status, ChunkedStatus::Done);
    EXPECT_EQ(ok.body, "hello");
}

TEST(ChunkedErrors, BareLFAfterSizeIsMalformed) {
    EXPECT_EQ(decode_both("5\nhello\r\n0\r\n\r\n").status, ChunkedStatus::Malformed);
    EXPECT_EQ(decode_both("5\rhello\r\n0\r\n\r\n").status, ChunkedStatus::Malformed);
    EXPECT_EQ(decode_both("5;ext\nhello\r\n0\r\n\r\n").status, ChunkedStatus::Malformed);
}

TEST(ChunkedErrors, MissingCrlfAfterDataIsMalformed) {
    EXPECT_EQ(decode_both("5\r\nhelloX\r\n0\r\n\r\n").status, ChunkedStatus::Malformed);
    EXPECT_EQ(decode_both("5\r\nhello\n0\r\n\r\n").status, ChunkedStatus::Malformed);
    EXPECT_EQ(decode_both("5\r\nhello\rX0\r\n\r\n").status, ChunkedStatus::Malformed);
    // Declared size shorter than the data: the extra bytes land where CRLF must be.
    EXPECT_EQ(decode_both("3\r\nhello\r\n0\r\n\r\n").status, ChunkedStatus::Malformed);
}

TEST(ChunkedErrors, TooManyHexDigitsIsMalformed) {
    EXPECT_EQ(decode_both("0000000000000001\r\nx\r\n0\r\n\r\n").status, ChunkedStatus::Malformed);  // 16
    EXPECT_EQ(decode_both("ffffffffffffffffff\r\n").status, ChunkedStatus::Malformed);
    // 15 digits is still a size (and then too large for any body limit).
    EXPECT_EQ(decode_both("000000000000001\r\nx\r\n0\r\n\r\n").status, ChunkedStatus::Done);
}

TEST(ChunkedErrors, BodyOverMaxIsTooLargeBeforeTheDataIsRead) {
    std::string wire = "4\r\nabcd\r\n3\r\nefg\r\n0\r\n\r\n";
    ChunkedDecoder d;
    std::string buf = wire;
    size_t r = 0, w = 0;
    EXPECT_EQ(d.decode(buf.data(), &r, &w, buf.size(), 6), ChunkedStatus::TooLarge);
    // Stopped right after the size line of the chunk that would overflow.
    EXPECT_EQ(r, std::string("4\r\nabcd\r\n3\r\n").size());
    EXPECT_EQ(w, 4u);
    EXPECT_EQ(d.body_size(), 4u);

    // A huge declared size is refused without waiting for its data.
    std::string huge = "fffffffffffffff\r\n";
    ChunkedDecoder d2;
    r = w = 0;
    EXPECT_EQ(d2.decode(huge.data(), &r, &w, huge.size(), kMaxBodyBytes), ChunkedStatus::TooLarge);
    EXPECT_EQ(d2.body_size(), 0u);

    EXPECT_EQ(decode_bytewise(wire, 6).status, ChunkedStatus::TooLarge);
}

TEST(ChunkedErrors, OversizedTrailersAreTrailersTooLarge) {
    // The limit counts every byte after the last-chunk line, CRLFs and the final
    // empty line included: exactly kMaxTrailerBytes passes, one more does not.
    std::string trailers;
    while (trailers.size() + 200 < kMaxTrailerBytes) trailers += "X-T: " + std::string(100, 't') + "\r\n";
    std::string last = "X-Last: ";
    last += std::string(kMaxTrailerBytes - trailers.size() - last.size() - 4, 'l') + "\r\n";
    std::string at_limit = trailers + last + "\r\n";
    ASSERT_EQ(at_limit.size(), kMaxTrailerBytes);
    EXPECT_EQ(decode_both("1\r\na\r\n0\r\n" + at_limit).status, ChunkedStatus::Done);
    std::string over = trailers + "X" + last + "\r\n";
    EXPECT_EQ(decode_both("1\r\na\r\n0\r\n" + over).status, ChunkedStatus::TrailersTooLarge);
    // Many short lines count their CRLFs too.
    std::string short_lines;
    while (short_lines.size() <= kMaxTrailerBytes) short_lines += "a:\r\n";
    EXPECT_EQ(decode_both("0\r\n" + short_lines + "\r\n").status, ChunkedStatus::TrailersTooLarge);
    // One endless trailer line is cut off too.
    EXPECT_EQ(decode_both("0\r\nX: " + std::string(kMaxTrailerBytes + 10, 'v')).status,
              ChunkedStatus::TrailersTooLarge);
}

TEST(ChunkedErrors, MalformedTrailerIsMalformed) {
    EXPECT_EQ(decode_both("0\r\nX: a\nb\r\n\r\n").status, ChunkedStatus::Malformed);   // bare LF
    EXPECT_EQ(decode_both("0\r\nX: a\rb\r\n\r\n").status, ChunkedStatus::Malformed);   // bare CR
    EXPECT_EQ(decode_both("0\r\n X: a\r\n\r\n").status, ChunkedStatus::Malformed);     // obs-fold
    EXPECT_EQ(decode_both("0\r\nX: \x01\r\n\r\n").status, ChunkedStatus::Malformed);   // control
    EXPECT_EQ(decode_both("0\r\n\n").status, ChunkedStatus::Malformed);                // bare LF end
}

TEST(ChunkedErrors, OverlongChunkLineIsMalformed) {
    EXPECT_EQ(decode_both("1;" + std::string(kMaxChunkLine, 'e') + "\r\na\r\n0\r\n\r\n").status,
              ChunkedStatus::Malformed);
}

TEST(ChunkedErrors, ControlCharacterInExtensionIsMalformed) {
    EXPECT_EQ(decode_both("1;a\x01\r\nx\r\n0\r\n\r\n").status, ChunkedStatus::Malformed);
}

TEST(ChunkedErrors, TruncatedBodyNeedsMore) {
    EXPECT_EQ(decode_once("5\r\nhel").status, ChunkedStatus::NeedMore);
    EXPECT_EQ(decode_once("5\r\nhello\r\n0\r\n").status, ChunkedStatus::NeedMore);
    EXPECT_EQ(decode_once("5\r\nhello\r\n0\r\nX: y\r\n").status, ChunkedStatus::NeedMore);
}

}  // namespace
}  // namespace kiln::http

namespace kiln::http {
namespace {
// Regression (found end to end): a trailer line was checked only at its first byte,
// so "X Y: v" passed although the same field in the head is a 400.
TEST(ChunkedErrors, TrailerFieldNamesMustBeTokens) {
    EXPECT_EQ(decode_both("3\r\nabc\r\n0\r\nX Y: v\r\n\r\n").status, ChunkedStatus::Malformed);
    EXPECT_EQ(decode_both("3\r\nabc\r\n0\r\nNoColon\r\n\r\n").status, ChunkedStatus::Malformed);
    EXPECT_EQ(decode_both("3\r\nabc\r\n0\r\n:v\r\n\r\n").status, ChunkedStatus::Malformed);
    EXPECT_EQ(decode_both("3\r\nabc\r\n0\r\nX-Sum: a b:c\r\n\r\n").status, ChunkedStatus::Done);
}
}  // namespace
}  // namespace kiln::http
