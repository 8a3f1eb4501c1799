// permessage-deflate (RFC 7692): which offers kiln takes and what it answers, and
// messages through its coder and a plain zlib (as a browser's) both ways.
#include "http/ws_deflate.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>

using kiln::http::deflate_message;
using kiln::http::inflate_message;
using kiln::http::negotiate_deflate;

namespace {

// A raw DEFLATE stream of `text` ending in a sync flush, its 00 00 FF FF removed.
std::string client_deflate(const std::string& text) {
    z_stream z{};
    deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    std::string out(text.size() + 256, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = static_cast<uInt>(text.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_SYNC_FLUSH);
    out.resize(out.size() - z.avail_out);
    deflateEnd(&z);
    return out.substr(0, out.size() - 4);
}

std::string client_inflate(std::string data) {
    data.append("\x00\x00\xff\xff", 4);
    z_stream z{};
    inflateInit2(&z, -15);
    std::string out(1 << 20, '\0');
    z.next_in = reinterpret_cast<Bytef*>(data.data());
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    inflate(&z, Z_SYNC_FLUSH);
    out.resize(out.size() - z.avail_out);
    inflateEnd(&z);
    return out;
}

}  // namespace

TEST(WsDeflate, ThePlainOfferIsAnsweredWithoutContextTakeover) {
    auto a = negotiate_deflate("permessage-deflate");
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->params.enabled);
    EXPECT_EQ(a->params.server_window_bits, 15);
    EXPECT_EQ(a->header, "permessage-deflate; server_no_context_takeover; client_no_context_takeover");
}

TEST(WsDeflate, WindowBitsAreHonouredAndEchoed) {
    auto a = negotiate_deflate("permessage-deflate; client_max_window_bits; server_max_window_bits=10");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->params.server_window_bits, 10);
    EXPECT_EQ(a->header, "permessage-deflate; server_no_context_takeover; client_no_context_takeover; "
                         "server_max_window_bits=10; client_max_window_bits=15");
    a = negotiate_deflate("permessage-deflate; client_max_window_bits=\"12\"");  // a quoted value
    ASSERT_TRUE(a);
    EXPECT_NE(a->header.find("client_max_window_bits=12"), std::string::npos);
}

TEST(WsDeflate, BadOffersAreSkippedForTheNextOne) {
    EXPECT_FALSE(negotiate_deflate("permessage-deflate; unknown_param"));
    EXPECT_FALSE(negotiate_deflate("permessage-deflate; server_max_window_bits"));       // needs a value
    EXPECT_FALSE(negotiate_deflate("permessage-deflate; server_max_window_bits=16"));
    EXPECT_FALSE(negotiate_deflate("permessage-deflate; server_max_window_bits=08"));
    EXPECT_FALSE(negotiate_deflate("permessage-deflate; server_max_window_bits=8"));     // zlib cannot
    EXPECT_FALSE(negotiate_deflate("permessage-deflate; client_no_context_takeover; client_no_context_takeover"));
    EXPECT_FALSE(negotiate_deflate("permessage-deflate; server_no_context_takeover=1"));
    EXPECT_FALSE(negotiate_deflate("x-webkit-deflate-frame"));
    EXPECT_FALSE(negotiate_deflate(""));
    auto a = negotiate_deflate("foo; a=\"x,y\", permessage-deflate; server_max_window_bits=8, "
                               "permessage-deflate; server_max_window_bits=9");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->params.server_window_bits, 9);
}

TEST(WsDeflate, MessagesRoundTripBothWays) {
    std::string text;
    for (int i = 0; i < 2000; ++i) text += "message " + std::to_string(i % 17) + " ";
    std::string coded;
    deflate_message(text, 15, 1, coded);
    EXPECT_LT(coded.size(), text.size() / 4);
    EXPECT_EQ(client_inflate(coded), text);
    deflate_message("", 15, 1, coded);  // an empty message still codes to something
    EXPECT_EQ(client_inflate(coded), "");

    std::string out;
    bool too_big = true;
    ASSERT_TRUE(inflate_message(client_deflate(text), 1 << 20, out, &too_big));
    EXPECT_FALSE(too_big);
    EXPECT_EQ(out, text);
    // The same stream again: the loop's inflater was reset in between.
    ASSERT_TRUE(inflate_message(client_deflate("second"), 1 << 20, out, &too_big));
    EXPECT_EQ(out, "second");
}

TEST(WsDeflate, TheLevelIsTheOneAskedForEachMessage) {
    // Words drawn from a small vocabulary by a fixed generator: text with matches to
    // find, where a longer search (level 9) finds more than a short one (level 1).
    const char* words[] = {"kiln", "fires", "clay", "at", "a", "high", "heat", "and", "the", "glaze", "sets"};
    std::string text;
    uint32_t x = 12345;
    for (int i = 0; i < 20000; ++i) {
        x = x * 1103515245u + 12345u;
        text += words[(x >> 16) % 11];
        text += ' ';
    }
    std::string best, fast, again;
    deflate_message(text, 15, 9, best);
    deflate_message(text, 15, 1, fast);
    deflate_message(text, 15, 9, again);  // the same thread's stream, set back to 9
    EXPECT_LT(best.size(), fast.size());
    EXPECT_EQ(again, best);
    EXPECT_EQ(client_inflate(best), text);
    EXPECT_EQ(client_inflate(fast), text);
    std::string clamped;
    deflate_message(text, 15, 0, clamped);
    EXPECT_EQ(clamped, fast) << "below 1 is 1";
    deflate_message(text, 15, 42, clamped);
    EXPECT_EQ(clamped, best) << "above 9 is 9";
}

TEST(WsDeflate, ABombStopsAtTheLimit) {
    std::string zeros(10 << 20, '\0');
    std::string out;
    bool too_big = false;
    EXPECT_FALSE(inflate_message(client_deflate(zeros), 1 << 20, out, &too_big));
    EXPECT_TRUE(too_big);
    EXPECT_LE(out.size(), (1u << 20) + 1);
}

TEST(WsDeflate, GarbageDoesNotInflate) {
    std::string out;
    bool too_big = false;
    EXPECT_FALSE(inflate_message("\xff\xff\xff\xff garbage", 1 << 20, out, &too_big));
    EXPECT_FALSE(too_big);
    ASSERT_TRUE(inflate_message(client_deflate("after garbage"), 1 << 20, out, &too_big));  // reset after a failure
    EXPECT_EQ(out, "after garbage");
}
