// WebSocket framing (http/ws_frame): heads as RFC 6455 §5.2 lays them out, the
// refusals with their close codes, the fragmentation rules and UTF-8 across fragments.
#include <gtest/gtest.h>

#include <string>

#include "http/ws_frame.hpp"

namespace ws = kiln::http::ws;

namespace {

// A client frame: masked with 37 fa 21 3d (RFC 6455 §5.7's example key).
std::string server_head(ws::Opcode op, bool fin, uint64_t length) {
    char head[ws::kMaxServerHead];
    return std::string(head, ws::write_frame_head(head, op, fin, length));
}

std::string client_frame(uint8_t b0, std::string payload) {
    std::string f(1, static_cast<char>(b0));
    const uint8_t mask[4] = {0x37, 0xfa, 0x21, 0x3d};
    std::string head = server_head(ws::Opcode::Text, true, payload.size());
    f.push_back(static_cast<char>(static_cast<uint8_t>(head[1]) | 0x80));
    f.append(head.substr(2));
    f.append(reinterpret_cast<const char*>(mask), 4);
    ws::unmask(payload.data(), payload.size(), mask);
    return f + payload;
}

TEST(WsFrame, TheRfcsMaskedHello) {
    std::string f = client_frame(0x81, "Hello");
    EXPECT_EQ(f, std::string("\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", 11));
    ws::FrameParse p = ws::parse_frame_head(f);
    ASSERT_EQ(p.status, ws::FrameStatus::Complete);
    EXPECT_TRUE(p.head.fin);
    EXPECT_EQ(p.head.opcode, ws::Opcode::Text);
    EXPECT_EQ(p.head.length, 5u);
    EXPECT_EQ(p.head.head_size, 6u);
    std::string payload = f.substr(p.head.head_size);
    ws::unmask(payload.data(), payload.size(), p.head.mask);
    EXPECT_EQ(payload, "Hello");
    // Unmasking in pieces gives the same bytes.
    std::string again = f.substr(p.head.head_size);
    ws::unmask(again.data(), 2, p.head.mask, 0);
    ws::unmask(again.data() + 2, 3, p.head.mask, 2);
    EXPECT_EQ(again, "Hello");
}

TEST(WsFrame, LengthsInEachForm) {
    for (size_t n : {0u, 125u, 126u, 65535u, 65536u, 1u << 20}) {
        std::string f = client_frame(0x82, std::string(n, 'x'));
        ws::FrameParse p = ws::parse_frame_head(f);
        ASSERT_EQ(p.status, ws::FrameStatus::Complete) << n;
        EXPECT_EQ(p.head.length, n);
        EXPECT_EQ(p.head.head_size, (n < 126 ? 2u : n <= 65535 ? 4u : 10u) + 4u) << n;
        for (size_t cut = 0; cut < p.head.head_size; ++cut)
            EXPECT_EQ(ws::parse_frame_head(f.substr(0, cut)).status, ws::FrameStatus::Incomplete) << n << " " << cut;
    }
}

TEST(WsFrame, RefusalsAndTheirCloseCodes) {
    auto code = [](std::string f, ws::FrameRules rules = {}) {
        ws::FrameParse p = ws::parse_frame_head(f, rules);
        return p.status == ws::FrameStatus::Error ? p.close_code : 0;
    };
    EXPECT_EQ(code(client_frame(0x81 | 0x20, "x")), ws::kCloseProtocol);  // RSV2
    EXPECT_EQ(code(client_frame(0xC1, "x")), ws::kCloseProtocol);         // RSV1 without deflate
    EXPECT_EQ(code(client_frame(0xC1, "x"), {.rsv1_allowed = true}), 0);
    EXPECT_EQ(code(client_frame(0x83, "x")), ws::kCloseProtocol);         // opcode 3
    EXPECT_EQ(code(client_frame(0x0B, "x")), ws::kCloseProtocol);         // opcode 11
    EXPECT_EQ(code(client_frame(0x09, "x")), ws::kCloseProtocol);         // fragmented ping
    EXPECT_EQ(code(client_frame(0x89, std::string(126, 'p'))), ws::kCloseProtocol);
    EXPECT_EQ(code(std::string("\x81\x05Hello", 7)), ws::kCloseProtocol);  // unmasked from a client
    EXPECT_EQ(code(std::string("\x82\xFE\x00\x05\x01\x02\x03\x04", 8)), ws::kCloseProtocol);  // 5 in 16 bits
    EXPECT_EQ(code(std::string("\x82\xFF\x80\x00\x00\x00\x00\x00\x00\x00", 10)), ws::kCloseProtocol);  // top bit
    EXPECT_EQ(code(client_frame(0x82, std::string(2000, 'x')), {.max_payload = 1000}), ws::kCloseTooBig);
}

TEST(WsFrame, ServerHeads) {
    std::string h = server_head(ws::Opcode::Close, true, 2);
    EXPECT_EQ(h, std::string("\x88\x02", 2));
    h = server_head(ws::Opcode::Binary, false, 70000);
    EXPECT_EQ(h, std::string("\x02\x7F\x00\x00\x00\x00\x00\x01\x11\x70", 10));
    ws::FrameParse p = ws::parse_frame_head(h, {.client_frames = false});
    EXPECT_EQ(p.status, ws::FrameStatus::Complete);
    EXPECT_EQ(p.head.length, 70000u);
}

TEST(WsFrame, ClosePayloads) {
    EXPECT_TRUE(ws::valid_close_payload(""));
    EXPECT_FALSE(ws::valid_close_payload("\x03"));
    EXPECT_TRUE(ws::valid_close_payload(std::string("\x03\xE8", 2)));             // 1000
    EXPECT_TRUE(ws::valid_close_payload(std::string("\x03\xE8" "bye \xC3\xA9", 8)));
    EXPECT_FALSE(ws::valid_close_payload(std::string("\x03\xE8\xC3", 3)));         // cut character
    EXPECT_FALSE(ws::valid_close_payload(std::string("\x03\xED", 2)));             // 1005: never sent
    EXPECT_FALSE(ws::valid_close_payload(std::string("\x03\xEE", 2)));             // 1006
    EXPECT_FALSE(ws::valid_close_payload(std::string("\x03\xF7", 2)));             // 1015
    EXPECT_FALSE(ws::valid_close_payload(std::string("\x03\xE7", 2)));             // 999
    EXPECT_TRUE(ws::valid_close_payload(std::string("\x0F\xA0", 2)));              // 4000
    EXPECT_FALSE(ws::valid_close_payload(std::string("\x13\x88", 2)));             // 5000
}

TEST(WsFrame, Utf8AcrossPieces) {
    const std::string euro = "\xE2\x82\xAC", cat = "\xF0\x9F\x90\xB1";
    for (const std::string& s : {euro, cat}) {
        for (size_t cut = 0; cut <= s.size(); ++cut) {
            ws::Utf8Stream u;
            EXPECT_TRUE(u.feed(s.substr(0, cut)));
            EXPECT_EQ(u.complete(), cut == 0 || cut == s.size());
            EXPECT_TRUE(u.feed(s.substr(cut)));
            EXPECT_TRUE(u.complete());
        }
    }
    for (const char* bad : {"\xC0\x80", "\xE0\x80\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xF5", "\x80", "\xFF"}) {
        ws::Utf8Stream u;
        EXPECT_FALSE(u.feed(bad)) << bad;
    }
}

TEST(WsFrame, FragmentationRules) {
    ws::Reassembler r(100);
    auto head = [](ws::Opcode op, bool fin, uint64_t n) {
        ws::FrameHead h;
        h.opcode = op;
        h.fin = fin;
        h.length = n;
        return h;
    };
    // Text in two fragments with a ping between; the euro sign split across them.
    EXPECT_TRUE(r.begin(head(ws::Opcode::Text, false, 3)).ok);
    EXPECT_TRUE(r.payload("a\xE2\x82").ok);
    EXPECT_TRUE(r.end().ok);
    EXPECT_FALSE(r.message_done());
    EXPECT_TRUE(r.begin(head(ws::Opcode::Ping, true, 0)).ok);
    EXPECT_TRUE(r.end().ok);
    EXPECT_FALSE(r.message_done());
    EXPECT_TRUE(r.begin(head(ws::Opcode::Continuation, true, 1)).ok);
    EXPECT_TRUE(r.payload("\xAC").ok);
    EXPECT_TRUE(r.end().ok);
    EXPECT_TRUE(r.message_done());
    EXPECT_EQ(r.message_opcode(), ws::Opcode::Text);

    ws::Reassembler lone;
    EXPECT_EQ(lone.begin(head(ws::Opcode::Continuation, true, 1)).close_code, ws::kCloseProtocol);
    ws::Reassembler twice;
    EXPECT_TRUE(twice.begin(head(ws::Opcode::Binary, false, 1)).ok);
    EXPECT_EQ(twice.begin(head(ws::Opcode::Text, true, 1)).close_code, ws::kCloseProtocol);
    ws::Reassembler big(10);
    EXPECT_TRUE(big.begin(head(ws::Opcode::Binary, false, 6)).ok);
    EXPECT_EQ(big.begin(head(ws::Opcode::Continuation, true, 6)).close_code, ws::kCloseTooBig);
    ws::Reassembler text;
    EXPECT_TRUE(text.begin(head(ws::Opcode::Text, true, 2)).ok);
    EXPECT_EQ(text.payload("\xC3").close_code, 0);
    EXPECT_EQ(text.end().close_code, ws::kCloseInvalidData);  // ends inside a character
}

}  // namespace
