// Fuzzes WebSocket framing (http/ws_frame.cpp): the input is what a client sends
// after the handshake. Frames are parsed one after another, unmasked, fed through the
// Reassembler, until one is refused or the bytes run out. Checked: a parsed head never
// claims more than the input and the limits allow, every refusal names a close code,
// and a text message the Reassembler accepts is UTF-8 by an independent check.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "http/ws_frame.hpp"

namespace ws = kiln::http::ws;

namespace {

// A second opinion on UTF-8 (RFC 3629), whole strings only.
bool utf8(std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
        auto c = static_cast<uint8_t>(s[i]);
        size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
        for (size_t k = 1; k < n; ++k) {
            auto d = static_cast<uint8_t>(s[i + k]);
            if ((d >> 6) != 2) return false;
            cp = cp << 6 | (d & 0x3F);
        }
        if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += n;
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string in(reinterpret_cast<const char*>(data), size);
    const ws::FrameRules rules{.client_frames = true, .rsv1_allowed = false, .max_payload = 4096};
    ws::Reassembler r(8192);
    std::string message;
    size_t at = 0;
    for (int frames = 0; frames < 1000 && at < in.size(); ++frames) {
        ws::FrameParse p = ws::parse_frame_head(std::string_view(in).substr(at), rules);
        if (p.status == ws::FrameStatus::Incomplete) break;
        if (p.status == ws::FrameStatus::Error) {
            FUZZ_CHECK(p.close_code == ws::kCloseProtocol || p.close_code == ws::kCloseTooBig);
            break;
        }
        FUZZ_CHECK(p.head.head_size >= 6 && p.head.head_size <= 14 && p.head.length <= rules.max_payload);
        if (in.size() - at - p.head.head_size < p.head.length) break;  // the payload is still to come
        char* payload = in.data() + at + p.head.head_size;
        auto len = static_cast<size_t>(p.head.length);
        ws::unmask(payload, len, p.head.mask);
        ws::Reassembler::Step s = r.begin(p.head);
        if (s.ok) s = r.payload(std::string_view(payload, len));
        if (s.ok) s = r.end();
        if (!s.ok) {
            FUZZ_CHECK(s.close_code == ws::kCloseProtocol || s.close_code == ws::kCloseTooBig ||
                       s.close_code == ws::kCloseInvalidData);
            break;
        }
        if (!ws::is_control(p.head.opcode)) message.append(payload, len);
        if (p.head.opcode == ws::Opcode::Close) (void)ws::valid_close_payload(std::string_view(payload, len));
        if (r.message_done()) {
            if (r.message_opcode() == ws::Opcode::Text) FUZZ_CHECK(utf8(message));
            message.clear();
        }
        at += p.head.head_size + len;
    }
    return 0;
}
