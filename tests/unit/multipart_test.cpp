// Unit tests of the multipart/form-data push parser (src/http/multipart.cpp): the same
// body must give the same parts however it is cut into feeds; part data must stream
// (memory bounded whatever the part size); then the error paths and their statuses.
#include "http/multipart.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace kiln::http {
namespace {

struct Part {
    std::string name;
    std::optional<std::string> filename;
    std::string content_type;
    std::string raw_headers;
    std::string data;
    bool ended = false;
    bool operator==(const Part&) const = default;
};

// Records what the parser reports; can refuse a part or data to test aborts.
struct Recorder : MultipartSink {
    std::vector<Part> parts;
    size_t data_calls = 0;
    bool refuse_part = false;
    size_t refuse_data_after = SIZE_MAX;  // bytes of data accepted before refusing

    bool on_part(const PartHead& h) override {
        EXPECT_EQ(h.index, parts.size());
        EXPECT_TRUE(parts.empty() || parts.back().ended);
        Part p;
        p.name = h.name;
        if (h.filename) p.filename = std::string(*h.filename);
        p.content_type = h.content_type;
        p.raw_headers = h.raw_headers;
        parts.push_back(p);
        return !refuse_part;
    }
    bool on_data(std::string_view d) override {
        EXPECT_FALSE(d.empty());
        EXPECT_FALSE(parts.empty());
        EXPECT_FALSE(parts.back().ended);
        ++data_calls;
        parts.back().data.append(d);
        return total() <= refuse_data_after;
    }
    bool on_part_end() override {
        EXPECT_FALSE(parts.back().ended);
        parts.back().ended = true;
        return true;
    }
    size_t total() const {
        size_t n = 0;
        for (const Part& p : parts) n += p.data.size();
        return n;
    }
};

struct Result {
    MultipartStatus status;
    MultipartError error;
    std::vector<Part> parts;
};

constexpr std::string_view kB = "XyZ-boundary";

// Feeds `body` cut at the given offsets (ascending), then calls finish().
Result parse_cut(std::string_view body, const std::vector<size_t>& cuts, MultipartLimits limits = {},
                 std::string_view boundary = kB) {
    MultipartParser p(boundary, limits);
    Recorder r;
    MultipartStatus s = MultipartStatus::NeedMore;
    size_t from = 0;
    std::vector<size_t> ends = cuts;
    ends.push_back(body.size());
    for (size_t end : ends) {
        s = p.feed(body.substr(from, end - from), r);
        from = end;
        if (s == MultipartStatus::Error) break;
    }
    if (s == MultipartStatus::NeedMore) s = p.finish();
    EXPECT_EQ(s == MultipartStatus::Error, p.error() != MultipartError::None);
    return {s, p.error(), r.parts};
}

Result parse(std::string_view body, MultipartLimits limits = {}) { return parse_cut(body, {}, limits); }

// A part as a browser writes it (without its delimiter).
std::string field(std::string_view name, std::string_view value) {
    return "Content-Disposition: form-data; name=\"" + std::string(name) + "\"\r\n\r\n" + std::string(value);
}

// Joins parts into a body with delimiters and the close delimiter.
std::string body_of(const std::vector<std::string>& parts, std::string_view boundary = kB) {
    std::string b;
    for (const std::string& p : parts) b += "--" + std::string(boundary) + "\r\n" + p + "\r\n";
    return b + "--" + std::string(boundary) + "--\r\n";
}

const std::string kFormBody = body_of({
    field("title", "Hello"),
    "Content-Disposition: form-data; name=\"upload\"; filename=\"a.txt\"\r\n"
    "Content-Type: text/plain\r\n\r\n"
    "line one\r\n--XyZ-boundar not a delimiter\r\n\r\nend\r",
    field("empty", ""),
    field("tail", "a--XyZ-boundary\n--XyZ-boundary\r--XyZ-boundary\r\n-XyZ-boundary"),
});

// ---------------------------------------------------------------- valid bodies

TEST(MultipartValid, BrowserFormWithFieldsAndAFile) {
    Result r = parse(kFormBody);
    ASSERT_EQ(r.status, MultipartStatus::Done);
    ASSERT_EQ(r.parts.size(), 4u);
    EXPECT_EQ(r.parts[0].name, "title");
    EXPECT_EQ(r.parts[0].data, "Hello");
    EXPECT_EQ(r.parts[0].filename, std::nullopt);
    EXPECT_EQ(r.parts[0].content_type, "text/plain");  // the RFC 7578 default
    EXPECT_EQ(r.parts[1].name, "upload");
    EXPECT_EQ(r.parts[1].filename, "a.txt");
    EXPECT_EQ(r.parts[1].data, "line one\r\n--XyZ-boundar not a delimiter\r\n\r\nend\r");
    EXPECT_EQ(r.parts[1].raw_headers,
              "Content-Disposition: form-data; name=\"upload\"; filename=\"a.txt\"\r\n"
              "Content-Type: text/plain\r\n");
    EXPECT_EQ(r.parts[2].name, "empty");
    EXPECT_EQ(r.parts[2].data, "");
    EXPECT_EQ(r.parts[3].data, "a--XyZ-boundary\n--XyZ-boundary\r--XyZ-boundary\r\n-XyZ-boundary");
    for (const Part& p : r.parts) EXPECT_TRUE(p.ended);
}

TEST(MultipartValid, EverySplitPointGivesTheSameParts) {
    Result whole = parse(kFormBody);
    ASSERT_EQ(whole.status, MultipartStatus::Done);
    for (size_t i = 0; i <= kFormBody.size(); ++i) {
        for (size_t j = i; j <= kFormBody.size(); ++j) {
            Result cut = parse_cut(kFormBody, {i, j});
            ASSERT_EQ(cut.status, MultipartStatus::Done) << i << "," << j;
            ASSERT_EQ(cut.parts, whole.parts) << "cut at " << i << " and " << j;
        }
    }
}

TEST(MultipartValid, ByteByByteGivesTheSameParts) {
    std::vector<size_t> cuts;
    for (size_t i = 1; i < kFormBody.size(); ++i) cuts.push_back(i);
    Result r = parse_cut(kFormBody, cuts);
    EXPECT_EQ(r.status, MultipartStatus::Done);
    EXPECT_EQ(r.parts, parse(kFormBody).parts);
}

TEST(MultipartValid, PreambleAndEpilogueAreIgnored) {
    std::string body = "This is a preamble.\r\n--XyZ-boundar line\r\n" + body_of({field("a", "1")}) +
                       "epilogue --XyZ-boundary\r\n--XyZ-boundary\r\ngarbage";
    Result r = parse(body);
    EXPECT_EQ(r.status, MultipartStatus::Done);
    ASSERT_EQ(r.parts.size(), 1u);
    EXPECT_EQ(r.parts[0].data, "1");
}

TEST(MultipartValid, FeedsAfterTheCloseDelimiterAreIgnored) {
    MultipartParser p(kB);
    Recorder r;
    EXPECT_EQ(p.feed(body_of({field("a", "1")}), r), MultipartStatus::Done);
    EXPECT_EQ(p.feed("--XyZ-boundary\r\n\x01 anything", r), MultipartStatus::Done);
    EXPECT_EQ(p.finish(), MultipartStatus::Done);
    EXPECT_EQ(r.parts.size(), 1u);
}

TEST(MultipartValid, TransportPaddingAfterDelimiters) {
    std::string body = "--XyZ-boundary \t \r\n" + field("a", "1") + "\r\n--XyZ-boundary\t\r\n" + field("b", "2") +
                       "\r\n--XyZ-boundary--  \r\n";
    Result r = parse(body);
    EXPECT_EQ(r.status, MultipartStatus::Done);
    ASSERT_EQ(r.parts.size(), 2u);
    EXPECT_EQ(r.parts[1].data, "2");
}

TEST(MultipartValid, PartWithoutBlankLineHasNoBody) {
    // RFC 2046: body-part := headers [CRLF *OCTET]; the head's CRLF starts the delimiter.
    std::string body = "--XyZ-boundary\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n--XyZ-boundary--";
    Result r = parse(body);
    EXPECT_EQ(r.status, MultipartStatus::Done);
    ASSERT_EQ(r.parts.size(), 1u);
    EXPECT_EQ(r.parts[0].data, "");
}

TEST(MultipartValid, DataStartingWithCRLFKeepsIt) {
    Result r = parse(body_of({field("a", "\r\n\r\nx\r\n")}));
    ASSERT_EQ(r.parts.size(), 1u);
    EXPECT_EQ(r.parts[0].data, "\r\n\r\nx\r\n");
}

TEST(MultipartValid, CloseDelimiterAloneIsAnEmptyForm) {
    Result r = parse("--XyZ-boundary--\r\n");
    EXPECT_EQ(r.status, MultipartStatus::Done);
    EXPECT_TRUE(r.parts.empty());
}

TEST(MultipartValid, DispositionParameters) {
    auto one = [](std::string_view disposition) {
        Result r = parse(body_of({"Content-Disposition: " + std::string(disposition) + "\r\n\r\nv"}));
        EXPECT_EQ(r.status, MultipartStatus::Done) << disposition;
        return r.parts.empty() ? Part{} : r.parts[0];
    };
    EXPECT_EQ(one("form-data; name=plain").name, "plain");
    EXPECT_EQ(one("FORM-DATA;NAME=\"x\"").name, "x");
    EXPECT_EQ(one("form-data; filename=\"f.bin\"; name=\"later\"").name, "later");
    EXPECT_EQ(one("form-data; filename=\"f.bin\"; name=\"later\"").filename, "f.bin");
    EXPECT_EQ(one("form-data; name=\"a;b=c\"").name, "a;b=c");
    EXPECT_EQ(one("form-data; name=\"say \\\"hi\\\"\"").name, "say \"hi\"");
    EXPECT_EQ(one("form-data; name=f; filename=\"C:\\dir\\f.txt\"").filename, "C:\\dir\\f.txt");
    EXPECT_EQ(one("form-data; name=f; filename=\"\"").filename, "");  // a file input left empty
    EXPECT_EQ(one("form-data ; name = \"sp\" ; other=ignored;").name, "sp");
    Part ext = one("form-data; name=f; filename=\"euro.txt\"; filename*=UTF-8''%E2%82%AC%20rates.txt");
    EXPECT_EQ(ext.filename, "\xE2\x82\xAC rates.txt");
    EXPECT_EQ(one("form-data; filename*=utf-8'en'a%2Fb; name=f").filename, "a/b");
}

TEST(MultipartValid, ContentTypeAndRawHeadersOfAPart) {
    MultipartParser p(kB);
    struct Sink : Recorder {
        std::string disposition, custom;
        bool on_part(const PartHead& h) override {
            disposition = h.find("content-disposition")->value;
            custom = h.find("X-Custom") ? std::string(h.find("X-Custom")->value) : "missing";
            EXPECT_EQ(h.header_count, 3u);
            EXPECT_EQ(h.find("Nope"), nullptr);
            return Recorder::on_part(h);
        }
    } sink;
    std::string body = body_of({"Content-Disposition: form-data; name=\"img\"; filename=\"p.png\"\r\n"
                                "Content-Type:   image/png  \r\nX-Custom:\r\n\r\n\x89PNG"});
    EXPECT_EQ(p.feed(body, sink), MultipartStatus::Done);
    ASSERT_EQ(sink.parts.size(), 1u);
    EXPECT_EQ(sink.parts[0].content_type, "image/png");
    EXPECT_EQ(sink.parts[0].data, "\x89PNG");
    EXPECT_EQ(sink.disposition, "form-data; name=\"img\"; filename=\"p.png\"");
    EXPECT_EQ(sink.custom, "");
}

TEST(MultipartValid, BoundaryWithSpacesAndPunctuation) {
    std::string b = "'()+_,-./:=? x";
    Result r = parse_cut(body_of({field("a", "1")}, b), {}, {}, b);
    EXPECT_EQ(r.status, MultipartStatus::Done);
    EXPECT_EQ(r.parts.size(), 1u);
}

// ---------------------------------------------------------------- streaming and memory

TEST(MultipartStreaming, HugePartInSmallFeedsUsesBoundedMemory) {
    MultipartParser p(kB);
    Recorder r;
    std::string head = "--XyZ-boundary\r\n" + field("big", "");
    ASSERT_EQ(p.feed(head, r), MultipartStatus::NeedMore);
    // 16 MiB of data full of near-delimiters ("\r\n--XyZ-bound..."), fed 1000 bytes at a time.
    std::string block(4096, 'a');
    block.replace(100, 12, "\r\n--XyZ-boun");
    block.replace(4090, 6, "\r\n--Xy");  // a near-delimiter across the block edge
    size_t fed = 0, bound = 0;
    const size_t total = 16u << 20;
    std::string chunk;
    while (fed < total) {
        chunk.clear();
        for (size_t i = 0; i < 1000 && fed + i < total; ++i) chunk.push_back(block[(fed + i) % block.size()]);
        ASSERT_EQ(p.feed(chunk, r), MultipartStatus::NeedMore);
        fed += chunk.size();
        // Everything but a possible delimiter prefix has been handed to the sink.
        ASSERT_GE(r.total() + 4 + kB.size(), fed);
        bound = std::max(bound, p.buffered_bytes());
    }
    EXPECT_EQ(p.feed("\r\n--XyZ-boundary--", r), MultipartStatus::Done);
    EXPECT_EQ(r.parts[0].data.size(), total);
    EXPECT_EQ(r.parts[0].data.compare(100, 12, "\r\n--XyZ-boun"), 0);
    EXPECT_LE(bound, 2 * kMaxPartHeaderBytes + 1024);  // nothing grows with the part
}

TEST(MultipartStreaming, HeldBackBytesAreReleasedWhenTheMatchFails) {
    MultipartParser p(kB);
    Recorder r;
    ASSERT_EQ(p.feed("--XyZ-boundary\r\n" + field("a", "x\r\n--XyZ-bou"), r), MultipartStatus::NeedMore);
    EXPECT_EQ(r.parts[0].data, "x");  // the rest may be a delimiter
    ASSERT_EQ(p.feed("nd", r), MultipartStatus::NeedMore);
    EXPECT_EQ(r.parts[0].data, "x");
    ASSERT_EQ(p.feed("X\r", r), MultipartStatus::NeedMore);
    EXPECT_EQ(r.parts[0].data, "x\r\n--XyZ-boundX");
    ASSERT_EQ(p.feed("\n--XyZ-boundary--", r), MultipartStatus::Done);
    EXPECT_EQ(r.parts[0].data, "x\r\n--XyZ-boundX");
}

// ---------------------------------------------------------------- multipart_boundary

TEST(MultipartBoundary, FromContentType) {
    EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=abc"), "abc");
    EXPECT_EQ(multipart_boundary("Multipart/Form-Data;BOUNDARY=\"a b:c\""), "a b:c");
    EXPECT_EQ(multipart_boundary("multipart/form-data; charset=utf-8; boundary=\"x=y\""), "x=y");
    EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=----=_Part_0.1; charset=utf-8"), "----=_Part_0.1");
    EXPECT_EQ(multipart_boundary("  multipart/form-data ;  boundary = q  "), "q");
    std::string b70(70, 'b');
    EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=" + b70), b70);
}

// ---------------------------------------------------------------- error paths

TEST(MultipartBoundaryErrors, Rejected) {
    EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=" + std::string(71, 'b')), std::nullopt);
    EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=\"\""), std::nullopt);
    EXPECT_EQ(multipart_boundary("multipart/form-data; boundary="), std::nullopt);
    EXPECT_EQ(multipart_boundary("multipart/form-data"), std::nullopt);
    EXPECT_EQ(multipart_boundary("multipart/mixed; boundary=abc"), std::nullopt);
    EXPECT_EQ(multipart_boundary("application/x-www-form-urlencoded"), std::nullopt);
    EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=a; boundary=b"), std::nullopt);
    EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=\"abc"), std::nullopt);
    EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=\"a\\\"b\""), std::nullopt);
    EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=\"ends with space \""), std::nullopt);
    EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=\"tab\tinside\""), std::nullopt);
}

TEST(MultipartErrors, MissingFinalBoundaryFailsAtFinish) {
    std::string body = "--XyZ-boundary\r\n" + field("a", "some data");
    MultipartParser p(kB);
    Recorder r;
    EXPECT_EQ(p.feed(body, r), MultipartStatus::NeedMore);
    EXPECT_EQ(p.finish(), MultipartStatus::Error);
    EXPECT_EQ(p.error(), MultipartError::Truncated);
    EXPECT_EQ(status_for(p.error()), 400);
    EXPECT_FALSE(r.parts[0].ended);
    // Ending right after a delimiter line or inside a head is the same error.
    EXPECT_EQ(parse("--XyZ-boundary\r\n" + field("a", "1") + "\r\n--XyZ-boundary").error, MultipartError::Truncated);
    EXPECT_EQ(parse("--XyZ-boundary\r\nContent-Disp").error, MultipartError::Truncated);
    EXPECT_EQ(parse("--XyZ-boundary\r\n" + field("a", "1") + "\r\n--XyZ-boundary-").error,
              MultipartError::Truncated);
}

TEST(MultipartErrors, NoDelimiterAtAll) {
    EXPECT_EQ(parse("just text, no boundary\r\n").error, MultipartError::NoBoundary);
    EXPECT_EQ(parse("").error, MultipartError::NoBoundary);
    EXPECT_EQ(parse(body_of({field("a", "1")}, "other")).error, MultipartError::NoBoundary);
}

TEST(MultipartErrors, TooManyParts) {
    MultipartLimits limits;
    limits.max_parts = 2;
    EXPECT_EQ(parse(body_of({field("a", "1"), field("b", "2")}), limits).status, MultipartStatus::Done);
    Result r = parse(body_of({field("a", "1"), field("b", "2"), field("c", "3")}), limits);
    EXPECT_EQ(r.error, MultipartError::TooManyParts);
    EXPECT_EQ(status_for(r.error), 413);
    EXPECT_EQ(r.parts.size(), 2u);  // the third head was never announced
}

TEST(MultipartErrors, PartHeadTooLarge) {
    std::string head = field("a", "");  // "Content-Disposition: ...\r\n\r\n"
    MultipartLimits limits;
    limits.max_part_header_bytes = head.size();  // the limit counts the empty line too
    EXPECT_EQ(parse(body_of({head + "x"}), limits).status, MultipartStatus::Done);
    limits.max_part_header_bytes = head.size() - 1;
    Result r = parse(body_of({head + "x"}), limits);
    EXPECT_EQ(r.error, MultipartError::HeadersTooLarge);
    EXPECT_EQ(status_for(r.error), 413);
    // An endless head is cut at the limit, not buffered.
    MultipartParser p(kB);
    Recorder sink;
    p.feed("--XyZ-boundary\r\nX-Long: ", sink);
    MultipartStatus s = MultipartStatus::NeedMore;
    for (int i = 0; i < 100 && s == MultipartStatus::NeedMore; ++i) s = p.feed(std::string(1000, 'v'), sink);
    EXPECT_EQ(p.error(), MultipartError::HeadersTooLarge);
    EXPECT_LE(p.buffered_bytes(), 2 * kMaxPartHeaderBytes + 1024);
}

TEST(MultipartErrors, TooManyHeaderFields) {
    MultipartLimits limits;
    limits.max_headers_per_part = 2;
    std::string two = "X-A: 1\r\nContent-Disposition: form-data; name=a\r\n\r\n";
    EXPECT_EQ(parse(body_of({two}), limits).status, MultipartStatus::Done);
    Result r = parse(body_of({"X-B: 2\r\n" + two}), limits);
    EXPECT_EQ(r.error, MultipartError::TooManyHeaders);
    EXPECT_EQ(status_for(r.error), 413);
}

TEST(MultipartErrors, BareLineEndsAreRejected) {
    // LF-only bodies (some hand-written clients) are refused, not guessed at.
    EXPECT_EQ(parse("--XyZ-boundary\nContent-Disposition: form-data; name=a\n\n1\n--XyZ-boundary--\n").error,
              MultipartError::BareLF);
    EXPECT_EQ(parse("--XyZ-boundary\r\nContent-Disposition: form-data; name=a\n\r\n1\r\n--XyZ-boundary--").error,
              MultipartError::BareLF);
    EXPECT_EQ(parse("--XyZ-boundary\r\nContent-Disposition: form-data; name=a\rX\r\n\r\n").error,
              MultipartError::BareCR);
    EXPECT_EQ(parse("--XyZ-boundary\r\r\n").error, MultipartError::BadDelimiter);
}

TEST(MultipartErrors, DelimiterFollowedByOtherText) {
    EXPECT_EQ(parse("--XyZ-boundaryX\r\n").error, MultipartError::BadDelimiter);
    EXPECT_EQ(parse("--XyZ-boundary -\r\n").error, MultipartError::BadDelimiter);
    EXPECT_EQ(parse("--XyZ-boundary\r\n" + field("a", "1") + "\r\n--XyZ-boundary-x").error,
              MultipartError::BadDelimiter);
    // RFC 2046: no line of a part may start with the delimiter, so such a line is refused.
    EXPECT_EQ(parse(body_of({field("a", "x\r\n--XyZ-boundary and more")})).error, MultipartError::BadDelimiter);
    EXPECT_EQ(parse(body_of({field("a", "--XyZ-boundary at the start")})).error, MultipartError::BadDelimiter);
    EXPECT_EQ(status_for(MultipartError::BadDelimiter), 400);
}

TEST(MultipartErrors, BadPartHeads) {
    auto err = [](std::string_view head) { return parse(body_of({std::string(head) + "\r\n\r\nv"})).error; };
    EXPECT_EQ(err("X-Folded: a\r\n b\r\nContent-Disposition: form-data; name=a"), MultipartError::BadHeader);
    EXPECT_EQ(err("No colon\r\nContent-Disposition: form-data; name=a"), MultipartError::BadHeader);
    EXPECT_EQ(err("Bad name : v\r\nContent-Disposition: form-data; name=a"), MultipartError::BadHeader);
    EXPECT_EQ(err(": v\r\nContent-Disposition: form-data; name=a"), MultipartError::BadHeader);
    EXPECT_EQ(err(std::string("X-Nul: a") + '\0' + "b\r\nContent-Disposition: form-data; name=a"),
              MultipartError::BadHeader);
    EXPECT_EQ(err("Content-Type: text/plain"), MultipartError::BadDisposition);
    EXPECT_EQ(err("Content-Disposition: attachment; name=a"), MultipartError::BadDisposition);
    EXPECT_EQ(err("Content-Disposition: form-data"), MultipartError::BadDisposition);
    EXPECT_EQ(err("Content-Disposition: form-data; filename=x"), MultipartError::BadDisposition);
    EXPECT_EQ(err("Content-Disposition: form-data; name=a; name=b"), MultipartError::BadDisposition);
    EXPECT_EQ(err("Content-Disposition: form-data; name=\"a"), MultipartError::BadDisposition);
    EXPECT_EQ(err("Content-Disposition: form-data; name=a b"), MultipartError::BadDisposition);
    EXPECT_EQ(err("Content-Disposition: form-data; name=a; filename*=latin1''x"), MultipartError::BadDisposition);
    EXPECT_EQ(err("Content-Disposition: form-data; name=a; filename*=UTF-8''%zz"), MultipartError::BadDisposition);
    // What filename* decodes to is held to what a plain filename may hold: no control
    // character (a CR LF would throw when echoed in a header), and UTF-8 as it says.
    for (const char* bad : {"a%0D%0Ab.txt", "a%00b", "tab%09", "del%7F", "%FF.txt", "%C3", "%C0%AF", "%ED%A0%80"})
        EXPECT_EQ(err(std::string("Content-Disposition: form-data; name=a; filename*=UTF-8''") + bad),
                  MultipartError::BadDisposition) << bad;
    EXPECT_EQ(err("Content-Disposition: form-data; name=a\r\nContent-Disposition: form-data; name=b"),
              MultipartError::BadDisposition);
    EXPECT_EQ(parse(body_of({"\r\nno head at all"})).error, MultipartError::BadDisposition);
}

TEST(MultipartErrors, InvalidBoundaryGivenToTheParser) {
    for (std::string_view b : {std::string_view(""), std::string_view("trailing "), std::string_view("cr\r")}) {
        MultipartParser p(b);
        Recorder r;
        EXPECT_EQ(p.feed("--x\r\n", r), MultipartStatus::Error);
        EXPECT_EQ(p.error(), MultipartError::BadBoundary);
    }
    std::string b71(71, 'b');
    MultipartParser p(b71);
    Recorder r;
    EXPECT_EQ(p.feed("", r), MultipartStatus::Error);
}

TEST(MultipartErrors, SinkCanStopTheParse) {
    MultipartParser p(kB);
    Recorder r;
    r.refuse_data_after = 3;  // e.g. an upload over the application's size limit
    EXPECT_EQ(p.feed(body_of({field("a", "12"), field("b", "3456"), field("c", "7")}), r), MultipartStatus::Error);
    EXPECT_EQ(p.error(), MultipartError::Aborted);
    EXPECT_EQ(r.parts.size(), 2u);
    MultipartParser q(kB);
    Recorder refuse;
    refuse.refuse_part = true;
    EXPECT_EQ(q.feed(body_of({field("a", "1")}), refuse), MultipartStatus::Error);
    EXPECT_EQ(q.error(), MultipartError::Aborted);
    EXPECT_EQ(refuse.data_calls, 0u);
}

TEST(MultipartErrors, ErrorsAreSticky) {
    MultipartParser p(kB);
    Recorder r;
    EXPECT_EQ(p.feed("--XyZ-boundaryX", r), MultipartStatus::Error);
    EXPECT_EQ(p.feed(body_of({field("a", "1")}), r), MultipartStatus::Error);
    EXPECT_EQ(p.finish(), MultipartStatus::Error);
    EXPECT_EQ(p.error(), MultipartError::BadDelimiter);
    EXPECT_TRUE(r.parts.empty());
    EXPECT_FALSE(describe(p.error()).empty());
}

}  // namespace
}  // namespace kiln::http
