#include "http/connection.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <charconv>
#include <utility>

#include "http/exchange.hpp"
#include "http/forwarded.hpp"
#include "http/proxy_protocol.hpp"
#include "http/server.hpp"
#include "util/clock.hpp"
#include "http/url.hpp"

namespace kiln::http {
namespace {
constexpr size_t kReadChunk = 4096;
constexpr size_t kOwnBodyThreshold = 64 * 1024;  // larger bodies are moved, not copied
constexpr size_t kStreamFlushThreshold = 64 * 1024;
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

// An HTTP/1.x request line by its shape, even a malformed one. Only a line of
// exactly three words whose target is in none of HTTP/1's forms (origin, absolute,
// asterisk) and whose version does not start "HTTP/" is not: such a client will not
// read an HTTP/1.1 answer (h2spec's "INVALID CONNECTION PREFACE" is one).
bool looks_like_http1(std::string_view data) {
    std::string_view line = data.substr(0, data.find('\n'));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t sp = line.find(' '), last = line.rfind(' ');
    if (sp == line.npos || sp == last || line.find(' ', sp + 1) != last) return true;
    std::string_view target = line.substr(sp + 1);
    if (!target.empty() && (target[0] == '/' || target[0] == '*' || target.starts_with("http"))) return true;
    return line.substr(last + 1).starts_with("HTTP/");
}
}  // namespace

Connection::Connection(Server& server, int fd, const net::PeerAddress& peer, bool proxy_protocol,
                       const net::TlsContext* tls)
    : srv_(server), peer_(peer), fd_(fd), await_proxy_(proxy_protocol) {
    if (tls) tls_ = std::make_unique<net::TlsStream>(tls->new_ssl());
    for (const net::AddressRange& r : srv_.cfg_.trusted_proxies) trusted_proxy_ = trusted_proxy_ || r.contains(peer);
    client_ = peer;
    timer_.owner = this;
    timer_.fire = [](net::Timer* t) { static_cast<Connection*>(t->owner)->on_timeout(); };
    srv_.link(this);
    if (srv_.observer_) srv_.observer_->on_open();
    // A new connection gets the header timeout to send its first byte.
    arm(srv_.header_timers_);
}

Connection::~Connection() {
    assert(fd_ < 0 && a_ == nullptr);
    timer_.disarm();  // never left in a list: close_now disarmed it, and arm() refuses after
}

void Connection::arm(net::TimerList& list) {
    if (fd_ >= 0) list.arm(timer_, srv_.loop_.now_ms());
}

void Connection::on_io(uint32_t events) {
    if (fd_ < 0) return;
    activate();
    handle_io(events);
    settle();
}

void Connection::activate() {
    if (!a_) a_ = srv_.take_active();
}

void Connection::settle() {
    // Only here and at the end of complete(), never inside process(): its callers
    // still use the buffers after it returns.
    // An idle WebSocket gives its buffers back too (one waiting for a frame's rest keeps them).
    if (fd_ < 0 || !a_ || (state_ != State::Idle && state_ != State::WebSocket) || write_blocked_ || !a_->in.empty() ||
        !a_->out.empty())
        return;
    if (tls_) tls_->trim();  // its records' memory too (all of them sent: the output is empty)
    a_->in.release(srv_.loop_.buffers());
    srv_.give_back(a_);
    a_ = nullptr;
}

void Connection::handle_io(uint32_t events) {
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) unread_ = true;  // a new edge: bytes (or the FIN) wait
    if (events & EPOLLERR) {
        close_now();
        return;
    }
    if ((events & EPOLLOUT) && write_blocked_) {
        bool was_paused = read_paused_;
        if (!flush()) return;
        if (state_ == State::H2 && !write_blocked_) h2_flush();  // nghttp2 may have more
        if (fd_ < 0) return;
        if (was_paused && !read_paused_) {
            resume();
            return;
        }
    }
    if (events & (EPOLLRDHUP | EPOLLHUP)) {
        peer_fin_seen_ = true;
        // A handler waiting (a coroutine) while its client hangs up: the client is gone,
        // so its waits are cancelled now (close_now), not when the handler ends. A FIN
        // with nothing after it counts as gone, as nginx takes it (over TLS, any FIN);
        // a FIN behind pipelined requests does not (yet).
        if (state_ == State::Handling && a_ && a_->ex && a_->ex->waiting && peer_gone(events)) {
            close_now();
            return;
        }
    }
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) on_readable();
}

bool Connection::peer_gone(uint32_t events) const {
    if (events & EPOLLHUP) return true;  // both directions shut
    // A TLS client closes with close_notify before its FIN: that record is still in
    // the socket, and TLS 1.3 hides a record's type. A FIN over TLS counts as gone
    // (no TLS client half-closes its socket to wait for an answer).
    if (tls_) return true;
    char c;
    return ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

void Connection::resume() {
    // The output drained below the limit: handle the requests that waited in the
    // buffer, then read again (edge-triggered: the socket may hold unread bytes).
    if (state_ == State::Lingering || state_ == State::Closing || state_ == State::Handling) return;
    if (state_ == State::H2) {
        h2_read();
        return;
    }
    if (state_ == State::WebSocket) {
        ws_read();
        return;
    }
    process();
    if (fd_ >= 0) on_readable();
}

size_t Connection::read_size() const {
    const ActiveState& a = *a_;
    if (state_ == State::Body && !a.is_chunked) {
        size_t need = a.head_len + a.body_len - std::min<size_t>(a.in.size(), a.head_len + a.body_len);
        // Grow toward the declared length by doubling, so a client that only declares
        // a large body does not get the memory for it at once.
        return std::max<size_t>(std::min(need, std::max(a.in.size(), net::BufferPool::kBlockSize)), 1);
    }
    return a.in.size() < net::BufferPool::kBlockSize ? kReadChunk : a.in.size();
}

void Connection::on_readable() {
    if (state_ == State::Handling) return;  // the exchange holds the buffer; read after it completes
    if (state_ == State::Lingering) {
        discard_input();
        return;
    }
    for (;;) {
        if (state_ == State::H2) {
            h2_read();
            return;
        }
        if (state_ == State::WebSocket) {
            ws_read();
            return;
        }
        read_and_process();
        if (fd_ < 0) return;
        // HTTP/2 began in what was read, or a request upgraded: read on in the new protocol.
        if (state_ == State::H2 || state_ == State::WebSocket) continue;
        if (a_->in.empty()) a_->in.release(srv_.loop_.buffers());
        bool was_paused = read_paused_;
        if (!flush()) return;
        if (!was_paused || read_paused_ || state_ == State::Closing || state_ == State::Lingering) return;
        process();  // the output drained at once: handle what waited, then read on
        if (fd_ < 0) return;
    }
}

void Connection::read_and_process() {
    // Only while the socket may hold bytes: after a read found it empty, no new edge
    // came (a handler finished, the output drained), a read would only say EAGAIN.
    while (unread_ && fd_ >= 0 && !read_paused_ && state_ != State::Closing && state_ != State::Handling &&
           state_ != State::H2 && state_ != State::WebSocket) {
        a_->in.ensure_writable(read_size(), srv_.loop_.buffers());
        size_t room = a_->in.writable();
        ssize_t n = tls_ ? tls_->read(fd_, a_->in.write_ptr(), room) : ::read(fd_, a_->in.write_ptr(), room);
        if (n > 0) {
            a_->in.commit(static_cast<size_t>(n));
            if (state_ == State::Body) arm(srv_.body_timers_);  // progress resets the body timeout
            process();
            // Edge-triggered: a short read means the socket is drained for now, and new
            // bytes will raise a new edge. Skipping the EAGAIN read saves a syscall —
            // unless the peer's FIN came with these bytes: it raises no later edge, so
            // read on until read() says 0. Over TLS a short read says nothing of the
            // socket (records): read on until the stream says EAGAIN.
            if (!tls_ && static_cast<size_t>(n) < room && !peer_fin_seen_) {
                unread_ = false;
                return;
            }
            unread_ = true;  // (a full read: more may wait)
            continue;
        }
        if (n == 0) {
            peer_eof_ = true;
            if (a_->out.empty() && !(tls_ && tls_->has_output())) {
                close_now();  // nothing owed; an unfinished request can never complete
                return;
            }
            if (state_ == State::Head || state_ == State::Body) {
                // An unfinished request after answered ones (or an empty line after
                // one): it can never complete, but the answers owed still go out.
                a_->in.consume(a_->in.size());
                state_ = State::Closing;
            }
            close_after_flush_ = true;
            return;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) close_now();
        unread_ = false;
        return;
    }
}

void Connection::process() {
    // srv_.head_ and srv_.request_ are the loop's: between two calls other
    // connections parse into them. What this call parsed is valid until it returns.
    struct Stale {
        bool& current;
        ~Stale() { current = false; }
    } stale{head_current_};
    head_current_ = false;
    if (await_proxy_ && !take_proxy_header()) return;
    const Limits& limits = srv_.cfg_.limits;
    while (fd_ >= 0 && !read_paused_ && (state_ == State::Idle || state_ == State::Head || state_ == State::Body)) {
        if (state_ != State::Body) {
            std::string_view data = a_->in.readable();
            if (data.empty()) {
                enter_idle();
                return;
            }
            if (state_ == State::Idle && data.find_first_not_of("\r\n") == std::string_view::npos) {
                // RFC 9112 §2.2: empty lines between requests (some clients send CRLF
                // after a body) are dropped, and the connection stays idle under its
                // keep-alive timeout; before, the header timeout answered them with 408.
                // A running keep-alive timer is not restarted (nor a new connection's
                // header timer replaced): empty lines alone do not hold a connection.
                a_->in.consume(data.size());
                if (served_ > 0 && timer_.list != &srv_.keepalive_timers_ && timer_.list != &srv_.drain_grace_timers_)
                    enter_idle();
                else
                    a_->in.release(srv_.loop_.buffers());
                return;
            }
            if (state_ == State::Idle) {
                state_ = State::Head;
                client_ = peer_;  // until the head names another (find_client)
                a_->scan_hint = 0;
                a_->started_us = 0;
                arm(srv_.header_timers_);
            }
            if (!protocol_known_ && detect_h2(data)) return;
            if (!head_may_be_complete(data, a_->scan_hint, limits)) {
                a_->scan_hint = data.size();
                return;
            }
            a_->scan_hint = data.size();
            ParseResult r = parse_request_head(data, srv_.head_, limits);
            if (r.status == ParseStatus::Incomplete) return;
            if (r.status == ParseStatus::Error) {
                if (served_ == 0 && srv_.cfg_.http2 && !looks_like_http1(data)) {
                    // Neither HTTP/1.x nor HTTP/2's preface: a client that would not read
                    // an HTTP/1.1 answer (h2spec's bad preface is one). Closed, as
                    // HTTP/2 closes on a bad preface.
                    close_now();
                    return;
                }
                respond_error(status_for(r.error), describe(r.error));
                return;
            }
            a_->head_len = r.consumed;
            if (srv_.observer_) a_->started_us = util::monotonic_us();
            find_client();
            if (srv_.cfg_.rate_table && srv_.cfg_.rate > 0) {  // limits.rate, before any work for it
                // The clock now, not the loop's (read once an iteration): other workers
                // move the bucket by theirs, and a stale time sees less refilled.
                RateTable::Decision d =
                    srv_.cfg_.rate_table->take(client_, util::monotonic_us(), srv_.cfg_.rate, srv_.cfg_.rate_burst);
                if (!d.allowed) {
                    respond_error(429, "too many requests from your address", d.retry_after_s);
                    return;
                }
            }
            if (!start_request()) return;
            const RequestHead& h = srv_.head_;
            a_->is_chunked = h.chunked;
            a_->body_len = h.content_length > 0 ? static_cast<uint64_t>(h.content_length) : 0;
            a_->continue_sent = false;
            a_->sink.reset();
            a_->sunk = 0;
            if (a_->is_chunked || a_->body_len > 0) a_->sink = srv_.service_.body_sink(*srv_.context_, srv_.request_);
            if (a_->is_chunked) {
                a_->chunked = ChunkedDecoder();
                a_->chunk_read = a_->chunk_write = a_->head_len;
            } else if (a_->body_len > a_->body_limit) {
                respond_error(413, "request body larger than this route accepts");
                return;
            }
            state_ = State::Body;
            arm(srv_.body_timers_);
        }
        if (!body_ready()) {
            if (fd_ < 0 || state_ != State::Body) return;  // error already answered
            if (!a_->continue_sent && head_current_ && srv_.head_.expect_continue) send_continue();
            return;
        }
        if (!head_current_) {
            // The body arrived in a later read: the shared head was reused since, and
            // the buffer may have moved. Parse the (complete) head again.
            ParseResult r = parse_request_head(a_->in.readable(), srv_.head_, limits);
            assert(r.status == ParseStatus::Complete && r.consumed == a_->head_len);
            (void)r;
            if (!start_request()) return;
        }
        ActiveState& a = *a_;
        if (a.sink) {
            dispatch({}, a.head_len);  // the body went to the sink as it came
        } else if (a.is_chunked) {
            dispatch(std::string_view(a.in.readable_data() + a.head_len, a.chunk_write - a.head_len), a.chunk_read);
        } else {
            dispatch(std::string_view(a.in.readable_data() + a.head_len, a.body_len), a.head_len + a.body_len);
        }
    }
}

PathStatus Connection::prepare_request(const RequestHead& h, Request& req, RequestContext& ctx) {
    req.start(&h, trusted_proxy_, proxy_ssl_ || tls_ != nullptr, client_);
    if (PathStatus ps = req.set_path(h.path); ps != PathStatus::Ok) return ps;
    a_->body_limit = srv_.service_.prepare(ctx, req);
    return PathStatus::Ok;
}

bool Connection::start_request() {
    PathStatus ps = prepare_request(srv_.head_, srv_.request_, *srv_.context_);
    if (ps != PathStatus::Ok) {
        respond_error(400, ps == PathStatus::NulByte        ? "NUL byte in path"
                           : ps == PathStatus::EncodedSlash ? "encoded slash (%2F) in path"
                                                            : "malformed percent-encoding in path");
        return false;
    }
    head_current_ = true;
    return true;
}

bool Connection::take_proxy_header() {
    ProxyHeader h = parse_proxy_header(a_->in.readable());
    if (h.status == ProxyHeader::Status::Incomplete) return false;  // the header timeout bounds the wait
    if (h.status == ProxyHeader::Status::Invalid) {  // not from the balancer: nothing here is to be trusted
        close_now();
        return false;
    }
    a_->in.consume(h.consumed);
    await_proxy_ = false;
    proxy_ssl_ = h.ssl;
    const EngineConfig& cfg = srv_.cfg_;
    if (cfg.max_connections_per_address && cfg.address_counts) {
        // Counted now, as the client the header names (not at accept, as the balancer);
        // LOCAL and UNKNOWN as the balancer's own connection.
        if (!cfg.address_counts->add(h.has_source ? h.source : peer_, cfg.max_connections_per_address)) {
            // Refused as at accept, and closed at once (a refused connection lingering
            // would hold a place under limits.max_connections). Counted nowhere, so the
            // close releases nothing.
            srv_.refuse_per_address(fd_, tls_ != nullptr);
            close_now();
            return false;
        }
        counted_ = true;
    }
    if (h.has_source) {
        peer_ = h.source;
        // Forwarded fields count only if the client the balancer names is itself a
        // trusted proxy: the balancer vouches for the address, not for the headers.
        trusted_proxy_ = false;
        for (const net::AddressRange& r : srv_.cfg_.trusted_proxies) trusted_proxy_ = trusted_proxy_ || r.contains(peer_);
    } else if (!h.local) {
        // UNKNOWN (v1), UNSPEC or a unix socket (v2): a client the balancer cannot name.
        // Its bytes are its own, so its forwarded fields are a claim (the balancer's
        // trust was for the balancer). Only LOCAL is the balancer itself.
        trusted_proxy_ = false;
    }
    client_ = peer_;
    return true;
}

void Connection::find_client() {
    client_ = trusted_proxy_ ? forwarded_client({srv_.head_.headers, srv_.head_.header_count}, peer_,
                                                srv_.cfg_.trusted_proxies, srv_.cfg_.forwarded_field)
                             : peer_;
}

bool Connection::body_ready() {
    ActiveState& a = *a_;
    if (a.sink) return pump_body();
    if (!a.is_chunked) return a.in.size() >= a.head_len + a.body_len;
    ChunkedStatus st = a.chunked.decode(a.in.readable_data(), &a.chunk_read, &a.chunk_write, a.in.size(), a.body_limit);
    // The framing decoded (chunk sizes, extensions, CRLFs) is cut out, so `in` holds
    // the payload, which body_limit bounds, and at most a read more: one byte per
    // chunk with 4 KB of extension had kept 4 KB a payload byte. Later reads append
    // after chunk_read, which is now chunk_write.
    a.in.erase(a.chunk_write, a.chunk_read - a.chunk_write);
    a.chunk_read = a.chunk_write;
    return !refuse_chunked(st) && st == ChunkedStatus::Done;
}

bool Connection::refuse_chunked(ChunkedStatus st) {
    switch (st) {
        case ChunkedStatus::Done:
        case ChunkedStatus::NeedMore: return false;
        case ChunkedStatus::Malformed: respond_error(400, "malformed chunked body"); return true;
        case ChunkedStatus::TooLarge: respond_error(413, "request body larger than this route accepts"); return true;
        case ChunkedStatus::TrailersTooLarge: respond_error(431, "chunked trailers too large"); return true;
    }
    return false;
}

bool Connection::pump_body() {
    // The head stays at the front of `in` (it is parsed again if the body spans reads);
    // body bytes go to the sink and are cut out, so `in` never holds more than a read.
    ActiveState& a = *a_;
    ChunkedStatus st = ChunkedStatus::Done;
    size_t piece;
    if (a.is_chunked) {
        st = a.chunked.decode(a.in.readable_data(), &a.chunk_read, &a.chunk_write, a.in.size(), a.body_limit);
        piece = a.chunk_write - a.head_len;
    } else {
        piece = static_cast<size_t>(std::min<uint64_t>(a.in.size() - a.head_len, a.body_len - a.sunk));
        a.sunk += piece;
    }
    if (piece > 0 && !a.sink->write(std::string_view(a.in.readable_data() + a.head_len, piece))) {
        respond_error(a.sink->status(), a.sink->reason(), a.sink->retry_after());
        return false;
    }
    if (a.is_chunked) {
        a.in.erase(a.head_len, a.chunk_read - a.head_len);
        a.chunk_read = a.chunk_write = a.head_len;
        if (refuse_chunked(st) || st == ChunkedStatus::NeedMore) return false;
    } else {
        a.in.erase(a.head_len, piece);
        if (a.sunk < a.body_len) return false;
    }
    if (!a.sink->finish()) {
        respond_error(a.sink->status(), a.sink->reason(), a.sink->retry_after());
        return false;
    }
    return true;
}

void Connection::send_continue() {
    // Only worth it if the client is waiting: nothing of the body has arrived yet.
    a_->continue_sent = true;
    if (a_->in.size() > a_->head_len) return;
    a_->out.append(kContinue, srv_.loop_.buffers());
    flush();
}

namespace {
uint64_t body_size(const Response& res) { return res.has_file() ? res.file_length() : res.body().size(); }
}  // namespace

void Connection::dispatch(std::string_view body, size_t consumed) {
    const RequestHead& h = srv_.head_;
    Request& req = srv_.request_;
    req.set_body(body);
    a_->head_only = h.method == Method::Head;
    a_->http10 = h.version_minor == 0;
    ++served_;
    uint32_t cap = srv_.cfg_.max_requests_per_connection;
    a_->keep_alive = h.keep_alive && !srv_.stop_requested() && !peer_eof_ && (cap == 0 || served_ < cap);
    a_->client_closes = !h.keep_alive;
    if (srv_.service_.waits(*srv_.context_)) {  // a coroutine: on this loop, in any MPM
        start_waiting(body, consumed);
        return;
    }
    if (srv_.executor_ && submit(body, consumed)) return;
    Response& res = srv_.response_;
    if (srv_.executor_) {  // the pool's queue is full: say so now, without blocking the loop
        res.reset(nullptr);
        res.engine_error(503, "all handler threads are busy", 1);
    } else {
        res.reset(this);
        if (a_->sink) a_->sink->deliver(*srv_.context_);
        srv_.service_.handle(*srv_.context_, req, res);
    }
    srv_.count_request();
    if (fd_ < 0) return;  // a streamed write failed and closed us
    if (res.upgrading() && upgrade(res, &req, consumed)) return;
    if (res.streaming()) {
        if (res.aborted()) {
            a_->keep_alive = false;
            cut_ = true;
        } else {
            res.end();
        }
        observe(&req, res.status(), a_->streamed);
    } else {
        uint64_t sent = a_->head_only || status_has_no_body(res.status()) ? 0 : body_size(res);
        write_response(res);
        observe(&req, res.status(), sent);
    }
    finish_request(consumed);
}

bool Connection::submit(std::string_view body, size_t consumed) {
    // One allocation per request: the hybrid model's price, small next to the
    // blocking handler it exists for.
    Exchange* ex = new_exchange(body);
    Service& service = srv_.service_;
    std::shared_ptr<CompletionQueue> done = srv_.completions_;
    bool queued = srv_.executor_->submit([ex, &service, done] {
        service.handle(*ex->context, ex->request, ex->response);
        done->push(ex);
    });
    if (!queued) {
        a_->in = std::move(ex->buffer);
        delete ex;
        return false;
    }
    hold(ex, consumed);
    return true;
}

Exchange* Connection::new_exchange(std::string_view body) {
    // The request moves into an Exchange of its own, with the read buffer its views
    // point into, so it survives whatever the connection does meanwhile.
    auto* ex = new Exchange();
    ex->head = srv_.head_;
    ex->context = srv_.service_.new_context();
    prepare_request(ex->head, ex->request, *ex->context);  // already validated once: cannot fail
    ex->request.set_body(body);
    if (a_->sink) a_->sink->deliver(*ex->context);
    ex->response.reset(nullptr);  // no stream: writes are buffered until the handler returns
    ex->connection = this;
    ex->buffer = std::move(a_->in);
    return ex;
}

void Connection::hold(Exchange* ex, size_t consumed) {
    a_->ex = ex;
    a_->pending_consumed = consumed;
    state_ = State::Handling;
    // No timer while it runs: a pool thread's handler takes as long as it takes (the
    // watchdog is for loops); a waiting one is bounded by timeouts.handler_ms. Unless
    // an earlier response is still stuck in a client that does not read: its write
    // timeout runs on (disarmed, nothing would ever close the connection).
    if (!write_blocked_) timer_.disarm();
}

void Connection::start_waiting(std::string_view body, size_t consumed) {
    Exchange* ex = new_exchange(body);
    ex->waiting = true;
    // On this loop, with the connection to itself: a streamed response leaves as it
    // is written (server-sent events), unbound again if the connection closes first.
    ex->response.reset(this);
    hold(ex, consumed);
    ex->starting = true;
    srv_.service_.start(*ex->context, ex->request, ex->response, {&Connection::on_waited, ex});
    ex->starting = false;
    if (!ex->finished) return;
    // It never waited: go on as after a plain handler, unless the connection closed
    // under it (a streamed write failed: the client is gone), which let go of it.
    if (ex->connection) finish_exchange(ex);
    else discard(ex, srv_.loop_.buffers());
}

void Connection::on_waited(void* exchange) {
    auto* ex = static_cast<Exchange*>(exchange);
    if (ex->starting) {
        ex->finished = true;  // start_waiting takes it from here
        return;
    }
    if (ex->connection) {
        ex->connection->complete(ex);
        return;
    }
    discard(ex, net::Loop::current()->buffers());  // the client left while it waited
}

void Connection::complete(Exchange* ex) {
    if (h2_) {
        h2_->complete(ex);
        h2_flush();
        return;
    }
    finish_exchange(ex);
    if (state_ == State::Idle || state_ == State::WebSocket) {
        process();  // requests pipelined behind this one (a WebSocket: nothing)
        if (fd_ < 0) return;
        on_readable();  // edge-triggered: bytes may have arrived while we did not read
    } else {
        flush();
    }
    settle();
}

void Connection::finish_exchange(Exchange* ex) {
    // Back on the loop thread, the request's bytes back where they were.
    a_->ex = nullptr;
    a_->in = std::move(ex->buffer);
    Response& res = ex->response;
    if (res.streaming() && res.has_stream()) {  // a coroutine's stream: its head and chunks are out
        srv_.count_request();
        if (res.aborted()) {  // cut short: the client sees no clean end
            a_->keep_alive = false;
            cut_ = true;
        } else {
            res.end();
        }
        observe(&ex->request, res.status(), a_->streamed);
        delete ex;
        finish_request(a_->pending_consumed);
        return;
    }
    if (res.aborted()) {  // nothing was sent yet: a proper 500 is still possible
        res.clear();
        res.status(500);
        res.send("Internal Server Error\n", "text/plain; charset=utf-8");
    }
    srv_.count_request();
    if (res.upgrading() && upgrade(res, &ex->request, a_->pending_consumed)) {
        delete ex;
        return;
    }
    uint64_t sent = a_->head_only || status_has_no_body(res.status()) ? 0 : body_size(res);
    write_response(res);
    observe(&ex->request, res.status(), sent);
    delete ex;
    finish_request(a_->pending_consumed);
}

void Connection::finish_request(size_t consumed) {
    head_current_ = false;
    a_->sink.reset();  // uploads' temp files belong to the request now, or are gone
    a_->in.consume(consumed);
    if (!a_->keep_alive) {
        close_after_flush_ = true;
        // The client said this was its last request and sent nothing after it: no
        // unread byte can turn our close into a reset, so the lingering close (a
        // shutdown, a wait for its FIN, another wake-up) buys nothing. One request
        // per connection (HTTP/1.0, ab, httperf) is common enough to matter.
        plain_close_ = a_->client_closes && a_->in.empty();
        a_->in.consume(a_->in.size());  // requests pipelined after a close are not answered
        state_ = State::Closing;
        return;
    }
    state_ = State::Idle;
    if (a_->out.backlog() > srv_.cfg_.max_pending_output) read_paused_ = true;
}

void Connection::write_head(const Response& res, Framing framing, size_t content_length, bool upgrade) {
    HeadParams hp;
    hp.upgrade = upgrade;
    hp.date = srv_.date_.get(srv_.loop_.wall_seconds());
    hp.server = srv_.cfg_.server_name;
    hp.keep_alive = a_->keep_alive;
    hp.http10 = a_->http10;
    hp.framing = framing;
    hp.content_length = content_length;
    serialize_head(res, hp, a_->out, srv_.loop_.buffers());
}

void Connection::write_response(Response& res) {
    // Decided when the head is written: a stop may have begun while the handler ran.
    a_->keep_alive = a_->keep_alive && !res.closes_connection() && !srv_.stop_requested();
    bool no_body = status_has_no_body(res.status());
    write_head(res, no_body ? Framing::NoBody : Framing::Length, body_size(res));
    if (no_body || a_->head_only) {
        res.drop_file();  // (closed now, not at the loop's next request)
        return;
    }
    if (res.has_file()) {
        uint64_t off = res.file_offset(), len = res.file_length();
        a_->out.append_file(res.release_file(), off, len);
        return;
    }
    net::BufferPool& pool = srv_.loop_.buffers();
    if (res.body().size() >= kOwnBodyThreshold) a_->out.append_owned(std::move(res.body()));
    else a_->out.append(res.body(), pool);
}

void Connection::observe(const Request* req, int status, uint64_t body_bytes) {
    if (!srv_.observer_) return;
    uint64_t elapsed = a_->started_us ? util::monotonic_us() - a_->started_us : 0;
    srv_.observer_->on_response({req, status, body_bytes, elapsed, client_});
    a_->started_us = 0;
}

void Connection::begin(Response& res) {
    if (fd_ < 0) return;
    a_->streamed = 0;
    a_->stream_open = true;
    a_->keep_alive = a_->keep_alive && !res.closes_connection() && !srv_.stop_requested();
    Framing announced;
    if (status_has_no_body(res.status())) {
        announced = Framing::NoBody;
    } else if (a_->http10) {
        announced = Framing::UntilClose;
        a_->keep_alive = a_->keep_alive && a_->head_only;
    } else {
        announced = Framing::Chunked;
    }
    // HEAD gets the head a GET would get (RFC 9110 §9.3.2), and no body.
    a_->stream_framing = a_->head_only ? Framing::NoBody : announced;
    write_head(res, announced, 0);
    schedule_flush();  // the head leaves now, even before a byte of the body
}

void Connection::chunk(std::string_view data) {
    if (fd_ < 0 || data.empty() || a_->stream_framing == Framing::NoBody) return;
    a_->streamed += data.size();
    net::BufferPool& pool = srv_.loop_.buffers();
    if (a_->stream_framing == Framing::Chunked) {
        char line[24];
        char* e = std::to_chars(line, line + 16, data.size(), 16).ptr;
        *e++ = '\r';
        *e++ = '\n';
        a_->out.append(std::string_view(line, static_cast<size_t>(e - line)), pool);
        a_->out.append(data, pool);
        a_->out.append("\r\n", pool);
    } else {
        a_->out.append(data, pool);
    }
    if (a_->out.size() >= kStreamFlushThreshold) flush();
    else schedule_flush();  // a handler that waits between writes: each leaves this iteration
}

void Connection::finish() {
    if (fd_ < 0) return;
    a_->stream_open = false;
    if (a_->stream_framing == Framing::Chunked) a_->out.append("0\r\n\r\n", srv_.loop_.buffers());
}

void Connection::respond_error(int status, std::string_view why, uint32_t retry_after_s) {
    Response& res = srv_.response_;
    res.reset(nullptr);
    res.engine_error(status, why, retry_after_s);
    a_->keep_alive = false;
    a_->head_only = false;
    a_->http10 = false;
    write_response(res);
    observe(head_current_ ? &srv_.request_ : nullptr, status, res.body().size());
    head_current_ = false;
    a_->in.consume(a_->in.size());
    state_ = State::Closing;
    close_after_flush_ = true;
}

bool Connection::flush() {
    if (fd_ < 0) return false;
    if (!a_->out.empty() || (tls_ && tls_->has_output())) {
        size_t written = 0;
        net::OutputQueue::Status st = a_->out.write_to(fd_, srv_.loop_.buffers(), &written, tls_.get());
        if (st == net::OutputQueue::Status::Error) {
            close_now();
            return false;
        }
        if (st == net::OutputQueue::Status::Blocked || st == net::OutputQueue::Status::Yield) {
            if (!write_blocked_ || written > 0 || timer_.list != &srv_.write_timers_) arm(srv_.write_timers_);
            write_blocked_ = true;
            // Its share sent, the socket still writable: no EPOLLOUT edge will come, so
            // the rest goes in a later iteration, after the other connections' events.
            if (st == net::OutputQueue::Status::Yield) schedule_flush();
            return true;
        }
    }
    bool was_blocked = write_blocked_;
    write_blocked_ = false;
    read_paused_ = false;
    if (ws_ && !close_after_flush_) {
        ws_->on_flushed();  // the app's drain callback: it may write, or cut the client
        if (fd_ < 0) return false;
        if (write_blocked_) return true;
    }
    if (close_after_flush_) {
        if (plain_close_) {
            close_now();
            return false;
        }
        start_linger();
        return fd_ >= 0;
    }
    if (was_blocked) arm_state_timer();
    return true;
}

void Connection::arm_state_timer() {
    switch (state_) {
        case State::Idle: arm(srv_.draining_ ? srv_.drain_grace_timers_ : srv_.keepalive_timers_); break;
        case State::Head: arm(srv_.header_timers_); break;
        case State::Body: arm(srv_.body_timers_); break;
        case State::Closing: arm(srv_.write_timers_); break;
        case State::Lingering: arm(srv_.linger_timers_); break;
        case State::Handling: timer_.disarm(); break;  // the write timer of a blocked stream is done
        case State::WebSocket: ws_arm(); break;
        case State::H2:
            // A stream still receiving its request: the body timeout. None open: the
            // keep-alive one. Each restarts only as streams come and go and body bytes
            // arrive: PINGs and other frames do not hold a connection open. Otherwise
            // handlers run (or stream) as long as they take, and each stream's DATA has
            // its own write timeout (H2Session::stalled).
            if (h2_->receiving()) {
                arm_on_progress(srv_.body_timers_);
            } else if (h2_->idle()) {
                arm_on_progress(srv_.draining_ ? srv_.drain_grace_timers_ : srv_.keepalive_timers_);
            } else {
                timer_.disarm();
            }
            break;
    }
}

void Connection::arm_on_progress(net::TimerList& list) {
    if (timer_.list != &list || h2_->progress() != h2_progress_mark_) arm(list);
    h2_progress_mark_ = h2_->progress();
}

void Connection::enter_idle() {
    state_ = State::Idle;
    a_->in.release(srv_.loop_.buffers());
    if (!write_blocked_) arm(srv_.draining_ ? srv_.drain_grace_timers_ : srv_.keepalive_timers_);
}

void Connection::start_linger() {
    state_ = State::Lingering;
    a_->in.consume(a_->in.size());
    a_->in.release(srv_.loop_.buffers());
    if (peer_eof_) {
        close_now();
        return;
    }
    if (tls_ && !cut()) tls_->shutdown(fd_);  // close_notify: the response ended here, not cut
    ::shutdown(fd_, SHUT_WR);
    arm(srv_.linger_timers_);
    discard_input();
}

void Connection::discard_input() {
    char sink[4096];
    for (int i = 0; i < 64; ++i) {  // bounded: a peer that keeps sending is cut at the timeout
        ssize_t n = ::read(fd_, sink, sizeof sink);
        if (n > 0) continue;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        close_now();  // FIN (or error): the peer has everything we sent
        return;
    }
}

void Connection::on_timeout() {
    if (fd_ < 0) return;
    if (state_ == State::H2 && !write_blocked_ && h2_->idle()) {  // idle: a GOAWAY says so, then close
        h2_->drain();
        h2_flush();
        if (fd_ >= 0 && !close_after_flush_) close_now();
        return;
    }
    if (state_ == State::WebSocket && !write_blocked_) {
        ws_->on_timer();
        return;
    }
    if (!write_blocked_ && (state_ == State::Head || state_ == State::Body)) {
        respond_error(408, state_ == State::Head ? "timed out reading the request head" : "timed out reading the body");
        flush();
        return;
    }
    close_now();
}

void Connection::drain() {
    // Idle: closed when the grace ends, unless a request comes first (its response
    // then says Connection: close). Busy: finishes its request the same way.
    // HTTP/2: a GOAWAY now; the streams it names finish, then the connection closes.
    if (state_ == State::H2) {
        h2_->drain();
        h2_flush();
        return;
    }
    if (state_ == State::WebSocket) {
        ws_->going_away();
        return;
    }
    if (state_ == State::Idle && (!a_ || a_->out.empty()) && !write_blocked_) arm(srv_.drain_grace_timers_);
}

void Connection::close_now() {
    if (fd_ < 0) return;
    timer_.disarm();
    // close_notify, best effort: a closing peer knows it was not cut. Not while a
    // response streams (a stop's drain timeout, a write timeout): a client reading an
    // HTTP/1.0 response to the close would take what it has for the whole.
    if (tls_ && !cut()) tls_->shutdown(fd_);
    ::close(fd_);  // also removes it from epoll
    fd_ = -1;
    if (a_) {
        if (a_->ex) {  // the handler still runs: its exchange outlives us and frees itself
            if (a_->ex->waiting) srv_.service_.cancel(*a_->ex->context);  // its waits end now
            // Its later writes go nowhere. (A pool thread's response has no stream to
            // let go of, and the thread may be reading it: left alone.)
            if (a_->ex->response.has_stream()) a_->ex->response.unbind();
            a_->ex->connection = nullptr;
            a_->ex = nullptr;
        }
        net::BufferPool& pool = srv_.loop_.buffers();
        a_->sink.reset();  // an upload's temporary files go with the request
        a_->in.consume(a_->in.size());
        a_->in.release(pool);
        a_->out.clear(pool);
        a_->stream_open = false;
        srv_.give_back(a_);
        a_ = nullptr;
    }
    if (h2_) h2_->abandon();  // its handlers still running lose their streams
    if (ws_) ws_->abandon();  // the layer above hears of it (1006 unless closed properly)
    srv_.unlink(this);
    if (srv_.observer_) srv_.observer_->on_close();
    if (flush_scheduled_) destroy_pending_ = true;  // deferred_flush still names us
    else srv_.loop_.destroy_later(this);
}

bool Connection::detect_h2(std::string_view data) {
    // HTTP/2 if TLS's ALPN chose it, or the bytes are the client preface (h2c with
    // prior knowledge, RFC 9113 §3.3); a preface still arriving waits, under the
    // header timeout. Anything else is HTTP/1.1 for the connection's life.
    if (srv_.cfg_.http2) {
        if (tls_ && tls_->alpn() == "h2") {
            start_h2();
            return true;
        }
        size_t n = std::min(data.size(), kH2Preface.size());
        if (data.substr(0, n) == kH2Preface.substr(0, n)) {
            if (n == kH2Preface.size()) start_h2();
            return true;
        }
    }
    protocol_known_ = true;
    return false;
}

void Connection::start_h2() {
    protocol_known_ = true;
    state_ = State::H2;
    h2_ = std::make_unique<H2Session>(srv_, *this);
    if (h2_receive()) h2_flush();
}

ssize_t Connection::read_more(size_t want, bool* drained) {
    a_->in.ensure_writable(want, srv_.loop_.buffers());
    size_t room = a_->in.writable();
    for (;;) {
        ssize_t n = tls_ ? tls_->read(fd_, a_->in.write_ptr(), room) : ::read(fd_, a_->in.write_ptr(), room);
        if (n > 0) {
            a_->in.commit(static_cast<size_t>(n));
            // As in read_and_process: a short plain read drained the socket (over TLS a
            // short read says nothing of it).
            *drained = !tls_ && static_cast<size_t>(n) < room && !peer_fin_seen_;
            return n;
        }
        if (n == 0) {  // the client closed
            peer_eof_ = true;
            close_now();
            return -1;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            close_now();
            return -1;
        }
        return 0;
    }
}

void Connection::h2_read() {
    constexpr size_t kH2ReadChunk = 16 * 1024;
    for (;;) {
        bool drained = false;
        ssize_t n = read_more(kH2ReadChunk, &drained);
        if (n < 0) return;  // closed: streams still open lose their responses
        if (n == 0) break;
        if (!h2_receive()) return;
        if (drained) break;
    }
    a_->in.release(srv_.loop_.buffers());
    h2_flush();
}

bool Connection::h2_receive() {
    bool ok = h2_->receive(a_->in.readable());
    if (fd_ < 0) return false;  // a handler's write failed and closed us
    a_->in.consume(a_->in.size());
    if (ok) return true;
    h2_->send();  // the GOAWAY that says why
    close_after_flush_ = true;
    flush();
    return false;
}

void Connection::h2_flush() {
    if (fd_ < 0 || state_ != State::H2) return;
    // Each round queues up to max_pending_output and writes it; together about one
    // write share (OutputQueue::kWriteShare) per turn of the loop, as over HTTP/1.1.
    // More to send and the socket still writable: the rest in a later turn, after the
    // loop's other connections (no EPOLLOUT edge will come for it).
    size_t rounds = std::max<size_t>(1, net::OutputQueue::kWriteShare / std::max<size_t>(srv_.cfg_.max_pending_output, 1));
    for (size_t round = 0;; ++round) {
        h2_->send();
        bool queued = !a_->out.empty();  // nothing: what is left waits for the peer's window
        if (!flush()) return;
        if (write_blocked_ || !queued || !h2_->wants_write()) break;
        if (round + 1 == rounds) {
            schedule_flush();
            return;
        }
    }
    if (h2_->finished() && !close_after_flush_) {  // GOAWAY sent and every stream done
        close_after_flush_ = true;
        if (!flush()) return;
    }
    if (fd_ >= 0 && state_ == State::H2 && !write_blocked_) arm_state_timer();
}

void Connection::schedule_flush() {
    if (flush_scheduled_) return;
    flush_scheduled_ = true;
    srv_.loop_.defer(&Connection::deferred_flush, this);
}

void Connection::deferred_flush(void* connection) {
    auto* c = static_cast<Connection*>(connection);
    c->flush_scheduled_ = false;
    if (c->destroy_pending_) {
        delete c;  // closed since: nothing else names it
        return;
    }
    if (c->h2_) {
        c->h2_flush();
    } else if (c->a_) {  // (an idle connection gave its buffers back: nothing waits)
        // A WebSocket written to from outside its events, or the rest of a response
        // whose write yielded: once it is all sent, what waited on it goes on, as after
        // EPOLLOUT.
        bool was_paused = c->read_paused_;
        if (!c->flush()) return;
        if (was_paused && !c->read_paused_) c->resume();
        c->settle();
    }
}

bool Connection::upgrade(Response& res, const Request* req, size_t consumed) {
    // Only a 101 on HTTP/1.1 turns into a WebSocket; anything else keeps its response.
    if (res.status() != 101 || a_->head_only || h2_) {
        res.take_upgrade();
        if (res.status() == 101) {  // a HEAD of a WebSocket route: no 101 on a connection that stays HTTP
            res.clear();
            res.engine_error(400, "a WebSocket handshake is a GET");
        }
        return false;
    }
    if (srv_.stop_requested()) {  // too late to begin a conversation
        res.take_upgrade();
        res.clear();
        res.engine_error(503, "the server is stopping", 1);
        return false;
    }
    std::unique_ptr<WsUpgrade> up = res.take_upgrade();
    write_head(res, Framing::NoBody, 0, true);
    observe(req, 101, 0);
    start_ws(std::move(up), consumed);
    return true;
}

void Connection::start_ws(std::unique_ptr<WsUpgrade> up, size_t consumed) {
    head_current_ = false;
    a_->sink.reset();
    a_->in.consume(consumed);  // what follows the request is already the client's frames
    state_ = State::WebSocket;
    protocol_known_ = true;
    uint32_t ping = up->settings.ping_interval_ms;
    ws_timers_ = ping ? &srv_.loop_.timers(ping) : nullptr;
    ws_close_armed_ = false;
    ws_ = std::make_unique<WsSession>(static_cast<WsTransport&>(*this), std::move(up->endpoint), up->settings);
    ws_arm();
    ws_->open();
    if (fd_ >= 0 && state_ == State::WebSocket && !a_->in.empty()) ws_->receive();
}

void Connection::ws_read() {
    for (;;) {
        ws_read_some();
        if (fd_ < 0) return;
        if (a_->in.empty()) a_->in.release(srv_.loop_.buffers());
        // Paused for the output, which this flush sent whole: no edge will say the
        // socket still holds the rest of what the client sent, so read on now.
        bool was_paused = read_paused_;
        if (!flush() || !was_paused || read_paused_ || state_ != State::WebSocket) return;
    }
}

void Connection::ws_read_some() {
    constexpr size_t kWsReadChunk = 16 * 1024;
    while (state_ == State::WebSocket && !read_paused_) {
        bool drained = false;
        // A whole frame's room when the session takes it whole (see WsSession::wanted).
        ssize_t n = read_more(std::max(kWsReadChunk, ws_->wanted()), &drained);
        if (n < 0) return;
        if (n == 0) break;
        if (!ws_->receive()) break;
        if (!write_blocked_) ws_arm();  // heard from the peer: the ping interval starts again
        // A client that sends (pings, requests) without reading our answers: stop
        // reading it until the output drains.
        if (a_->out.size() > srv_.cfg_.max_pending_output) read_paused_ = true;
        if (drained) break;
    }
}

net::Buffer& Connection::ws_input() {
    activate();  // an idle WebSocket gave its buffers back
    return a_->in;
}

void Connection::ws_write(std::string_view head, std::string_view payload) {
    activate();
    net::BufferPool& pool = srv_.loop_.buffers();
    a_->out.append(head, pool);
    if (!payload.empty()) a_->out.append(payload, pool);
    schedule_flush();
}

void Connection::ws_end() {
    close_after_flush_ = true;
    flush();
}

void Connection::ws_arm() {
    // Closing: the handshake's time runs from the close, not restarted by what the
    // peer sends meanwhile (a client pinging on would hold the connection for ever).
    // (A flag, not the timer's list: a ping interval of the linger's length shares it.)
    if (ws_->closing()) {
        if (!std::exchange(ws_close_armed_, true)) arm(srv_.linger_timers_);
    }
    else if (ws_timers_) arm(*ws_timers_);
    else timer_.disarm();
}

}  // namespace kiln::http
