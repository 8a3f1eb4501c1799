// HTTP/2 on one connection (RFC 9113), with nghttp2 for the framing, HPACK and flow
// control, and kiln's own streams around it. The Connection still owns the socket,
// TLS, the timer and the output queue; once it sees the client preface (h2c with prior
// knowledge) or TLS negotiated "h2" (ALPN), its bytes go here, and what nghttp2 wants
// to send is appended to its output queue.
//
// Each stream is a request of its own: its head, body, Request, Response and the
// service's context live in an Exchange (pooled by the Server), so many requests run
// at once on one connection: a handler that waits (a coroutine) holds only its stream,
// and a hybrid MPM's pool thread gets the exchange as it does for HTTP/1.1. The same
// Service calls as HTTP/1.1 (prepare, body_sink, handle / start), the same limits
// (header bytes and count, body per route, rate per address), the same observer.
//
// Responses: a whole body or a file leaves in DATA frames with no copy through
// nghttp2 (frame headers from it, payload from us, a file's read right behind its
// header, so many frames leave in one write); a
// streamed response (res.write) becomes DATA frames as it is written, paced by the
// peer's flow-control window. Output stops at EngineConfig::max_pending_output and
// resumes as the socket drains.
//
// Against the known attacks: concurrent streams are capped (SETTINGS), header lists
// are bounded in bytes and fields (431 on the stream), a header block may span few
// CONTINUATION frames, and the frames a peer can make the server work for without
// asking for anything (stream resets, PING, SETTINGS, PRIORITY, empty DATA) are
// counted in a budget per connection: past it the connection ends with GOAWAY
// ENHANCE_YOUR_CALM (rapid reset, CVE-2023-44487; ping and settings floods).
// Lives on its connection's loop thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "http/exchange.hpp"

typedef struct nghttp2_session nghttp2_session;

namespace kiln::http {

class Connection;
class Server;
struct H2Stream;
struct WsUpgrade;

// What an HTTP/2 client sends first (RFC 9113 §3.4).
inline constexpr std::string_view kH2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

class H2Session {
public:
    H2Session(Server& server, Connection& connection);
    ~H2Session();  // streams still in a handler are detached (and cancelled if waiting)
    H2Session(const H2Session&) = delete;
    H2Session& operator=(const H2Session&) = delete;

    // Bytes from the peer; requests they complete are handled before it returns.
    // False: the connection is done for (a protocol error, or the peer went past a
    // limit); send() then queues the GOAWAY that says why.
    bool receive(std::string_view data);
    // Queues what nghttp2 has to send into the connection's output, up to the
    // backpressure limit. Call after receive(), after a handler finished, and when
    // the socket drained.
    void send();
    bool wants_write() const;  // more to send than the output took
    // Neither side has anything more to say: close once the output is flushed.
    bool finished() const;
    // No stream is open: the connection is idle (its keep-alive timer runs).
    bool idle() const { return open_streams_ == 0; }
    // Some stream waits for the peer to send its request (the body timeout applies);
    // not one whose window the body budget holds shut.
    bool receiving() const { return receiving_ > held_back_; }
    // Moves when a stream opens or closes and as request body bytes arrive (not with
    // PINGs or other frames): what restarts the keep-alive and body timeouts.
    uint64_t progress() const { return progress_; }
    // Graceful stop: GOAWAY naming the last stream taken; those finish, no new ones,
    // and WebSockets are told to go (1001).
    void drain();
    // A handler that waited, or ran on a pool thread, is done (loop thread).
    void complete(Exchange* ex);
    // The connection closed: handlers still running lose their stream (a waiting one
    // is cancelled), exchanges go back to the server. Nothing is sent from here on;
    // the streams' memory goes with the session.
    void abandon();

private:
    friend struct H2Stream;
    friend struct H2Callbacks;
    H2Stream* new_stream(int32_t id);
    H2Stream* find(int32_t id) const;
    void release(H2Stream& s);  // unlinked, its exchange back (or left to its handler), freed
    void detach(H2Stream& s);   // its exchange back, or left to the handler still running
    // A request field, or a trailer's (its size only): false once the stream's list is
    // past twice max_header_bytes (the stream is to be reset, its block left unread).
    bool header(H2Stream& s, std::string_view name, std::string_view value);
    bool count_field(H2Stream& s, size_t bytes);
    void headers_done(H2Stream& s, bool end_stream);
    bool body_data(H2Stream& s, std::string_view data);  // true: held in memory (hold())
    void hold(H2Stream& s, size_t n);  // its window back now, or owed until the budget has room
    static bool holds_body(const H2Stream& s);  // receiving a body into memory
    bool first_in_line(const H2Stream& s) const;
    void give_back_windows();
    void watch(H2Stream& s);  // output queued: its stall timer runs, unless it already does
    void sent_some(H2Stream& s);  // DATA left: restarted, or stopped when all is sent
    void stalled(H2Stream& s);
    void body_done(H2Stream& s);
    void dispatch(H2Stream& s);
    void respond(H2Stream& s);
    void respond_error(H2Stream& s, int status, std::string_view why, uint32_t retry_after_s = 0);
    void submit_head(H2Stream& s, bool with_body, bool has_length, uint64_t length);
    void stream_closed(H2Stream& s);
    void observe(H2Stream& s, int status, uint64_t bytes);
    bool spend(int frames);  // the abuse budget; false once it is gone
    void calm_down();        // GOAWAY ENHANCE_YOUR_CALM, read nothing more
    void fail(uint32_t code);  // a connection error: GOAWAY with code, read nothing more
    bool unexpected_stream(int32_t id) const;
    int32_t last_taken() const;  // the last stream id a GOAWAY names
    // A client stream opened after the one that reached max_requests_per_connection.
    bool past_the_cap(int32_t id) const { return last_taken_ && id > last_taken_; }
    void say_goaway();  // no new streams (once); the streams taken, WebSockets among them, go on
    // WebSocket over HTTP/2 (RFC 8441): an extended CONNECT's stream as its transport.
    bool answer_tunnel(H2Stream& s);  // true: it is a WebSocket now
    void start_ws(H2Stream& s, std::unique_ptr<WsUpgrade> up);
    void tunnel_data(H2Stream& s, std::string_view data);
    void queue_ws(H2Stream& s);  // read after this receive()
    void read_ws(H2Stream& s);   // its frames to its session; the peer's end
    void arm_ws(H2Stream& s);
    void end_ws(H2Stream& s);    // the stream is done for: its session hears so

    Server& srv_;
    Connection& conn_;
    nghttp2_session* session_ = nullptr;
    H2Stream* first_ = nullptr;   // open streams
    size_t open_streams_ = 0;
    size_t receiving_ = 0;        // ... of which still receiving their request
    uint64_t progress_ = 0;
    size_t held_back_ = 0;        // streams whose window waits for the body budget
    size_t held_ = 0;             // request body bytes in memory (kBodyBudget)
    size_t owed_ = 0;             // ... of which their streams' windows wait for
    std::vector<int32_t> ready_;  // requests complete in this receive(), to handle after it
    std::vector<int32_t> ws_ready_;    // WebSockets with frames from this receive()
    std::vector<int32_t> ws_flushed_;  // WebSockets whose output went out in this send()
    bool closed_ = false;         // abandoned
    uint32_t taken_ = 0;           // streams opened, counted while max_requests_per_connection is set
    int32_t last_taken_ = 0;       // the stream that reached it; later ones are refused
    // The abuse budget: tokens, refilled with time.
    double budget_ = 0;
    uint64_t budget_ms_ = 0;
    size_t block_bytes_ = 0;       // the header block being received, in frame bytes
    int block_continuations_ = 0;  // ... and its CONTINUATION frames
    bool failed_ = false;          // a connection error's GOAWAY is queued
    int32_t highest_stream_ = 0;   // the highest client stream opened
    int32_t closed_ids_[64] = {};  // streams closed lately (a ring)
    size_t closed_at_ = 0;
    bool goaway_sent_ = false;
    bool ws_told_ = false;         // a stop told the WebSockets to go
    std::vector<char> names_;      // lower-cased response header names for a submit
};

}  // namespace kiln::http
