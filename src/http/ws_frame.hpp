// WebSocket framing (RFC 6455 §5), a pure parser and writer: bytes in, a frame head
// out, no I/O and no allocation. A WebSocket session (ws_session.hpp) unmasks
// payloads in place and feeds messages through a Reassembler, which keeps the
// fragmentation rules and checks text as UTF-8 across fragments. Every refusal
// carries the close code RFC 6455 §7.4.1 gives it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::http::ws {

enum class Opcode : uint8_t { Continuation = 0, Text = 1, Binary = 2, Close = 8, Ping = 9, Pong = 10 };

inline bool is_control(Opcode op) { return static_cast<uint8_t>(op) >= 8; }

// Close codes used here (RFC 6455 §7.4.1).
inline constexpr uint16_t kCloseNormal = 1000;
inline constexpr uint16_t kCloseProtocol = 1002;
inline constexpr uint16_t kCloseInvalidData = 1007;  // text that is not UTF-8
inline constexpr uint16_t kCloseTooBig = 1009;

struct FrameHead {
    bool fin = false;
    bool rsv1 = false;          // permessage-deflate's "compressed" bit
    Opcode opcode = Opcode::Continuation;
    bool masked = false;
    uint8_t mask[4] = {};
    uint64_t length = 0;        // payload bytes
    size_t head_size = 0;       // bytes before the payload (2 to 14)
};

enum class FrameStatus : uint8_t { Complete, Incomplete, Error };

struct FrameParse {
    FrameStatus status = FrameStatus::Incomplete;
    uint16_t close_code = 0;    // on Error: what to close with
    const char* why = "";       // on Error: for the log and the close reason
    FrameHead head;
};

struct FrameRules {
    bool client_frames = true;       // a server reads masked frames only
    bool rsv1_allowed = false;       // permessage-deflate was negotiated
    uint64_t max_payload = 16 << 20; // larger: 1009
};

// The head of the frame at the start of buf (its payload may not have arrived).
FrameParse parse_frame_head(std::string_view buf, const FrameRules& rules = {});

// XORs n bytes with the mask, as if they started `offset` bytes into the payload.
void unmask(char* data, size_t n, const uint8_t mask[4], uint64_t offset = 0);

// An unmasked (server) frame head for a payload of `length` bytes, written to out;
// returns its size (2 to kMaxServerHead bytes).
inline constexpr size_t kMaxServerHead = 10;
size_t write_frame_head(char* out, Opcode op, bool fin, uint64_t length, bool rsv1 = false);

// A close frame's payload: empty, or a code (not 1005, 1006, 1015 nor unassigned)
// and a UTF-8 reason.
bool valid_close_payload(std::string_view payload);
bool valid_close_code(uint16_t code);

// UTF-8 checked piece by piece (a character may straddle two fragments).
class Utf8Stream {
public:
    bool feed(std::string_view bytes);  // false at the first byte that cannot be UTF-8
    bool complete() const { return need_ == 0; }  // no character left unfinished
    void reset() {
        need_ = 0;
        lo_ = 0x80;
        hi_ = 0xBF;
    }

private:
    uint32_t need_ = 0;  // continuation bytes still due
    uint32_t lo_ = 0x80, hi_ = 0xBF;  // the next byte's range (overlongs, surrogates)
};

// The fragmentation rules (§5.4): a message is a data frame and its continuations;
// control frames may come between them and are whole. Feed each frame's head, then its
// (unmasked) payload; a message's end is reported when its final fragment is done.
class Reassembler {
public:
    struct Step {
        bool ok = true;
        uint16_t close_code = 0;
        const char* why = "";
    };
    explicit Reassembler(uint64_t max_message = 16 << 20) : max_message_(max_message) {}
    Step begin(const FrameHead& head);        // a frame starts
    Step payload(std::string_view bytes);     // part of its payload, unmasked
    Step end();                               // the frame's payload is complete
    bool message_done() const { return done_; }  // after end(): a whole data message
    Opcode message_opcode() const { return message_op_; }

private:
    uint64_t max_message_;
    uint64_t message_bytes_ = 0;
    Opcode message_op_ = Opcode::Continuation;
    Opcode frame_op_ = Opcode::Continuation;
    bool in_message_ = false;  // a fragmented message is under way
    bool frame_fin_ = false;
    bool done_ = false;
    bool compressed_ = false;  // the message's first frame had RSV1 (not checked as text here)
    Utf8Stream utf8_;
};

}  // namespace kiln::http::ws
