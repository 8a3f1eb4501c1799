// permessage-deflate (RFC 7692): the offer a client makes in Sec-WebSocket-Extensions,
// the answer kiln gives, and the coding of one message.
//
// kiln always answers with server_no_context_takeover and client_no_context_takeover
// (RFC 7692 §7.1.1 lets a server add both): every message is coded on its own, so the
// zlib streams belong to the loop thread, reset between messages, and an idle
// WebSocket holds no compression state at all (a stream with context is ~300 KiB).
// The price is a lower ratio for runs of small similar messages.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::http {

struct WsDeflate {
    bool enabled = false;
    int server_window_bits = 15;  // what kiln's deflater may use (9..15)
    int level = 1;                // zlib's level for what kiln sends (1..9)
};

struct WsDeflateAnswer {
    WsDeflate params;
    std::string header;  // the Sec-WebSocket-Extensions value to answer with
};

// The first acceptable permessage-deflate offer in `offers` (one or more header
// values, comma-separated extensions with ;-parameters), or nullopt if none is: an
// offer with an unknown or repeated parameter or a bad value is skipped (RFC 7692
// §5.1), as is server_max_window_bits=8, which zlib cannot honour.
std::optional<WsDeflateAnswer> negotiate_deflate(std::string_view offers);

// A message's payload, deflated as RFC 7692 §7.2.1 says (the final empty block's
// 00 00 FF FF removed), at zlib `level` (clamped to 1..9). The loop thread's stream,
// reset after each message.
void deflate_message(std::string_view payload, int window_bits, int level, std::string& out);

// A compressed message's payload inflated into out; false if it is not valid
// DEFLATE data or would inflate past `limit` bytes (then *too_big says which).
bool inflate_message(std::string_view payload, uint64_t limit, std::string& out, bool* too_big);

}  // namespace kiln::http
