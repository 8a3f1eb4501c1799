// A WebSocket (RFC 6455): after an HTTP/1.1 upgrade, the whole connection; after an
// HTTP/2 extended CONNECT (RFC 8441), one stream. What carries the bytes (a
// WsTransport: the Connection, or the H2 stream) keeps the socket, TLS, timers and
// output; the WsSession reads the frames (in place, from the transport's input
// buffer), answers pings, keeps the closing handshake, and hands whole messages to
// the layer above's WsEndpoint.
//
// The layer above decides the upgrade: its handler answers 101 (HTTP/1.1) or 200
// (HTTP/2) and attaches a WsUpgrade (endpoint and settings) to the response; the
// engine sends the head and starts the session on its loop thread (see
// Connection::start_ws and H2Session::start_ws).
//
// Memory: an idle WebSocket holds its Connection, this session and the endpoint;
// its read and write buffers go back to the server's spares while nothing waits in
// them, and a fragmented message's bytes are kept only until it is complete.
// Compression (permessage-deflate) is negotiated without context takeover in either
// direction, so the zlib streams are the loop thread's, shared by its WebSockets, and
// a WebSocket holds none.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http/ws_deflate.hpp"
#include "http/ws_frame.hpp"
#include "net/buffer.hpp"

namespace kiln::http {

class WsSession;

// While one lives on a thread, sending `payload` (the same bytes at the same address:
// one message handed to many WebSockets, a topic's delivery) compresses it once per
// deflate setting (window bits, level) instead of once per WebSocket. Sessions without
// context takeover code a message alike, whoever sends it.
class WsOneMessage {
public:
    explicit WsOneMessage(std::string_view payload);
    ~WsOneMessage();
    WsOneMessage(const WsOneMessage&) = delete;
    WsOneMessage& operator=(const WsOneMessage&) = delete;

    // The coded bytes for `payload` with these settings, if this message is the one
    // being handed out; null otherwise (the caller codes it itself).
    static const std::string* coded(std::string_view payload, int window_bits, int level);

private:
    struct Coded {
        int window_bits;
        int level;
        std::string bytes;
    };
    std::string_view payload_;
    std::vector<Coded> coded_;  // usually one entry: most clients negotiate alike
    WsOneMessage* outer_;
};

// What a WebSocket speaks through. Called on its loop thread.
class WsTransport {
public:
    virtual net::Buffer& ws_input() = 0;  // bytes received and not yet taken
    virtual void ws_write(std::string_view head, std::string_view payload) = 0;
    virtual size_t ws_buffered() const = 0;  // output the peer has not taken yet
    virtual bool ws_alive() const = 0;       // false once closed (or reset) under the session
    // The session's timer again: its ping interval, or (closing) the linger timeout.
    virtual void ws_arm() = 0;
    virtual void ws_end() = 0;    // after the output (a close frame): the orderly end
    virtual void ws_abort() = 0;  // at once: TCP closed, or the stream reset

protected:
    ~WsTransport() = default;
};

struct WsSettings {
    uint64_t max_message = 1 << 20;    // larger (as declared, or once inflated): closed with 1009
    uint32_t ping_interval_ms = 30000; // quiet this long: a ping; quiet as long again: closed (0: never)
    size_t max_backlog = 1 << 20;      // output waiting for a slow reader: past it, closed (1008)
    size_t drain_mark = 64 * 1024;     // on_drain once a backlog above this falls below it
    WsDeflate deflate;                 // permessage-deflate as negotiated (off by default)
};

// The layer above's side of one WebSocket; owned by its session, which deletes it
// after on_close. Called on the connection's loop thread.
class WsEndpoint {
public:
    virtual ~WsEndpoint() = default;
    virtual void on_open(WsSession& session) = 0;
    // A whole message (text is valid UTF-8); `data` is valid during the call.
    virtual void on_message(ws::Opcode op, std::string_view data) = 0;
    // A backlog above WsSettings::drain_mark has fallen below it.
    virtual void on_drain() {}
    // The WebSocket is gone: the peer's close code (1005 if it gave none), 1006 if
    // the connection ended without a closing handshake, or the code it was closed
    // with here. Last call; the session must not be used after it.
    virtual void on_close(uint16_t code, std::string_view reason) = 0;
};

// What a 101 response carries to the connection.
struct WsUpgrade {
    std::unique_ptr<WsEndpoint> endpoint;
    WsSettings settings;
};

class WsSession {
public:
    enum class Send : uint8_t { Sent, Backlogged, Dropped };

    WsSession(WsTransport& transport, std::unique_ptr<WsEndpoint> endpoint, const WsSettings& settings);
    ~WsSession();
    WsSession(const WsSession&) = delete;
    WsSession& operator=(const WsSession&) = delete;

    // A whole text or binary message. Backlogged: queued, the reader is slow (past
    // drain_mark); Dropped: the WebSocket is closing or closed, or this message
    // would pass max_backlog (the WebSocket is then closed with 1008).
    Send send(ws::Opcode op, std::string_view payload);
    // Starts the closing handshake (code 1000..4999, a reason of at most 123 bytes).
    void close(uint16_t code, std::string_view reason);
    void ping(std::string_view payload = {});
    size_t buffered() const;
    bool open() const { return state_ == State::Open; }

    // The transport's side (loop thread).
    void open();                         // the 101 is written: on_open
    bool receive();                      // frames from the input buffer; false: the transport is ending
    void on_timer();                     // the ping interval passed quietly
    void on_flushed();                   // the peer took output
    void going_away();                   // the server stops: close with 1001
    void abandon();                      // the transport closed: on_close(1006) unless told already
    bool closing() const { return state_ != State::Open; }
    bool closed() const { return state_ == State::Closed; }  // input is no longer read
    size_t wanted() const;  // bytes of the frame being read still due, when it is taken whole

private:
    void cut_slow_reader();  // past max_backlog: 1008 to the app, the transport aborted
    enum class State : uint8_t { Open, CloseSent, Closed };
    bool frame();  // one frame from the buffer; false: incomplete, or the connection ends
    bool in_place() const;  // the frame read is a whole message taken in the buffer
    bool deliver(ws::Opcode op, std::string_view data);
    bool control(ws::Opcode op, std::string_view payload);
    void fail(uint16_t code, const char* why);  // close with code at once, not waiting for the peer
    void notify_close(uint16_t code, std::string_view reason);
    void write_frame(ws::Opcode op, std::string_view payload, bool rsv1 = false);
    void write_close(uint16_t code, std::string_view reason);  // a close frame (reason cut at 123 bytes)

    WsTransport& t_;
    std::unique_ptr<WsEndpoint> endpoint_;
    WsSettings settings_;
    ws::Reassembler reassembler_;
    ws::FrameHead head_;             // the frame being read, when have_head_
    uint64_t payload_done_ = 0;      // of head_'s payload, bytes taken
    uint16_t close_code_ = 0;        // what our close frame said
    std::string message_;            // a fragmented (or compressed) message so far
    State state_ = State::Open;
    bool have_head_ = false;
    bool compressed_ = false;        // the message being read had RSV1
    bool awaiting_pong_ = false;
    bool above_mark_ = false;        // the backlog passed drain_mark
    bool notified_ = false;          // on_close was called
};

}  // namespace kiln::http
