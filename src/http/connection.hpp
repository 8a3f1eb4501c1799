// One HTTP/1.1 connection: reads into a pooled buffer, parses requests in place,
// hands each to the Service, serializes responses into one gathered write.
//
// States: Idle (no byte of the next request yet) -> Head -> Body -> (handled, or
// Handling while a pool thread runs the handler in the hybrid model: nothing is
// read then, the exchange holds the buffer) -> Idle ...; Closing (a final response is being flushed) -> Lingering (write side
// shut, discarding input until the peer's FIN, so our last response is not lost to
// a reset) -> closed. Pipelined requests are handled in order until the buffer is
// empty or the output passes EngineConfig::max_pending_output (then reading stops
// until the peer drains it). A protocol error gets its status and closes.
// One Timer, moved between the header/body/keep-alive/write/linger lists.
// Most connections of a busy server are idle keep-alive ones, so an idle connection
// holds only what outlives a request (~140 bytes): its buffers and the request being
// read or answered live in an ActiveState, taken from the Server's spares when an
// event arrives and given back once the connection is Idle with nothing buffered.
// Lives on its server's loop thread; destroyed through Loop::destroy_later.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "http/chunked.hpp"
#include "http/exchange.hpp"
#include "http/h2_session.hpp"
#include "http/url.hpp"
#include "http/ws_session.hpp"
#include "http/serializer.hpp"
#include "http/service.hpp"
#include "net/buffer.hpp"
#include "net/loop.hpp"
#include "net/output.hpp"
#include "net/peer.hpp"
#include "net/tls.hpp"

namespace kiln::http {

class Server;

// What a connection needs only while it has something to do: its read and write
// buffers and the request being read or answered (offsets are relative to
// in.readable()). Given back to the Server with both buffers empty and released;
// the other fields are set when a request starts, so a reused one needs no reset.
struct ActiveState {
    net::Buffer in;
    net::OutputQueue out;

    // The request being read.
    size_t scan_hint = 0;     // bytes already scanned for the end of the head
    size_t head_len = 0;
    uint64_t body_len = 0;    // Content-Length
    size_t body_limit = 0;
    ChunkedDecoder chunked;
    size_t chunk_read = 0;    // raw chunked bytes consumed
    size_t chunk_write = 0;   // end of decoded payload
    std::unique_ptr<BodySink> sink;  // the body streams here instead of into in
    uint64_t sunk = 0;               // Content-Length bytes given to sink
    uint64_t started_us = 0;   // head parsed (only measured with an observer)
    uint64_t streamed = 0;     // body bytes of a streamed response
    Exchange* ex = nullptr;    // hybrid: the request a pool thread is handling
    size_t pending_consumed = 0;
    bool is_chunked = false;
    bool continue_sent = false;

    // The response being written.
    bool keep_alive = true;
    bool head_only = false;     // HEAD request: no body bytes
    bool http10 = false;
    bool client_closes = false;  // the request being answered said Connection: close (or was 1.0)
    Framing stream_framing = Framing::Length;
    bool stream_open = false;  // a streamed response's head went out, its end not yet
};

class Connection final : public net::IoHandler, public ResponseStream, private WsTransport {
public:
    // proxy_protocol: the connection must start with a PROXY protocol header.
    // tls: the connection speaks TLS (a handshake first, then records).
    Connection(Server& server, int fd, const net::PeerAddress& peer, bool proxy_protocol = false,
               const net::TlsContext* tls = nullptr);
    ~Connection();

    void on_io(uint32_t events) override;
    void drain();  // the server is stopping
    void complete(Exchange* ex);  // the handler finished (loop thread): a pool's, or one that waited

    // ResponseStream: a handler streaming its body.
    void begin(Response& res) override;
    void chunk(std::string_view data) override;
    void finish() override;
    size_t buffered() const override { return a_ ? a_->out.size() : 0; }

private:
    friend class Server;
    friend class H2Session;
    friend struct H2Callbacks;
    friend struct H2Stream;
    // H2: the connection speaks HTTP/2; h2_ has its streams. WebSocket: upgraded; ws_
    // reads its frames.
    enum class State : uint8_t { Idle, Head, Body, Handling, Closing, Lingering, H2, WebSocket };

    void handle_io(uint32_t events);
    bool peer_gone(uint32_t events) const;  // EOF and no unread bytes from the peer
    void activate();                  // a_ from the server's spares, if it has none
    void settle();                    // an Idle connection with nothing buffered gives a_ back
    void on_readable();
    void read_and_process();
    void resume();
    void process();
    PathStatus prepare_request(const RequestHead& h, Request& req, RequestContext& ctx);  // path, route, body limit
    bool start_request();             // prepare_request for the loop's scratch; 400 on a bad path
    bool body_ready();                // Content-Length or chunked body complete
    void dispatch(std::string_view body, size_t consumed);
    bool submit(std::string_view body, size_t consumed);  // hybrid: false if the pool is full
    Exchange* new_exchange(std::string_view body);  // the request, moved out of the connection
    void hold(Exchange* ex, size_t consumed);       // Handling: no reading until ex completes
    void start_waiting(std::string_view body, size_t consumed);  // a handler that may wait (coroutine)
    static void on_waited(void* exchange);  // its Completion
    void finish_exchange(Exchange* ex);  // its response written, the request done
    void finish_request(size_t consumed);
    void write_head(const Response& res, Framing framing, size_t content_length, bool upgrade = false);
    void write_response(Response& res);
    // retry_after_s > 0: with a Retry-After header (429, 503).
    void respond_error(int status, std::string_view why, uint32_t retry_after_s = 0);
    void send_continue();
    bool flush();                     // false if the connection closed
    void start_linger();
    void discard_input();
    void close_now();
    void enter_idle();
    void arm(net::TimerList& list);
    void arm_on_progress(net::TimerList& list);  // HTTP/2: restarted only if its streams moved
    void arm_state_timer();
    void on_timeout();
    void observe(const Request* req, int status, uint64_t body_bytes);
    size_t read_size() const;
    bool refuse_chunked(ChunkedStatus st);
    bool take_proxy_header();  // false: not complete yet, or the connection was closed
    void find_client();        // client_ for the head just parsed  // answers a chunked body's error: true if it was one
    bool pump_body();  // body_ready() for a sink: feeds what arrived, drops it from in
    // HTTP/2 (see h2_session.hpp): the connection's bytes go to h2_ from here on.
    bool detect_h2(std::string_view data);  // true: h2 started, or its preface is still arriving
    void start_h2();
    // One read for HTTP/2 or WebSocket: bytes read (*drained: the socket has no more
    // now), 0 on EAGAIN, -1 if the connection closed (EOF or an error).
    ssize_t read_more(size_t want, bool* drained);
    void h2_read();
    bool h2_receive();  // what `in` holds, to h2_; false if the connection is ending
    void h2_flush();    // frames out until the socket or nghttp2 has no more room
    // WebSocket (see ws_session.hpp): after a 101 the connection's bytes go to ws_.
    bool upgrade(Response& res, const Request* req, size_t consumed);  // res carries a WsUpgrade: true if taken
    void start_ws(std::unique_ptr<WsUpgrade> up, size_t consumed);
    void ws_read();       // reads and handles frames until EAGAIN (or paused by the output)
    void ws_read_some();  // one round of it, up to the output's pause
    // WsTransport: the session's bytes are the connection's.
    net::Buffer& ws_input() override;
    void ws_write(std::string_view head, std::string_view payload) override;
    size_t ws_buffered() const override { return a_ ? a_->out.size() : 0; }
    bool ws_alive() const override { return fd_ >= 0; }
    void ws_arm() override;  // the ping interval, or the closing handshake's linger timeout
    void ws_end() override;  // close (lingering) once the output is sent
    void ws_abort() override { close_now(); }
    void schedule_flush();  // a flush (h2_flush) at the end of this loop iteration
    static void deferred_flush(void* connection);

    // Kept while idle: what outlives one request.
    Server& srv_;
    net::Timer timer_;
    ActiveState* a_ = nullptr;    // set while the connection has work (always in Head,
                                  // Body, Handling, Closing, Lingering); null when closed
    Connection* prev_ = nullptr;  // Server's list
    Connection* next_ = nullptr;
    net::PeerAddress peer_;
    int fd_;
    uint32_t served_ = 0;         // requests dispatched on this connection
    State state_ = State::Idle;
    bool trusted_proxy_ = false;  // the peer is a proxy whose X-Forwarded-* count
    bool await_proxy_ = false;    // a PROXY protocol header is due before the first request
    bool counted_ = false;        // holds a count in address_counts (for peer_)
    bool proxy_ssl_ = false;      // its v2 header said the client used TLS
    net::PeerAddress client_;     // this request's client (see http::Request::client)
    std::unique_ptr<net::TlsStream> tls_;  // null: plain TCP, read and written directly
    std::unique_ptr<H2Session> h2_;        // set once the connection speaks HTTP/2
    std::unique_ptr<WsSession> ws_;        // set once it speaks WebSocket
    net::TimerList* ws_timers_ = nullptr;  // its ping interval's list (null: no pings)
    bool ws_close_armed_ = false;          // the closing handshake's time runs
    bool protocol_known_ = false; // HTTP/1.1 or HTTP/2 decided (by the first bytes, or ALPN)
    uint64_t h2_progress_mark_ = 0;  // H2Session::progress() when its timer last started
    bool flush_scheduled_ = false;   // deferred_flush is due: the connection outlives it
    bool destroy_pending_ = false;   // closed while it was due: deferred_flush destroys it
    bool head_current_ = false;   // srv_.head_ and srv_.request_ describe this request now;
                                  // only ever true inside one process() call
    bool close_after_flush_ = false;
    bool plain_close_ = false;    // close without lingering (see finish_request)
    bool cut_ = false;            // a streamed response was cut: no TLS close_notify (it would say "complete")
    // Also a response closed before its end: still streaming, or some of it unsent
    // (a close-delimited body whose last bytes are dropped must not end cleanly).
    bool cut() const { return cut_ || (a_ && (a_->stream_open || !a_->out.empty())); }
    bool write_blocked_ = false;
    bool read_paused_ = false;
    bool peer_eof_ = false;       // read() returned 0
    bool peer_fin_seen_ = false;  // epoll reported RDHUP/HUP: a read() will return 0
    bool unread_ = true;          // the socket may hold bytes not read (false: a read found it empty)
};

}  // namespace kiln::http
