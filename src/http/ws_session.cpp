#include "http/ws_session.hpp"

#include <algorithm>
#include <cstring>

namespace kiln::http {
namespace {
constexpr size_t kKeptMessageBytes = 4096;  // a larger reassembly buffer is freed after use
constexpr uint64_t kInPlaceMax = 256 * 1024;  // larger single frames stream through message_
thread_local std::string coded;             // the loop's scratch for one coded message
thread_local WsOneMessage* one_message = nullptr;
}  // namespace

WsOneMessage::WsOneMessage(std::string_view payload) : payload_(payload), outer_(one_message) { one_message = this; }

WsOneMessage::~WsOneMessage() { one_message = outer_; }

const std::string* WsOneMessage::coded(std::string_view payload, int window_bits, int level) {
    WsOneMessage* m = one_message;
    if (!m || payload.data() != m->payload_.data() || payload.size() != m->payload_.size()) return nullptr;
    for (const Coded& c : m->coded_)
        if (c.window_bits == window_bits && c.level == level) return &c.bytes;
    Coded& c = m->coded_.emplace_back(Coded{window_bits, level, {}});
    deflate_message(payload, window_bits, level, c.bytes);
    return &c.bytes;
}

WsSession::WsSession(WsTransport& transport, std::unique_ptr<WsEndpoint> endpoint, const WsSettings& settings)
    : t_(transport), endpoint_(std::move(endpoint)), settings_(settings), reassembler_(settings.max_message) {}

WsSession::~WsSession() = default;

size_t WsSession::buffered() const { return t_.ws_buffered(); }

void WsSession::write_frame(ws::Opcode op, std::string_view payload, bool rsv1) {
    char head[ws::kMaxServerHead];
    size_t n = ws::write_frame_head(head, op, true, payload.size(), rsv1);
    t_.ws_write(std::string_view(head, n), payload);
    // Any frame (pongs too) can take the backlog past the mark: on_drain says when it
    // falls below again, which a drained() waiting on it needs.
    if (buffered() > settings_.drain_mark) above_mark_ = true;
}

void WsSession::write_close(uint16_t code, std::string_view reason) {
    char payload[125];  // a control frame's most: the code and 123 bytes of reason
    payload[0] = static_cast<char>(code >> 8);
    payload[1] = static_cast<char>(code & 0xFF);
    if (reason.size() > 123) {  // cut at a character's start: the reason must stay UTF-8
        size_t n = 123;
        while (n > 0 && (static_cast<unsigned char>(reason[n]) & 0xC0) == 0x80) --n;
        reason = reason.substr(0, n);
    }
    std::memcpy(payload + 2, reason.data(), reason.size());
    write_frame(ws::Opcode::Close, std::string_view(payload, 2 + reason.size()));
}

void WsSession::cut_slow_reader() {
    // A reader this slow would hold the server's memory: let it go. Its socket (or its
    // HTTP/2 window) is full, so a close frame would not reach it either.
    state_ = State::Closed;
    notify_close(1008, "the client reads too slowly");
    t_.ws_abort();
}

WsSession::Send WsSession::send(ws::Opcode op, std::string_view payload) {
    if (state_ != State::Open || !t_.ws_alive()) return Send::Dropped;
    if (buffered() + payload.size() > settings_.max_backlog) {
        cut_slow_reader();
        return Send::Dropped;
    }
    bool rsv1 = false;
    if (settings_.deflate.enabled) {
        // Every message, even one that does not shrink: RFC 7692 allows sending some
        // uncompressed, but clients in the field (and one Autobahn runner) mishandle it.
        const int bits = settings_.deflate.server_window_bits, level = settings_.deflate.level;
        if (const std::string* once = WsOneMessage::coded(payload, bits, level)) {
            payload = *once;
        } else {
            deflate_message(payload, bits, level, coded);
            payload = coded;
        }
        rsv1 = true;
    }
    write_frame(op, payload, rsv1);
    if (buffered() > settings_.drain_mark) {
        above_mark_ = true;
        return Send::Backlogged;
    }
    return Send::Sent;
}

void WsSession::ping(std::string_view payload) {
    if (state_ != State::Open || !t_.ws_alive()) return;
    write_frame(ws::Opcode::Ping, payload.substr(0, 125));
}

void WsSession::close(uint16_t code, std::string_view reason) {
    if (state_ != State::Open || !t_.ws_alive()) return;
    if (!ws::valid_close_code(code)) code = ws::kCloseNormal;
    write_close(code, reason);
    state_ = State::CloseSent;
    close_code_ = code;
    t_.ws_arm();  // the peer's close is due within the linger timeout
}

void WsSession::fail(uint16_t code, const char* why) {
    // RFC 6455 §7.1.7: fail the connection: our close frame, then the TCP close
    // (lingering, so the frame is not lost to a reset), without waiting for theirs.
    if (state_ == State::Open) write_close(code, why);
    state_ = State::Closed;
    notify_close(code, why);
    t_.ws_end();
}

void WsSession::notify_close(uint16_t code, std::string_view reason) {
    if (notified_) return;
    notified_ = true;
    endpoint_->on_close(code, reason);
}

bool WsSession::receive() {
    awaiting_pong_ = false;  // whatever came, the peer is alive
    while (t_.ws_alive() && state_ != State::Closed && frame()) {
    }
    return t_.ws_alive() && state_ != State::Closed;
}

bool WsSession::frame() {
    net::Buffer& in = t_.ws_input();
    if (!have_head_) {
        ws::FrameRules rules{.client_frames = true, .rsv1_allowed = settings_.deflate.enabled,
                             .max_payload = settings_.max_message};
        ws::FrameParse p = ws::parse_frame_head(in.readable(), rules);
        if (p.status == ws::FrameStatus::Incomplete) return false;
        if (p.status == ws::FrameStatus::Error) {
            fail(p.close_code, p.why);
            return false;
        }
        head_ = p.head;
        in.consume(head_.head_size);
        have_head_ = true;
        payload_done_ = 0;
        if (!ws::is_control(head_.opcode) && state_ == State::Open) {
            ws::Reassembler::Step st = reassembler_.begin(head_);
            if (!st.ok) {
                fail(st.close_code, st.why);
                return false;
            }
            if (head_.opcode != ws::Opcode::Continuation) compressed_ = head_.rsv1;
        }
    }
    if (ws::is_control(head_.opcode)) {
        if (in.size() < head_.length) return false;  // at most 125 bytes: taken whole
        char payload[125];  // taken out first: answering may end the connection and its buffer
        size_t n = static_cast<size_t>(head_.length);
        std::memcpy(payload, in.readable_data(), n);
        in.consume(n);
        ws::unmask(payload, n, head_.mask);
        have_head_ = false;
        return control(head_.opcode, std::string_view(payload, n));
    }
    if (in_place()) {
        // A whole message in one frame of moderate size: wait until all of it is in the
        // buffer, then unmask, check and deliver it there, with no copy.
        if (in.size() < head_.length) return false;
        size_t n = static_cast<size_t>(head_.length);
        char* p = in.readable_data();
        ws::unmask(p, n, head_.mask);
        std::string_view payload(p, n);
        have_head_ = false;
        if (state_ != State::Open) {
            in.consume(n);
            return true;
        }
        ws::Reassembler::Step st = reassembler_.payload(payload);
        if (st.ok) st = reassembler_.end();
        if (!st.ok) {
            fail(st.close_code, st.why);
            return false;
        }
        if (!deliver(reassembler_.message_opcode(), payload)) return false;
        in.consume(n);
        return true;
    }
    uint64_t left = head_.length - payload_done_;
    size_t n = static_cast<size_t>(std::min<uint64_t>(in.size(), left));
    if (n == 0 && left > 0) return false;
    char* p = in.readable_data();
    ws::unmask(p, n, head_.mask, payload_done_);
    std::string_view piece(p, n);
    payload_done_ += n;
    if (state_ != State::Open) {  // after our close: read to stay in frame, nothing delivered
        in.consume(n);
        if (payload_done_ == head_.length) have_head_ = false;
        return true;
    }
    ws::Reassembler::Step st = reassembler_.payload(piece);
    if (!st.ok) {
        fail(st.close_code, st.why);
        return false;
    }
    message_.append(piece);
    if (payload_done_ < head_.length) {
        in.consume(n);
        return false;  // the rest of the frame is still on its way
    }
    have_head_ = false;
    st = reassembler_.end();
    if (!st.ok) {
        fail(st.close_code, st.why);
        return false;
    }
    if (!reassembler_.message_done()) {
        in.consume(n);
        return true;
    }
    bool go = deliver(reassembler_.message_opcode(), message_);
    if (!go) return false;  // closing: the connection may have dropped its buffer already
    in.consume(n);
    if (message_.capacity() > kKeptMessageBytes) std::string().swap(message_);
    else message_.clear();
    return go;
}

bool WsSession::deliver(ws::Opcode op, std::string_view data) {
    if (compressed_) {
        bool too_big = false;
        thread_local std::string inflated;
        if (!inflate_message(data, settings_.max_message, inflated, &too_big)) {
            fail(too_big ? ws::kCloseTooBig : ws::kCloseInvalidData,
                 too_big ? "message larger than the limit once inflated" : "compressed message that does not inflate");
            return false;
        }
        if (op == ws::Opcode::Text) {
            ws::Utf8Stream utf8;
            if (!utf8.feed(inflated) || !utf8.complete()) {
                fail(ws::kCloseInvalidData, "text message that is not UTF-8");
                return false;
            }
        }
        endpoint_->on_message(op, inflated);
        if (inflated.capacity() > (1u << 20)) std::string().swap(inflated);
    } else {
        endpoint_->on_message(op, data);
    }
    return t_.ws_alive() && state_ != State::Closed;
}

bool WsSession::control(ws::Opcode op, std::string_view payload) {
    switch (op) {
        case ws::Opcode::Ping:
            if (state_ != State::Open) return true;
            if (buffered() + payload.size() > settings_.max_backlog) {  // pings it does not read the answers of
                cut_slow_reader();
                return false;
            }
            write_frame(ws::Opcode::Pong, payload);
            return true;
        case ws::Opcode::Pong:
            return true;
        case ws::Opcode::Close: {
            if (!ws::valid_close_payload(payload)) {
                fail(ws::kCloseProtocol, "invalid close frame");
                return false;
            }
            uint16_t code = 1005;  // none given
            std::string_view reason;
            if (payload.size() >= 2) {
                code = static_cast<uint16_t>(static_cast<uint8_t>(payload[0]) << 8 | static_cast<uint8_t>(payload[1]));
                reason = payload.substr(2);
            }
            if (state_ == State::Open) {
                // Echo the code (RFC 6455 §5.5.1), then close: the server closes TCP first.
                write_frame(ws::Opcode::Close, payload.substr(0, std::min<size_t>(payload.size(), 2)));
                state_ = State::Closed;
                notify_close(code, reason);
            } else {
                state_ = State::Closed;
                notify_close(close_code_, {});
            }
            t_.ws_end();
            return false;
        }
        default: return true;
    }
}

void WsSession::on_timer() {
    if (state_ != State::Open || awaiting_pong_) {
        // Our close was not answered in time, or a ping was not: the peer is gone.
        notify_close(state_ == State::Open ? 1006 : close_code_, state_ == State::Open ? "no answer to a ping" : "");
        state_ = State::Closed;
        t_.ws_abort();
        return;
    }
    awaiting_pong_ = true;
    write_frame(ws::Opcode::Ping, {});
    t_.ws_arm();
}

void WsSession::on_flushed() {
    if (above_mark_ && buffered() <= settings_.drain_mark && state_ == State::Open) {
        above_mark_ = false;
        endpoint_->on_drain();
    }
}

void WsSession::going_away() { close(1001, "server stopping"); }

void WsSession::abandon() {
    notify_close(state_ == State::CloseSent ? close_code_ : 1006, {});
    state_ = State::Closed;
}

void WsSession::open() { endpoint_->on_open(*this); }

bool WsSession::in_place() const {
    return have_head_ && !ws::is_control(head_.opcode) && head_.fin && head_.opcode != ws::Opcode::Continuation &&
           head_.length <= kInPlaceMax;
}

size_t WsSession::wanted() const {
    if (!in_place()) return 0;
    size_t have = t_.ws_alive() ? t_.ws_input().size() : 0;
    return head_.length > have ? static_cast<size_t>(head_.length) - have : 0;
}

}  // namespace kiln::http
