#include "http/h2_session.hpp"

#include <nghttp2/nghttp2.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "http/chars.hpp"
#include "http/connection.hpp"
#include "http/forwarded.hpp"
#include "http/serializer.hpp"
#include "http/server.hpp"
#include "http/ws_session.hpp"
#include "util/clock.hpp"

namespace kiln::http {
namespace {

// The abuse budget: frames that cost the server work and ask it for nothing. A
// browser spends a few; a flood of resets, pings or settings spends it in a second.
constexpr double kBudgetBurst = 1000;
constexpr double kBudgetPerSecond = 100;
// A header block's frame bytes past the header list limit by this much (HPACK
// rarely makes a list larger than its encoding) end the connection: a CONTINUATION
// flood is cut before it is decoded.
constexpr size_t kBlockSlack = 16 * 1024;
// ... and so does a block in more CONTINUATION frames than this (empty ones included).
constexpr int kMaxContinuations = 16;
// A stream's receive window, and the connection's (request bodies).
constexpr int32_t kStreamWindow = 256 * 1024;
constexpr int32_t kConnectionWindow = 1024 * 1024;
// Request bodies held in memory on one connection (not the ones spooled to disk by a
// body sink): past this, a stream's window is given back only to the oldest stream
// still receiving, so one connection holds about this, plus that stream's body, plus
// a stream window per other stream, and not every stream's body limit at once.
constexpr size_t kBodyBudget = 8 * 1024 * 1024;

std::string_view view(const uint8_t* p, size_t n) { return {reinterpret_cast<const char*>(p), n}; }

bool is_pseudo(std::string_view name) { return !name.empty() && name[0] == ':'; }

// What HTTP/2 forbids in a response (RFC 9113 §8.2.2): the connection's own fields.
bool connection_specific(std::string_view lower) {
    return lower == "connection" || lower == "keep-alive" || lower == "proxy-connection" ||
           lower == "transfer-encoding" || lower == "upgrade";
}

// A request target's bytes, as the HTTP/1.1 parser accepts them.
bool valid_target(std::string_view t) {
    for (char c : t)
        if (!chars::kTarget[static_cast<uint8_t>(c)]) return false;
    return true;
}

}  // namespace

// One stream: a request and its response; or, after an extended CONNECT answered
// with a WebSocket (RFC 8441), a WebSocket's transport: its DATA frames carry the
// WebSocket's frames both ways, END_STREAM is its orderly end, RST_STREAM its abort.
struct H2Stream final : ResponseStream, WsTransport {
    enum class Phase : uint8_t { Headers, Body, Handling, Answered };
    enum class Source : uint8_t { None, Body, File, Stream };

    H2Session* session = nullptr;
    int32_t id = 0;
    Exchange* ex = nullptr;
    H2Stream* prev = nullptr;
    H2Stream* next = nullptr;
    Phase phase = Phase::Headers;
    bool request_done = false;  // END_STREAM came
    bool running = false;       // a handler (waiting, on a pool thread, or on the stack) has the exchange
    bool head_sent = false;     // a streamed response's head is submitted
    bool ended = false;         // ... and its last write made
    int refused = 0;            // 431 once the header list went past a limit
    std::string_view refused_why;
    size_t list_bytes = 0;
    uint32_t pseudo[5][2] = {};  // :method :scheme :authority :path :protocol (offset, length + 1; 0: absent)
    std::unique_ptr<BodySink> sink;
    size_t body_limit = 0;
    uint64_t received = 0;
    size_t held = 0;  // body bytes in memory, counted in the session's budget
    size_t owed = 0;  // ... not yet given back to its window
    uint64_t started_us = 0;

    Source source = Source::None;
    size_t body_off = 0;
    int fd = -1;  // a file response's, until the output queue owns it
    uint64_t file_off = 0, file_left = 0;
    std::string pending;  // streamed bytes not yet framed
    size_t pending_off = 0;
    uint64_t written = 0;  // body bytes a streamed response was given
    char status[3];

    // An extended CONNECT (RFC 8441) and, once answered with one, its WebSocket.
    bool tunnel = false;
    bool gone = false;        // reset by us, or closed: the WebSocket's transport is dead
    bool ws_queued = false;   // in the session's list of tunnels to read after this receive
    bool ws_flushed = false;  // ... of WebSockets whose output went out
    net::Buffer ws_in;        // DATA not yet taken by the WebSocket (or not yet answered)
    std::unique_ptr<WsSession> ws;
    net::Timer ws_timer;      // its ping interval, or its closing's linger timeout
    net::TimerList* ws_pings = nullptr;
    bool ws_close_armed = false;  // the closing handshake's time runs
    // The write timeout, per stream: runs while it has DATA to send, restarted by each
    // DATA frame that leaves. A stream the peer's window holds that long is reset.
    net::Timer stall_timer;

    ~H2Stream() {
        ws_in.discard();
        stall_timer.disarm();
    }
    bool has_output() const;
    void begin(Response& res) override;
    void chunk(std::string_view data) override;
    void finish() override;
    size_t buffered() const override { return pending.size() - pending_off; }

    net::Buffer& ws_input() override { return ws_in; }
    void ws_write(std::string_view head, std::string_view payload) override;
    size_t ws_buffered() const override { return buffered(); }
    bool ws_alive() const override { return !gone && !session->closed_; }
    void ws_arm() override { session->arm_ws(*this); }
    void ws_end() override;
    void ws_abort() override;
};

// nghttp2's callbacks, as members of nobody: each finds its session in user_data.
struct H2Callbacks {
    static H2Session& of(void* user) { return *static_cast<H2Session*>(user); }
    static H2Stream* stream(nghttp2_session* s, int32_t id) {
        return static_cast<H2Stream*>(nghttp2_session_get_stream_user_data(s, id));
    }

    static int on_begin_frame(nghttp2_session*, const nghttp2_frame_hd* hd, void* user) {
        H2Session& h = of(user);
        if (hd->type == NGHTTP2_HEADERS) {
            if (h.unexpected_stream(hd->stream_id)) {
                h.fail(NGHTTP2_PROTOCOL_ERROR);
                return NGHTTP2_ERR_CALLBACK_FAILURE;
            }
            // A stream opened after our GOAWAY, which nghttp2 ignores: a client that has
            // read it opens none (RFC 9113 §6.8), and one past the cap could go on for
            // as long as a WebSocket keeps the connection. Each is paid for. (After a
            // connection error nothing is: the connection is ending.)
            if (h.goaway_sent_ && !h.failed_ && (hd->stream_id & 1) && hd->stream_id > h.highest_stream_ &&
                !h.spend(1))
                return NGHTTP2_ERR_CALLBACK_FAILURE;
            h.block_bytes_ = hd->length;
            h.block_continuations_ = 0;
        } else if (hd->type == NGHTTP2_CONTINUATION) {
            h.block_bytes_ += hd->length;
            ++h.block_continuations_;
        } else {
            return 0;
        }
        if (h.block_bytes_ > h.srv_.cfg_.limits.max_header_bytes + kBlockSlack ||
            h.block_continuations_ > kMaxContinuations) {
            h.calm_down();
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
        return 0;
    }

    static int on_begin_headers(nghttp2_session* s, const nghttp2_frame* frame, void* user) {
        if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
        H2Session& h = of(user);
        h.highest_stream_ = std::max(h.highest_stream_, frame->hd.stream_id);
        if (h.last_taken_) {
            // Past limits.max_requests_per_connection (the GOAWAY names the stream that
            // reached it): never processed, the client may retry it elsewhere. The
            // failure makes nghttp2 decode the rest of the block for the HPACK state
            // only, its fields neither checked nor handed over (as on_header's past
            // twice the limit); the reset it would add finds ours.
            nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_REFUSED_STREAM);
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        }
        H2Stream* st = h.new_stream(frame->hd.stream_id);
        nghttp2_session_set_stream_user_data(s, frame->hd.stream_id, st);
        uint32_t cap = h.srv_.cfg_.max_requests_per_connection;
        if (cap && ++h.taken_ == cap) h.last_taken_ = frame->hd.stream_id;
        return 0;
    }

    static int on_header(nghttp2_session* s, const nghttp2_frame* frame, const uint8_t* name, size_t namelen,
                         const uint8_t* value, size_t valuelen, uint8_t, void* user) {
        if (frame->hd.type != NGHTTP2_HEADERS) return 0;
        H2Stream* st = stream(s, frame->hd.stream_id);
        if (!st) return 0;
        // A false: past twice the limit, the stream is reset, and nghttp2 decodes the
        // rest of the block without checking or handing over its fields. (A few bytes
        // of references to a large table entry stand for megabytes of fields, each
        // checked byte by byte.) Trailers are counted, and otherwise ignored.
        bool go_on = frame->headers.cat == NGHTTP2_HCAT_REQUEST
                         ? of(user).header(*st, view(name, namelen), view(value, valuelen))
                         : of(user).count_field(*st, namelen + valuelen);
        return go_on ? 0 : NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }

    static int on_frame_recv(nghttp2_session* s, const nghttp2_frame* frame, void* user) {
        H2Session& h = of(user);
        bool end_stream = frame->hd.flags & NGHTTP2_FLAG_END_STREAM;
        switch (frame->hd.type) {
            case NGHTTP2_HEADERS: {
                H2Stream* st = stream(s, frame->hd.stream_id);
                if (!st) return 0;
                if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) h.headers_done(*st, end_stream);
                else if (end_stream) h.body_done(*st);  // trailers end the body
                return 0;
            }
            case NGHTTP2_DATA: {
                // No bytes and not the end: moves nothing (padding alone included).
                if (frame->hd.length == frame->data.padlen && !end_stream && !h.spend(1))
                    return NGHTTP2_ERR_CALLBACK_FAILURE;
                H2Stream* st = stream(s, frame->hd.stream_id);
                if (st && end_stream) h.body_done(*st);
                return 0;
            }
            case NGHTTP2_RST_STREAM:
            case NGHTTP2_PRIORITY:
                return h.spend(1) ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;
            case NGHTTP2_PING:  // kiln sends no PING: an ACK answers nothing, and costs as one
                return h.spend(1) ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;
            case NGHTTP2_SETTINGS:  // (an ACK nghttp2 did not wait for is its PROTOCOL_ERROR)
                if (frame->hd.flags & NGHTTP2_FLAG_ACK) return 0;
                return h.spend(1) ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;
            default: return 0;
        }
    }

    static int on_data_chunk(nghttp2_session* s, uint8_t, int32_t id, const uint8_t* data, size_t len, void* user) {
        // The connection's window is always given back: a stream held back by the body
        // budget must not stop the stream that may go on. A stream's own window waits
        // while its bytes are held over the budget (see hold()).
        nghttp2_session_consume_connection(s, len);
        H2Stream* st = stream(s, id);
        if (!st || !of(user).body_data(*st, view(data, len))) nghttp2_session_consume_stream(s, id, len);
        return 0;
    }

    static int on_frame_send(nghttp2_session* s, const nghttp2_frame* frame, void* user) {
        // A reset of ours for the client's mistake (STREAM_CLOSED, PROTOCOL_ERROR, ...)
        // closes a stream as its own RST_STREAM would: the same budget ("MadeYouReset",
        // CVE-2025-8671). Past it, calm_down() queues the GOAWAY. A stream refused past
        // limits.max_requests_per_connection is no mistake: it started nothing, and a
        // client may well have opened max_concurrent_streams of them before our GOAWAY.
        if (frame->hd.type == NGHTTP2_RST_STREAM) {
            H2Session& h = of(user);
            const uint32_t code = frame->rst_stream.error_code;
            if (code != NGHTTP2_NO_ERROR && code != NGHTTP2_CANCEL && code != NGHTTP2_INTERNAL_ERROR &&
                !(code == NGHTTP2_REFUSED_STREAM && h.past_the_cap(frame->hd.stream_id)))
                h.spend(1);
        }
        // Answered before the request was complete (413, 431, an early error): the
        // rest of its body is not wanted (RFC 9113 §8.1).
        if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
            (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
            H2Stream* st = stream(s, frame->hd.stream_id);
            // (A WebSocket's end waits for the peer's, under its linger timeout.)
            if (st && !st->request_done && !st->ws) nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_NO_ERROR);
        }
        return 0;
    }

    static int on_stream_close(nghttp2_session* s, int32_t id, uint32_t, void* user) {
        if (H2Stream* st = stream(s, id)) of(user).stream_closed(*st);
        return 0;
    }

    static ssize_t send(nghttp2_session*, const uint8_t* data, size_t length, int, void* user) {
        H2Session& h = of(user);
        Connection& c = h.conn_;
        if (c.a_->out.size() >= h.srv_.cfg_.max_pending_output) return NGHTTP2_ERR_WOULDBLOCK;
        c.a_->out.append(view(data, length), h.srv_.loop_.buffers());
        return static_cast<ssize_t>(length);
    }

    // A DATA frame's payload, placed by us (NGHTTP2_DATA_FLAG_NO_COPY): nghttp2 gives
    // the frame header and the length it chose.
    static int send_data(nghttp2_session*, nghttp2_frame*, const uint8_t* framehd, size_t length,
                         nghttp2_data_source* source, void* user) {
        H2Session& h = of(user);
        net::OutputQueue& out = h.conn_.a_->out;
        if (out.size() >= h.srv_.cfg_.max_pending_output) return NGHTTP2_ERR_WOULDBLOCK;
        net::BufferPool& pool = h.srv_.loop_.buffers();
        auto* st = static_cast<H2Stream*>(source->ptr);
        if (st->source == H2Stream::Source::File) {
            // The payload is read right behind its frame header, so many frames leave
            // in one write (one TLS record each). A sendfile(2) per frame, between two
            // writes of 9 bytes, cost three times the CPU on h2c (bench/results/h2.md).
            net::Buffer& b = out.tail(pool, 9 + length);
            std::memcpy(b.write_ptr(), framehd, 9);
            ssize_t r;
            do r = ::pread(st->fd, b.write_ptr() + 9, length, static_cast<off_t>(st->file_off));
            while (r < 0 && errno == EINTR);
            if (r != static_cast<ssize_t>(length)) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // shrank: reset
            b.commit(9 + length);
            out.note_appended(9 + length);
            st->file_off += length;
            st->file_left -= length;
            h.sent_some(*st);
            return 0;
        }
        out.append(view(framehd, 9), pool);
        switch (st->source) {
            case H2Stream::Source::Body:
                out.append(std::string_view(st->ex->response.body()).substr(st->body_off, length), pool);
                st->body_off += length;
                break;
            case H2Stream::Source::Stream:
                out.append(std::string_view(st->pending).substr(st->pending_off, length), pool);
                st->pending_off += length;
                if (st->pending_off == st->pending.size()) {
                    // A long-lived stream (a WebSocket) keeps no large message's room.
                    if (st->pending.capacity() > 64 * 1024) std::string().swap(st->pending);
                    else st->pending.clear();
                    st->pending_off = 0;
                }
                if (st->ws && !st->ws_flushed) {  // told after this send (it may write more)
                    st->ws_flushed = true;
                    h.ws_flushed_.push_back(st->id);
                }
                break;
            case H2Stream::Source::File:  // above
            case H2Stream::Source::None: break;
        }
        h.sent_some(*st);
        return 0;
    }

    static ssize_t read_data(nghttp2_session*, int32_t, uint8_t*, size_t length, uint32_t* flags,
                             nghttp2_data_source* source, void*) {
        auto* st = static_cast<H2Stream*>(source->ptr);
        uint64_t left = 0;
        bool more_later = false;
        switch (st->source) {
            case H2Stream::Source::Body: left = st->ex->response.body().size() - st->body_off; break;
            case H2Stream::Source::File: left = st->file_left; break;
            case H2Stream::Source::Stream:
                left = st->pending.size() - st->pending_off;
                more_later = !st->ended;
                break;
            case H2Stream::Source::None: break;
        }
        if (left == 0) {
            if (more_later) return NGHTTP2_ERR_DEFERRED;  // resumed by the next write
            *flags |= NGHTTP2_DATA_FLAG_EOF;
            return 0;
        }
        size_t n = static_cast<size_t>(std::min<uint64_t>(left, length));
        *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
        if (n == left && !more_later) *flags |= NGHTTP2_DATA_FLAG_EOF;
        return static_cast<ssize_t>(n);
    }

    static nghttp2_session_callbacks* make() {
        nghttp2_session_callbacks* cb;
        nghttp2_session_callbacks_new(&cb);
        nghttp2_session_callbacks_set_on_begin_frame_callback(cb, on_begin_frame);
        nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
        nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
        nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
        nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
        nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
        nghttp2_session_callbacks_set_send_callback(cb, send);
        nghttp2_session_callbacks_set_send_data_callback(cb, send_data);
        return cb;
    }
};

H2Session::H2Session(Server& server, Connection& connection) : srv_(server), conn_(connection) {
    static nghttp2_session_callbacks* const callbacks = H2Callbacks::make();  // read-only once made
    nghttp2_option* opt;
    nghttp2_option_new(&opt);
    // nghttp2's own limits on resets and CONTINUATION frames (1.57 and 1.61, backported
    // to Debian's 1.52) answer with their own GOAWAY (INTERNAL_ERROR, and a second one
    // after ours could name a higher last stream): out of the way, so the budget and
    // the header-block limits here alone decide, with one GOAWAY ENHANCE_YOUR_CALM.
    nghttp2_option_set_stream_reset_rate_limit(opt, uint64_t{1} << 62, 0);
    nghttp2_option_set_max_continuations(opt, kMaxContinuations + 1);
    // Windows are given back as the bytes are used (on_data_chunk, hold()), not as
    // they arrive: how request bodies in memory are bounded per connection.
    nghttp2_option_set_no_auto_window_update(opt, 1);
    nghttp2_session_server_new2(&session_, callbacks, this, opt);
    nghttp2_option_del(opt);
    const Limits& limits = srv_.cfg_.limits;
    nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, srv_.cfg_.h2_max_streams},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kStreamWindow},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, static_cast<uint32_t>(limits.max_header_bytes)},
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL, 1},  // WebSocket over HTTP/2 (RFC 8441)
    };
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
    nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
    budget_ = kBudgetBurst;
    budget_ms_ = srv_.loop_.now_ms();
}

H2Session::~H2Session() {
    abandon();
    while (H2Stream* st = first_) {
        first_ = st->next;
        delete st;
    }
    nghttp2_session_del(session_);
}

void H2Session::abandon() {
    if (closed_) return;
    closed_ = true;
    for (H2Stream* st = first_; st; st = st->next) {
        if (st->fd >= 0) ::close(st->fd);
        st->fd = -1;
        st->sink.reset();
        detach(*st);
        end_ws(*st);
    }
}

bool H2Session::receive(std::string_view data) {
    ssize_t n = nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(data.data()), data.size());
    // The handlers run here, outside nghttp2's callbacks (they may send, and close).
    for (size_t i = 0; i < ready_.size() && !closed_; ++i)
        if (H2Stream* st = find(ready_[i])) dispatch(*st);
    ready_.clear();
    for (size_t i = 0; i < ws_ready_.size() && !closed_; ++i)
        if (H2Stream* st = find(ws_ready_[i])) read_ws(*st);
    ws_ready_.clear();
    if (closed_) return false;
    if (n < 0) {
        if (n == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS) fail(NGHTTP2_ENHANCE_YOUR_CALM);
        else if (n != NGHTTP2_ERR_BAD_CLIENT_MAGIC && n != NGHTTP2_ERR_FLOODED) fail(NGHTTP2_INTERNAL_ERROR);
        return false;
    }
    return true;
}

void H2Session::send() {
    if (closed_) return;
    if (owed_ > 0) give_back_windows();  // (their WINDOW_UPDATEs go out with this send)
    if (srv_.stop_requested()) drain();
    else if (last_taken_) say_goaway();  // the cap: no new streams; a WebSocket lives on
    nghttp2_session_send(session_);  // WOULDBLOCK at the output limit is not an error
    // WebSockets whose output went out: one that had a backlog hears it drained (and may
    // write more, sent by the flush this schedules).
    for (size_t i = 0; i < ws_flushed_.size() && !closed_; ++i) {
        H2Stream* st = find(ws_flushed_[i]);
        if (!st || !st->ws) continue;
        st->ws_flushed = false;
        st->ws->on_flushed();
    }
    ws_flushed_.clear();
}

bool H2Session::wants_write() const { return nghttp2_session_want_write(session_); }

bool H2Stream::has_output() const {
    switch (source) {
        case Source::Body: return ex && body_off < ex->response.body().size();
        case Source::File: return file_left > 0;
        case Source::Stream: return pending.size() > pending_off;
        case Source::None: break;
    }
    return false;
}

void H2Session::watch(H2Stream& st) {
    if (!st.has_output()) st.stall_timer.disarm();
    else if (!st.stall_timer.armed()) srv_.write_timers_.arm(st.stall_timer, srv_.loop_.now_ms());
}

void H2Session::sent_some(H2Stream& st) {
    if (st.has_output()) srv_.write_timers_.arm(st.stall_timer, srv_.loop_.now_ms());
    else st.stall_timer.disarm();
}

void H2Session::stalled(H2Stream& st) {
    // Its DATA waited a whole write timeout for the peer's window (the stream's or the
    // connection's): the stream is reset and lets go of its body, file or backlog.
    // The connection's other streams go on.
    if (closed_ || st.gone || !st.has_output()) return;
    if (st.ws) return st.ws_abort();
    st.gone = true;
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, st.id, NGHTTP2_CANCEL);
    conn_.schedule_flush();
}

bool H2Session::finished() const { return !nghttp2_session_want_read(session_) && !nghttp2_session_want_write(session_); }

void H2Session::drain() {
    if (!ws_told_ && !failed_) {  // the streams finish; a WebSocket would not
        ws_told_ = true;
        for (H2Stream* st = first_; st; st = st->next)
            if (st->ws && st->ws_alive()) st->ws->going_away();
    }
    say_goaway();
}

void H2Session::say_goaway() {
    if (goaway_sent_) return;
    goaway_sent_ = true;
    nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, last_taken(), NGHTTP2_NO_ERROR, nullptr, 0);
}

int32_t H2Session::last_taken() const {
    // nghttp2's last processed stream counts the ones refused past the cap.
    return last_taken_ ? last_taken_ : nghttp2_session_get_last_proc_stream_id(session_);
}

void H2Session::calm_down() { fail(NGHTTP2_ENHANCE_YOUR_CALM); }

void H2Session::fail(uint32_t code) {
    if (failed_) return;  // the first reason is the one told
    failed_ = true;
    goaway_sent_ = true;
    nghttp2_session_terminate_session2(session_, last_taken(), code);
}

bool H2Session::unexpected_stream(int32_t id) const {
    // HEADERS for a client stream below the highest one opened that nghttp2 does not
    // know: a stream skipped (closed unused, RFC 9113 §5.1.1), unless it is one that
    // closed lately (trailers may cross our RST_STREAM, and nghttp2 ignores those).
    if (!(id & 1) || id >= highest_stream_ || nghttp2_session_find_stream(session_, id)) return false;
    if (past_the_cap(id)) return false;  // refused, or ignored after the cap's GOAWAY: never a skip
    return std::find(std::begin(closed_ids_), std::end(closed_ids_), id) == std::end(closed_ids_);
}

bool H2Session::spend(int frames) {
    uint64_t now = srv_.loop_.now_ms();
    budget_ = std::min(kBudgetBurst, budget_ + static_cast<double>(now - budget_ms_) * kBudgetPerSecond / 1000.0);
    budget_ms_ = now;
    budget_ -= frames;
    if (budget_ >= 0) return true;
    calm_down();
    return false;
}

H2Stream* H2Session::find(int32_t id) const {
    return static_cast<H2Stream*>(nghttp2_session_get_stream_user_data(session_, id));
}

H2Stream* H2Session::new_stream(int32_t id) {
    auto* st = new H2Stream();
    st->session = this;
    st->id = id;
    st->ex = srv_.take_exchange();
    st->ex->stream_id = id;
    st->ex->connection = &conn_;
    st->stall_timer.owner = st;
    st->stall_timer.fire = [](net::Timer* t) {
        auto* s = static_cast<H2Stream*>(t->owner);
        s->session->stalled(*s);
    };
    ++progress_;
    st->next = first_;
    if (first_) first_->prev = st;
    first_ = st;
    ++open_streams_;
    ++receiving_;
    if (srv_.observer_) st->started_us = util::monotonic_us();
    return st;
}

void H2Session::release(H2Stream& st) {
    detach(st);
    if (st.phase == H2Stream::Phase::Headers || st.phase == H2Stream::Phase::Body) --receiving_;
    st.stall_timer.disarm();
    ++progress_;
    held_ -= st.held;
    if (st.owed) --held_back_;
    owed_ -= st.owed;
    if (owed_ > 0) conn_.schedule_flush();  // the budget has room again: send() gives windows back
    if (st.prev) st.prev->next = st.next;
    else first_ = st.next;
    if (st.next) st.next->prev = st.prev;
    --open_streams_;
    if (st.ws) {
        // Its session may be reading a frame further up the stack (a callback that
        // flushed): it sees the transport gone and stops; the memory goes after.
        end_ws(st);
        srv_.loop_.defer([](void* p) { delete static_cast<H2Stream*>(p); }, &st);
        return;
    }
    delete &st;
}

void H2Session::detach(H2Stream& st) {
    Exchange* ex = std::exchange(st.ex, nullptr);
    if (!ex) return;
    if (st.running) {  // its handler still runs: the exchange outlives the stream and frees itself
        ex->connection = nullptr;
        if (ex->response.has_stream()) ex->response.unbind();  // (a pool thread's has none, and may be reading it)
        if (ex->waiting) srv_.service_.cancel(*ex->context);
        return;
    }
    srv_.give_back_exchange(ex);  // unbinds its response: a handler on the stack writes into nothing
}

bool H2Session::count_field(H2Stream& st, size_t bytes) {
    const size_t limit = srv_.cfg_.limits.max_header_bytes;
    const bool over = st.list_bytes > limit;
    st.list_bytes += bytes + 32;  // RFC 9113 §6.5.2's measure
    if (over || st.list_bytes <= limit) return st.list_bytes <= 2 * limit;
    // Once per stream, the moment it goes past: a stream of refusals costs its
    // sender as a reset does, so a sustained one ends with ENHANCE_YOUR_CALM.
    if (!spend(1)) return false;
    return st.list_bytes <= 2 * limit;
}

bool H2Session::header(H2Stream& st, std::string_view name, std::string_view value) {
    if (!count_field(st, name.size() + value.size())) return false;
    if (st.refused) return true;
    const Limits& limits = srv_.cfg_.limits;
    if (st.list_bytes > limits.max_header_bytes) {
        st.refused = 431;
        st.refused_why = "request header fields too large";
        return true;
    }
    std::string& f = st.ex->fields;
    std::vector<uint32_t>& offs = st.ex->field_offsets;
    auto off = static_cast<uint32_t>(f.size());
    f.append(name).append(value);
    if (is_pseudo(name)) {
        int k = name == ":method"      ? 0
                : name == ":scheme"    ? 1
                : name == ":authority" ? 2
                : name == ":path"      ? 3
                : name == ":protocol"  ? 4
                                       : -1;
        if (k >= 0) {
            st.pseudo[k][0] = off + static_cast<uint32_t>(name.size());
            st.pseudo[k][1] = static_cast<uint32_t>(value.size()) + 1;
        }
        return true;
    }
    if (offs.size() / 4 >= limits.max_header_count) {
        st.refused = 431;
        st.refused_why = "too many request header fields";
        return true;
    }
    offs.insert(offs.end(), {off, static_cast<uint32_t>(name.size()), off + static_cast<uint32_t>(name.size()),
                                   static_cast<uint32_t>(value.size())});
    return true;
}

void H2Session::headers_done(H2Stream& st, bool end_stream) {
    Exchange& ex = *st.ex;
    st.request_done = end_stream;
    RequestHead& h = ex.head;
    // Cookies may come as several fields (RFC 9113 §8.2.3): one, joined by "; ", for
    // everything above, which reads a request as HTTP/1.1 would have sent it.
    std::string& f = ex.fields;
    std::vector<uint32_t>& offs = ex.field_offsets;
    size_t cookies = 0;
    for (size_t i = 0; i < offs.size(); i += 4) cookies += std::string_view(f).substr(offs[i], offs[i + 1]) == "cookie";
    if (cookies > 1) {
        auto off = static_cast<uint32_t>(f.size());
        f.append("cookie");
        auto value_off = static_cast<uint32_t>(f.size());
        size_t kept = 0;
        for (size_t i = 0; i < offs.size(); i += 4) {
            if (std::string_view(f).substr(offs[i], offs[i + 1]) == "cookie") {
                if (f.size() > value_off) f.append("; ");
                f.append(std::string_view(f).substr(offs[i + 2], offs[i + 3]));
                continue;
            }
            std::copy_n(offs.begin() + static_cast<std::ptrdiff_t>(i), 4, offs.begin() + static_cast<std::ptrdiff_t>(kept));
            kept += 4;
        }
        offs.resize(kept);
        offs.insert(offs.end(), {off, 6, value_off, static_cast<uint32_t>(f.size() - value_off)});
    }
    // The views, now that the bytes stay where they are.
    std::string_view all(f);
    auto pseudo = [&](int k) { return st.pseudo[k][1] ? all.substr(st.pseudo[k][0], st.pseudo[k][1] - 1) : std::string_view(); };
    h.header_count = offs.size() / 4;
    h.host = {};
    h.content_length = -1;
    std::string_view authority = pseudo(2);
    // RFC 9113 §8.3.1: a Host field beside :authority must name the same, or the
    // request is malformed (the app's req.host() and its Host header would disagree).
    // The same with or without the scheme's default port.
    std::string_view scheme = pseudo(1);
    auto same_host = [&](std::string_view host) {
        if (iequals(host, authority)) return true;
        std::string_view port = scheme == "https" ? ":443" : ":80";
        auto plus_port = [&](std::string_view shorter, std::string_view longer) {
            return longer.size() == shorter.size() + port.size() && longer.ends_with(port) &&
                   iequals(longer.substr(0, shorter.size()), shorter);
        };
        return plus_port(host, authority) || plus_port(authority, host);
    };
    bool hosts_differ = false;
    for (size_t i = 0; i < h.header_count; ++i) {
        Header& field = h.headers[i];
        field.name = all.substr(offs[4 * i], offs[4 * i + 1]);
        field.value = all.substr(offs[4 * i + 2], offs[4 * i + 3]);
        if (field.name == "host") {
            h.host = field.value;
            hosts_differ = hosts_differ || (!authority.empty() && !same_host(field.value));
        }
        else if (field.name == "content-length") std::from_chars(field.value.data(), field.value.data() + field.value.size(), h.content_length);
    }
    h.method_token = pseudo(0);
    h.method = method_from(h.method_token);
    h.target = pseudo(3);
    if (!authority.empty()) h.host = authority;
    size_t q = h.target.find('?');
    h.path = h.target.substr(0, q);
    h.query = q == std::string_view::npos ? std::string_view() : h.target.substr(q + 1);
    h.protocol = pseudo(4);
    if (h.method == Method::Connect && !h.protocol.empty()) {
        // Extended CONNECT (RFC 8441; nghttp2 checked :scheme and :path): the resource
        // at :path, reached as HTTP/1.1's GET with Upgrade would reach it.
        h.method = Method::Get;
        st.tunnel = true;
    } else if (h.method == Method::Connect) {  // authority-form, as HTTP/1.1 gives it
        h.target = h.host;
        h.path = h.query = {};
    }
    h.version_major = 2;
    h.version_minor = 0;
    h.chunked = false;
    h.keep_alive = true;
    h.expect_continue = false;
    h.upgrade = false;

    if (st.refused) return respond_error(st, st.refused, st.refused_why);
    if (!valid_target(h.target)) return respond_error(st, 400, "malformed request target");
    if (!valid_host(h.host)) return respond_error(st, 400, "malformed :authority or Host");
    if (hosts_differ) return respond_error(st, 400, "Host differs from :authority");
    const EngineConfig& cfg = srv_.cfg_;
    net::PeerAddress client = conn_.trusted_proxy_
                                  ? forwarded_client({h.headers, h.header_count}, conn_.peer_, cfg.trusted_proxies,
                                                     cfg.forwarded_field)
                                  : conn_.peer_;
    if (cfg.rate_table && cfg.rate > 0) {
        RateTable::Decision d = cfg.rate_table->take(client, util::monotonic_us(), cfg.rate, cfg.rate_burst);  // as HTTP/1.1
        if (!d.allowed) return respond_error(st, 429, "too many requests from your address", d.retry_after_s);
    }
    ex.request.start(&h, conn_.trusted_proxy_, conn_.proxy_ssl_ || conn_.tls_ != nullptr, client);
    if (PathStatus ps = ex.request.set_path(h.path); ps != PathStatus::Ok)
        return respond_error(st, 400, ps == PathStatus::NulByte        ? "NUL byte in path"
                                      : ps == PathStatus::EncodedSlash ? "encoded slash (%2F) in path"
                                                                       : "malformed percent-encoding in path");
    st.body_limit = srv_.service_.prepare(*ex.context, ex.request);
    if (st.tunnel) {  // answered now; what its DATA carries waits for the answer
        st.phase = H2Stream::Phase::Body;
        ready_.push_back(st.id);
        return;
    }
    if (h.content_length > 0 && static_cast<uint64_t>(h.content_length) > st.body_limit)
        return respond_error(st, 413, "request body larger than this route accepts");
    st.phase = H2Stream::Phase::Body;
    if (end_stream) {
        ready_.push_back(st.id);
        return;
    }
    if (h.content_length != 0) st.sink = srv_.service_.body_sink(*ex.context, ex.request);
}

bool H2Session::body_data(H2Stream& st, std::string_view data) {
    if (st.tunnel) {
        tunnel_data(st, data);
        return false;
    }
    if (st.phase != H2Stream::Phase::Body) return false;  // answered already: dropped
    st.received += data.size();
    progress_ += data.size();
    if (st.received > st.body_limit) {
        respond_error(st, 413, "request body larger than this route accepts");
        return false;
    }
    if (st.sink) {  // spooled (to disk, within the upload limits): not held here
        if (!st.sink->write(data)) respond_error(st, st.sink->status(), st.sink->reason(), st.sink->retry_after());
        return false;
    }
    st.ex->body_bytes.append(data);
    hold(st, data.size());
    return true;
}

void H2Session::hold(H2Stream& st, size_t n) {
    st.held += n;
    held_ += n;
    if (held_ <= kBodyBudget || first_in_line(st)) {
        nghttp2_session_consume_stream(session_, st.id, n);
        return;
    }
    if (st.owed == 0) ++held_back_;
    st.owed += n;  // its window stays shut until the budget has room, or it is first in line
    owed_ += n;
}

bool H2Session::holds_body(const H2Stream& st) {
    return st.phase == H2Stream::Phase::Body && !st.request_done && !st.sink && !st.tunnel;
}

bool H2Session::first_in_line(const H2Stream& st) const {
    // The oldest stream still receiving a body into memory always goes on: a client
    // that sends its bodies one after another is never stalled by the budget.
    for (const H2Stream* o = first_; o; o = o->next)
        if (o->id < st.id && holds_body(*o)) return false;
    return true;
}

void H2Session::give_back_windows() {
    // Streams held back, oldest first: those no longer receiving, the first in line, and
    // any while the budget has room get their windows back.
    while (owed_ > 0) {
        H2Stream* next = nullptr;
        for (H2Stream* o = first_; o; o = o->next)
            if (o->owed > 0 && (!next || o->id < next->id)) next = o;
        if (!next || (holds_body(*next) && held_ > kBodyBudget && !first_in_line(*next))) return;
        nghttp2_session_consume_stream(session_, next->id, next->owed);
        owed_ -= next->owed;
        next->owed = 0;
        --held_back_;
    }
}

void H2Session::body_done(H2Stream& st) {
    st.request_done = true;
    if (st.tunnel) return queue_ws(st);  // the peer's orderly end
    if (st.phase != H2Stream::Phase::Body) return;
    if (st.sink && !st.sink->finish()) return respond_error(st, st.sink->status(), st.sink->reason(), st.sink->retry_after());
    ready_.push_back(st.id);
}

void H2Session::dispatch(H2Stream& st) {
    --receiving_;
    st.phase = H2Stream::Phase::Handling;
    Exchange& ex = *st.ex;
    ex.request.set_body(st.sink ? std::string_view() : std::string_view(ex.body_bytes));
    Service& service = srv_.service_;
    if (service.waits(*ex.context)) {  // a coroutine: it holds only this stream while it waits
        ex.waiting = true;
        ex.response.reset(&st);
        if (st.sink) st.sink->deliver(*ex.context);
        st.sink.reset();
        st.running = true;
        ex.starting = true;
        ex.finished = false;
        int32_t id = st.id;
        service.start(*ex.context, ex.request, ex.response, {&Connection::on_waited, &ex});
        ex.starting = false;
        if (!ex.finished) return;
        if (!closed_ && find(id) == &st) complete(&ex);
        else discard(&ex, srv_.loop_.buffers());  // the stream let go of it under a streamed write
        return;
    }
    if (srv_.executor_) {
        ex.response.reset(nullptr);
        if (st.sink) st.sink->deliver(*ex.context);
        st.sink.reset();
        std::shared_ptr<CompletionQueue> done = srv_.completions_;
        Exchange* p = &ex;
        if (srv_.executor_->submit([p, &service, done] {
                service.handle(*p->context, p->request, p->response);
                done->push(p);
            })) {
            st.running = true;
            return;
        }
        return respond_error(st, 503, "all handler threads are busy", 1);
    }
    ex.response.reset(&st);
    if (st.sink) st.sink->deliver(*ex.context);
    st.sink.reset();
    int32_t id = st.id;
    st.running = true;  // a streamed write that fails detaches the stream, not the exchange
    service.handle(*ex.context, ex.request, ex.response);
    if (closed_ || find(id) != &st) {  // the connection failed under a streamed write
        discard(&ex, srv_.loop_.buffers());
        return;
    }
    st.running = false;
    respond(st);
}

void H2Session::complete(Exchange* ex) {
    H2Stream* st = find(ex->stream_id);
    assert(st && st->ex == ex);
    st->running = false;
    ex->waiting = false;
    if (ex->response.aborted() && !st->head_sent) {  // nothing was sent yet: a proper 500 is still possible
        ex->response.clear();
        ex->response.status(500);
        ex->response.send("Internal Server Error\n", "text/plain; charset=utf-8");
    }
    respond(*st);
}

void H2Session::respond(H2Stream& st) {
    Response& res = st.ex->response;
    if ((res.upgrading() || st.tunnel) && answer_tunnel(st)) return;
    srv_.count_request();
    st.phase = H2Stream::Phase::Answered;
    if (res.streaming()) {
        if (res.aborted()) {  // a false end would be worse than a reset
            nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, st.id, NGHTTP2_INTERNAL_ERROR);
        } else if (st.head_sent) {
            res.end();
        } else {  // a pool thread's or a test's: written into the body, sent whole
            // (no DATA for HEAD, 204 or 304: a body there is a malformed response)
            bool head = st.ex->head.method == Method::Head, no_body = status_has_no_body(res.status());
            submit_head(st, !head && !no_body && !res.body().empty(), !no_body, res.body().size());
            st.source = head || no_body ? H2Stream::Source::None : H2Stream::Source::Body;
        }
        watch(st);
        if (st.head_sent) observe(st, res.status(), st.written);
        return;
    }
    bool head = st.ex->head.method == Method::Head;
    bool no_body = status_has_no_body(res.status());
    uint64_t length = res.has_file() ? res.file_length() : res.body().size();
    if (res.has_file()) {
        st.file_off = res.file_offset();
        st.file_left = res.file_length();
        st.fd = res.release_file();
        st.source = H2Stream::Source::File;
    } else {
        st.source = H2Stream::Source::Body;
    }
    if (head || no_body) {  // the fd, if any, is closed with the stream
        st.source = H2Stream::Source::None;
    }
    submit_head(st, !head && !no_body && length > 0, !no_body, length);
    watch(st);
    observe(st, res.status(), head || no_body ? 0 : length);
}

void H2Session::observe(H2Stream& st, int status, uint64_t bytes) {
    if (!srv_.observer_) return;
    uint64_t elapsed = st.started_us ? util::monotonic_us() - st.started_us : 0;
    srv_.observer_->on_response({&st.ex->request, status, bytes, elapsed, st.ex->request.client()});
}

void H2Session::respond_error(H2Stream& st, int status, std::string_view why, uint32_t retry_after_s) {
    if (st.phase == H2Stream::Phase::Headers || st.phase == H2Stream::Phase::Body) --receiving_;
    st.phase = H2Stream::Phase::Answered;
    Response& res = st.ex->response;
    res.reset(nullptr);
    res.engine_error(status, why, retry_after_s);
    st.sink.reset();  // after: `why` may be its text (a refused upload's reason)
    srv_.count_request();
    st.source = H2Stream::Source::Body;
    submit_head(st, true, true, res.body().size());
    watch(st);
    observe(st, status, res.body().size());
}

void H2Session::submit_head(H2Stream& st, bool with_body, bool has_length, uint64_t length) {
    const Response& res = st.ex->response;
    auto code = static_cast<unsigned>(res.status());
    st.status[0] = static_cast<char>('0' + code / 100 % 10);
    st.status[1] = static_cast<char>('0' + code / 10 % 10);
    st.status[2] = static_cast<char>('0' + code % 10);
    char len_text[24];
    size_t len_size = static_cast<size_t>(std::to_chars(len_text, len_text + sizeof len_text, length).ptr - len_text);
    std::string_view date = srv_.date_.get(srv_.loop_.wall_seconds());
    std::string_view ctype = res.content_type();

    // Lower-cased names, in one buffer sized first (nghttp2 copies them at submit).
    size_t bytes = 0;
    for (const auto& [name, value] : res.headers()) bytes += name.size();
    names_.resize(bytes);
    thread_local std::vector<nghttp2_nv> nv_;
    nv_.clear();
    auto add = [&](std::string_view n, std::string_view v) {
        nv_.push_back({reinterpret_cast<uint8_t*>(const_cast<char*>(n.data())),
                       reinterpret_cast<uint8_t*>(const_cast<char*>(v.data())), n.size(), v.size(), NGHTTP2_NV_FLAG_NONE});
    };
    add(":status", std::string_view(st.status, 3));
    bool user_server = false, user_date = false;
    size_t at = 0;
    for (const auto& [name, value] : res.headers()) {
        char* lower = names_.data() + at;
        for (size_t i = 0; i < name.size(); ++i) lower[i] = chars::lower(name[i]);
        std::string_view n(lower, name.size());
        at += name.size();
        if (connection_specific(n)) continue;
        user_server = user_server || n == "server";
        user_date = user_date || n == "date";
        add(n, value);
    }
    if (!user_server) add("server", srv_.cfg_.server_name);
    if (!user_date) add("date", date);
    if (!ctype.empty()) add("content-type", ctype);
    if (has_length) add("content-length", std::string_view(len_text, len_size));
    nghttp2_data_provider provider;
    provider.source.ptr = &st;
    provider.read_callback = H2Callbacks::read_data;
    nghttp2_submit_response(session_, st.id, nv_.data(), nv_.size(), with_body ? &provider : nullptr);
}

// WebSocket over HTTP/2 (RFC 8441)

bool H2Session::answer_tunnel(H2Stream& st) {
    Response& res = st.ex->response;
    std::unique_ptr<WsUpgrade> up = res.take_upgrade();
    if (!st.tunnel || st.head_sent) return false;  // a plain request's, or one streamed already: it stands
    int status = res.status();
    if (up && status == 200 && !res.streaming() && !srv_.stop_requested()) {
        start_ws(st, std::move(up));
        return true;
    }
    // A 2xx tells the client its tunnel is open: only a WebSocket may answer so.
    if (status >= 200 && status < 300) {
        res.clear();
        if (srv_.stop_requested()) res.engine_error(503, "the server is stopping", 1);
        else res.engine_error(400, "no WebSocket at this address");
    }
    return false;
}

void H2Session::start_ws(H2Stream& st, std::unique_ptr<WsUpgrade> up) {
    srv_.count_request();
    st.phase = H2Stream::Phase::Answered;
    st.head_sent = true;
    st.source = H2Stream::Source::Stream;
    submit_head(st, true, false, 0);  // 200, then DATA as the WebSocket writes
    observe(st, 200, 0);
    uint32_t ping = up->settings.ping_interval_ms;
    st.ws_pings = ping ? &srv_.loop_.timers(ping) : nullptr;
    st.ws_timer.owner = &st;
    st.ws_timer.fire = [](net::Timer* t) {
        auto* s = static_cast<H2Stream*>(t->owner);
        if (s->ws && s->ws_alive()) s->ws->on_timer();
    };
    st.ws = std::make_unique<WsSession>(st, std::move(up->endpoint), up->settings);
    arm_ws(st);
    st.ws->open();
    read_ws(st);  // frames that came with the request, or its end
    conn_.schedule_flush();
}

void H2Session::tunnel_data(H2Stream& st, std::string_view data) {
    // Before the answer, at most a stream window's worth waits (a client should not
    // send before it; nghttp2 gives the window back as DATA arrives).
    if (st.gone) return;  // reset: its DATA still in flight is dropped
    if (st.ws && st.ws->closed()) return;  // nothing reads it any more (over HTTP/1.1 it is discarded too)
    if (!st.ws && st.ws_in.size() + data.size() > static_cast<size_t>(kStreamWindow)) {
        nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, st.id, NGHTTP2_ENHANCE_YOUR_CALM);
        st.gone = true;
        return;
    }
    st.ws_in.append(data, srv_.loop_.buffers());
    queue_ws(st);
}

void H2Session::queue_ws(H2Stream& st) {
    if (!st.ws || st.ws_queued) return;  // (not answered yet: read once it is)
    st.ws_queued = true;
    ws_ready_.push_back(st.id);
}

void H2Session::read_ws(H2Stream& st) {
    st.ws_queued = false;
    if (!st.ws || !st.ws_alive()) return;
    if (!st.ws_in.empty()) {
        if (!st.ws->receive()) return;
        arm_ws(st);  // heard from the peer: the ping interval starts again
    }
    if (st.ws_in.empty()) st.ws_in.release(srv_.loop_.buffers());
    if (st.request_done) {  // the peer ended its side without a closing handshake
        st.ws->abandon();
        st.ws_end();
    }
}

void H2Session::arm_ws(H2Stream& st) {
    if (!st.ws || !st.ws_alive()) return;
    if (st.ws->closing()) {  // from the close, not restarted by what the peer sends meanwhile
        if (!std::exchange(st.ws_close_armed, true)) srv_.linger_timers_.arm(st.ws_timer, srv_.loop_.now_ms());
    }
    else if (st.ws_pings) st.ws_pings->arm(st.ws_timer, srv_.loop_.now_ms());
    else st.ws_timer.disarm();
}

void H2Session::end_ws(H2Stream& st) {
    st.gone = true;
    st.ws_timer.disarm();
    if (st.ws) st.ws->abandon();  // on_close (1006 unless it was closed properly)
}

void H2Stream::ws_write(std::string_view head, std::string_view payload) {
    if (!ws_alive() || ended) return;
    pending.append(head).append(payload);
    written += head.size() + payload.size();
    session->watch(*this);
    nghttp2_session_resume_data(session->session_, id);
    session->conn_.schedule_flush();  // never at once: a flush may close this stream
}

void H2Stream::ws_end() {
    if (!ws_alive()) return;
    if (!ended) {  // END_STREAM after the output (a close frame)
        ended = true;
        nghttp2_session_resume_data(session->session_, id);
        session->conn_.schedule_flush();
    }
    session->arm_ws(*this);  // the peer's END_STREAM is due within the linger timeout
}

void H2Stream::ws_abort() {
    if (!ws_alive()) return;
    gone = true;
    ws_timer.disarm();
    nghttp2_submit_rst_stream(session->session_, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
    session->conn_.schedule_flush();
}

void H2Stream::begin(Response& res) {
    // The first write of a streamed response: its head now, its DATA as it is written.
    head_sent = true;
    source = Source::Stream;
    bool head = ex->head.method == Method::Head, no_body = status_has_no_body(res.status());
    if (head || no_body) {
        ended = true;  // nothing of it is sent
        source = Source::None;
    }
    session->submit_head(*this, !head && !no_body, false, 0);
    session->conn_.schedule_flush();
}

void H2Stream::chunk(std::string_view data) {
    if (source != Source::Stream || data.empty()) return;
    written += data.size();
    pending.append(data);
    session->watch(*this);
    nghttp2_session_resume_data(session->session_, id);
    // A long response leaves as it is made; a short one from a handler that waited
    // (nothing else will send it) at the end of this loop iteration.
    if (pending.size() >= 64 * 1024) session->conn_.h2_flush();
    else session->conn_.schedule_flush();
}

void H2Stream::finish() {
    ended = true;
    if (source != Source::Stream) return;
    nghttp2_session_resume_data(session->session_, id);
    session->conn_.schedule_flush();
}

void H2Session::stream_closed(H2Stream& st) {
    if (closed_) return;
    closed_ids_[closed_at_++ % std::size(closed_ids_)] = st.id;
    if (st.fd >= 0) ::close(st.fd);  // its frames were copied out: nothing queued reads it
    st.fd = -1;
    release(st);
}

}  // namespace kiln::http
