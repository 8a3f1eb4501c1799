// Content codings (http/compress) decoded by the libraries' own decoders, whole and
// streamed write by write; and the policy (app/compression): which responses are
// coded, with what, and the headers that say so.
#include <brotli/decode.h>
#include <gtest/gtest.h>
#include <zlib.h>
#include <malloc.h>
#include <zstd.h>

#include <memory>
#include <string>
#include <vector>

#include <kiln/server.hpp>

#include "app/compression.hpp"
#include "http/compress.hpp"
#include "http/response.hpp"

using kiln::http::Coding;

namespace {

std::string gunzip(const std::string& in) {
    z_stream z{};
    EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
    std::string out(1 << 20, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    int rc = inflate(&z, Z_FINISH);
    out.resize(out.size() - z.avail_out);
    inflateEnd(&z);
    return rc == Z_STREAM_END ? out : "(gzip: " + std::to_string(rc) + ")";
}

std::string unbrotli(const std::string& in) {
    std::string out(1 << 20, '\0');
    size_t n = out.size();
    if (BrotliDecoderDecompress(in.size(), reinterpret_cast<const uint8_t*>(in.data()), &n,
                                reinterpret_cast<uint8_t*>(out.data())) != BROTLI_DECODER_RESULT_SUCCESS)
        return "(brotli failed)";
    out.resize(n);
    return out;
}

std::string unzstd(const std::string& in) {
    ZSTD_DCtx* d = ZSTD_createDCtx();
    std::string out;
    ZSTD_inBuffer input{in.data(), in.size(), 0};
    char buf[65536];
    size_t rc = 1;
    while (input.pos < input.size) {
        ZSTD_outBuffer output{buf, sizeof buf, 0};
        rc = ZSTD_decompressStream(d, &output, &input);
        if (ZSTD_isError(rc)) break;
        out.append(buf, output.pos);
    }
    ZSTD_freeDCtx(d);
    return ZSTD_isError(rc) || rc != 0 ? "(zstd failed)" : out;
}

std::string decode(Coding c, const std::string& in) {
    switch (c) {
        case Coding::Gzip: return gunzip(in);
        case Coding::Brotli: return unbrotli(in);
        case Coding::Zstd: return unzstd(in);
        case Coding::Identity: return in;
    }
    return {};
}

std::string page() {
    std::string s;
    for (int i = 0; i < 400; ++i) s += "<li>item " + std::to_string(i) + " of the kiln page</li>\n";
    return s;
}

class Codings : public ::testing::TestWithParam<Coding> {};

TEST_P(Codings, AWholeBodyRoundTripsAndShrinks) {
    std::string in = page(), out;
    ASSERT_TRUE(kiln::http::compress(GetParam(), in, {}, &out));
    EXPECT_LT(out.size(), in.size() / 4);
    EXPECT_EQ(decode(GetParam(), out), in);
    std::string empty;  // and nothing at all
    ASSERT_TRUE(kiln::http::compress(GetParam(), "", {}, &empty));
    EXPECT_EQ(decode(GetParam(), empty), "");
}

TEST_P(Codings, AStreamIsDecodableAfterEveryWrite) {
    auto enc = kiln::http::StreamEncoder::make(GetParam(), {});
    ASSERT_NE(enc, nullptr);
    std::string wire, sent;
    for (int i = 0; i < 5; ++i) {
        std::string piece = "event " + std::to_string(i) + ": " + std::string(300, static_cast<char>('a' + i)) + "\n";
        size_t before = wire.size();
        ASSERT_TRUE(enc->write(piece, &wire));
        EXPECT_GT(wire.size(), before);  // flushed: the piece is on the wire now, not held back
        sent += piece;
    }
    ASSERT_TRUE(enc->finish(&wire));
    EXPECT_EQ(decode(GetParam(), wire), sent);
}

INSTANTIATE_TEST_SUITE_P(All, Codings, ::testing::Values(Coding::Gzip, Coding::Brotli, Coding::Zstd));

TEST(Negotiation, TheClientsQvaluesThenTheSmallestOutput) {
    using kiln::app::preferred_coding;
    EXPECT_EQ(preferred_coding(""), Coding::Identity);  // no header: nothing is guessed
    EXPECT_EQ(preferred_coding("gzip"), Coding::Gzip);
    EXPECT_EQ(preferred_coding("gzip, deflate, br, zstd"), Coding::Zstd);  // ties: the cheapest good one
    EXPECT_EQ(preferred_coding("gzip, deflate, br"), Coding::Brotli);
    EXPECT_EQ(preferred_coding("gzip, zstd"), Coding::Zstd);
    EXPECT_EQ(preferred_coding("br;q=0.5, gzip;q=0.9"), Coding::Gzip);
    EXPECT_EQ(preferred_coding("br;q=0, gzip;q=0"), Coding::Identity);
    EXPECT_EQ(preferred_coding("*"), Coding::Zstd);
    EXPECT_EQ(preferred_coding("*;q=0.1, zstd;q=0"), Coding::Brotli);
    EXPECT_EQ(preferred_coding("identity"), Coding::Identity);
}

TEST(Negotiation, AStreamTakesGzipWheneverTheClientTakesItAsReadily) {
    using kiln::app::preferred_stream_coding;
    EXPECT_EQ(preferred_stream_coding("gzip, deflate, br, zstd"), Coding::Gzip);
    EXPECT_EQ(preferred_stream_coding("*"), Coding::Gzip);
    EXPECT_EQ(preferred_stream_coding("br, zstd"), Coding::Zstd);
    EXPECT_EQ(preferred_stream_coding("gzip;q=0.5, br"), Coding::Brotli);
    EXPECT_EQ(preferred_stream_coding(""), Coding::Identity);
}

// A stream keeps its coder for as long as it runs (server-sent events: hours), so a
// slow reader per coder must cost tens of KiB, not the MiB of a whole body's tables
// (zstd level 3 held 1,661 KiB, brotli quality 4 1,130 KiB after 400 KB).
TEST(StreamMemory, EachCoderHoldsLittleAfterAlongStream) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "mallinfo2 does not see the sanitizer's allocator";
#else
    std::string chunk;
    for (int i = 0; i < 2000; ++i) chunk += "abcdefghij klmnop <div>"[i * 7 % 23];
    for (Coding c : {Coding::Gzip, Coding::Brotli, Coding::Zstd}) {
        constexpr int kCoders = 20;
        std::vector<std::unique_ptr<kiln::http::StreamEncoder>> coders;
        auto heap = [] {
            struct mallinfo2 m = mallinfo2();
            return static_cast<long>(m.uordblks + m.hblkhd);
        };
        long before = heap();
        std::string out;
        for (int i = 0; i < kCoders; ++i) {
            coders.push_back(kiln::http::StreamEncoder::make(c, {}));
            ASSERT_TRUE(coders.back());
            for (int w = 0; w < 200; ++w) {  // 400 KB, a little different each write
                chunk[w % chunk.size()]++;
                out.clear();
                ASSERT_TRUE(coders.back()->write(chunk, &out));
            }
        }
        long per_coder = (heap() - before) / kCoders;
        EXPECT_LT(per_coder, 320 * 1024) << kiln::http::coding_name(c) << ": " << per_coder / 1024 << " KiB";
    }
#endif
}

kiln::app::CompressionPolicy policy() {
    return {.enabled = true, .min_size = 1024, .types = kiln::ServerOptions().compression_types, .levels = {}};
}

TEST(Policy, ATextBodyIsCodedAndSaysSo) {
    kiln::http::Response res;
    res.send(page(), "text/html; charset=utf-8");
    kiln::app::compress_body(policy(), "gzip, br", res);
    EXPECT_EQ(res.header("content-encoding").value_or(""), "br");
    EXPECT_EQ(res.header("vary").value_or(""), "Accept-Encoding");
    EXPECT_EQ(unbrotli(res.body()), page());
}

TEST(Policy, WhatIsNotCoded) {
    auto check = [](auto setup, std::string_view accept, bool vary) {
        kiln::http::Response res;
        setup(res);
        std::string before = res.body();
        auto coding = res.header("content-encoding");
        std::string coding_before = coding ? std::string(*coding) : "";
        kiln::app::compress_body(policy(), accept, res);
        EXPECT_EQ(res.body(), before);
        EXPECT_EQ(res.header("content-encoding").value_or(""), coding_before);
        EXPECT_EQ(res.header("vary").has_value(), vary);
    };
    check([](kiln::http::Response& r) { r.send(page(), "text/html"); }, "", true);  // the client takes none
    check([](kiln::http::Response& r) { r.send(std::string(1000, 'x'), "text/plain"); }, "gzip", false);  // small
    check([](kiln::http::Response& r) { r.send(page(), "image/png"); }, "gzip", false);  // not text
    check([](kiln::http::Response& r) { r.send(page(), "text/html"); r.header("Cache-Control", "public, no-transform"); },
          "gzip", false);
    check([](kiln::http::Response& r) { r.send(page(), "text/html"); r.header("ETag", "\"1\""); }, "gzip", false);
    check([](kiln::http::Response& r) { r.send(page(), "text/html"); r.status(206); }, "gzip", false);
    check([](kiln::http::Response& r) { r.send(page(), "text/html"); r.header("Content-Encoding", "gzip"); }, "br", false);
    kiln::app::CompressionPolicy off = policy();
    off.enabled = false;
    kiln::http::Response res;
    res.send(page(), "text/html");
    kiln::app::compress_body(off, "gzip", res);
    EXPECT_FALSE(res.header("content-encoding"));
}

TEST(Policy, AnExistingVaryIsExtended) {
    kiln::http::Response res;
    res.send(page(), "application/json");
    res.header("Vary", "Cookie");
    kiln::app::compress_body(policy(), "zstd", res);
    EXPECT_EQ(res.header("vary").value_or(""), "Cookie, Accept-Encoding");
    EXPECT_EQ(unzstd(res.body()), page());
}

}  // namespace
