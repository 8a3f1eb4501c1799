#include "http/connection.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <charconv>

#include "http/exchange.hpp"
#include "http/server.hpp"
#include "http/url.hpp"

namespace kiln::http {
namespace {
uint64_t monotonic_us() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000 + static_cast<uint64_t>(ts.tv_nsec) / 1000;
}

constexpr size_t kReadChunk = 4096;
constexpr size_t kOwnBodyThreshold = 64 * 1024;  // larger bodies are moved, not copied
constexpr size_t kStreamFlushThreshold = 64 * 1024;
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
}  // namespace

Connection::Connection(Server& server, int fd, const net::PeerAddress& peer)
    : srv_(server), fd_(fd), peer_(peer) {
    for (const net::AddressRange& r : srv_.cfg_.trusted_proxies) trusted_proxy_ = trusted_proxy_ || r.contains(peer);
    timer_.owner = this;
    timer_.fire = [](net::Timer* t) { static_cast<Connection*>(t->owner)->on_timeout(); };
    srv_.link(this);
    if (srv_.observer_) srv_.observer_->on_open();
    // A new connection gets the header timeout to send its first byte.
    arm(srv_.header_timers_);
}

Connection::~Connection() { assert(fd_ < 0); }

void Connection::arm(net::TimerList& list) { list.arm(timer_, srv_.loop_.now_ms()); }

void Connection::on_io(uint32_t events) {
    if (fd_ < 0) return;
    if (events & EPOLLERR) {
        close_now();
        return;
    }
    if ((events & EPOLLOUT) && write_blocked_) {
        bool was_paused = read_paused_;
        if (!flush()) return;
        if (was_paused && !read_paused_) {
            resume();
            return;
        }
    }
    if (events & (EPOLLRDHUP | EPOLLHUP)) peer_fin_seen_ = true;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) on_readable();
}

void Connection::resume() {
    // The output drained below the limit: handle the requests that waited in the
    // buffer, then read again (edge-triggered: the socket may hold unread bytes).
    if (state_ == State::Lingering || state_ == State::Closing || state_ == State::Handling) return;
    process();
    if (fd_ >= 0) on_readable();
}

size_t Connection::read_size() const {
    if (state_ == State::Body && !is_chunked_) {
        size_t need = head_len_ + body_len_ - std::min<size_t>(in_.size(), head_len_ + body_len_);
        // Grow toward the declared length by doubling, so a client that only declares
        // a large body does not get the memory for it at once.
        return std::max<size_t>(std::min(need, std::max(in_.size(), net::BufferPool::kBlockSize)), 1);
    }
    return in_.size() < net::BufferPool::kBlockSize ? kReadChunk : in_.size();
}

void Connection::on_readable() {
    if (state_ == State::Handling) return;  // the exchange holds the buffer; read after it completes
    if (state_ == State::Lingering) {
        discard_input();
        return;
    }
    for (;;) {
        read_and_process();
        if (fd_ < 0) return;
        if (in_.empty()) in_.release(srv_.loop_.buffers());
        bool was_paused = read_paused_;
        if (!flush()) return;
        if (!was_paused || read_paused_ || state_ == State::Closing || state_ == State::Lingering) return;
        process();  // the output drained at once: handle what waited, then read on
        if (fd_ < 0) return;
    }
}

void Connection::read_and_process() {
    while (fd_ >= 0 && !read_paused_ && state_ != State::Closing && state_ != State::Handling) {
        in_.ensure_writable(read_size(), srv_.loop_.buffers());
        size_t room = in_.writable();
        ssize_t n = ::read(fd_, in_.write_ptr(), room);
        if (n > 0) {
            in_.commit(static_cast<size_t>(n));
            if (state_ == State::Body) arm(srv_.body_timers_);  // progress resets the body timeout
            process();
            // Edge-triggered: a short read means the socket is drained for now, and new
            // bytes will raise a new edge. Skipping the EAGAIN read saves a syscall —
            // unless the peer's FIN came with these bytes: it raises no later edge, so
            // read on until read() says 0.
            if (static_cast<size_t>(n) < room && !peer_fin_seen_) return;
            continue;
        }
        if (n == 0) {
            peer_eof_ = true;
            if (state_ == State::Head || state_ == State::Body || out_.empty()) {
                close_now();  // an unfinished request can never complete
                return;
            }
            close_after_flush_ = true;
            return;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) close_now();
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
    const Limits& limits = srv_.cfg_.limits;
    while (fd_ >= 0 && !read_paused_ && (state_ == State::Idle || state_ == State::Head || state_ == State::Body)) {
        if (state_ != State::Body) {
            std::string_view data = in_.readable();
            if (data.empty()) {
                enter_idle();
                return;
            }
            if (state_ == State::Idle) {
                state_ = State::Head;
                scan_hint_ = 0;
                arm(srv_.header_timers_);
            }
            if (!head_may_be_complete(data, scan_hint_, limits)) {
                scan_hint_ = data.size();
                return;
            }
            scan_hint_ = data.size();
            ParseResult r = parse_request_head(data, srv_.head_, limits);
            if (r.status == ParseStatus::Incomplete) return;
            if (r.status == ParseStatus::Error) {
                respond_error(status_for(r.error), describe(r.error));
                return;
            }
            head_len_ = r.consumed;
            if (srv_.observer_) started_us_ = monotonic_us();
            if (!start_request()) return;
            const RequestHead& h = srv_.head_;
            is_chunked_ = h.chunked;
            body_len_ = h.content_length > 0 ? static_cast<uint64_t>(h.content_length) : 0;
            continue_sent_ = false;
            sink_.reset();
            sunk_ = 0;
            if (is_chunked_ || body_len_ > 0) sink_ = srv_.service_.body_sink(*srv_.context_, srv_.request_);
            if (is_chunked_) {
                chunked_ = ChunkedDecoder();
                chunk_read_ = chunk_write_ = head_len_;
            } else if (body_len_ > body_limit_) {
                respond_error(413, "request body larger than this route accepts");
                return;
            }
            state_ = State::Body;
            arm(srv_.body_timers_);
        }
        if (!body_ready()) {
            if (fd_ < 0 || state_ != State::Body) return;  // error already answered
            if (!continue_sent_ && head_current_ && srv_.head_.expect_continue) send_continue();
            return;
        }
        if (!head_current_) {
            // The body arrived in a later read: the shared head was reused since, and
            // the buffer may have moved. Parse the (complete) head again.
            ParseResult r = parse_request_head(in_.readable(), srv_.head_, limits);
            assert(r.status == ParseStatus::Complete && r.consumed == head_len_);
            (void)r;
            if (!start_request()) return;
        }
        if (sink_) {
            dispatch({}, head_len_);  // the body went to the sink as it came
        } else if (is_chunked_) {
            dispatch(std::string_view(in_.readable_data() + head_len_, chunk_write_ - head_len_), chunk_read_);
        } else {
            dispatch(std::string_view(in_.readable_data() + head_len_, body_len_), head_len_ + body_len_);
        }
    }
}

PathStatus Connection::prepare_request(const RequestHead& h, Request& req, RequestContext& ctx) {
    req.start(&h, trusted_proxy_);
    if (PathStatus ps = req.set_path(h.path); ps != PathStatus::Ok) return ps;
    body_limit_ = srv_.service_.prepare(ctx, req);
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

bool Connection::body_ready() {
    if (sink_) return pump_body();
    if (!is_chunked_) return in_.size() >= head_len_ + body_len_;
    ChunkedStatus st = chunked_.decode(in_.readable_data(), &chunk_read_, &chunk_write_, in_.size(), body_limit_);
    // NeedMore: later reads append after chunk_read_; decoded bytes stay below chunk_write_.
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
    // The head stays at the front of in_ (it is parsed again if the body spans reads);
    // body bytes go to the sink and are cut out, so in_ never holds more than a read.
    ChunkedStatus st = ChunkedStatus::Done;
    size_t piece;
    if (is_chunked_) {
        st = chunked_.decode(in_.readable_data(), &chunk_read_, &chunk_write_, in_.size(), body_limit_);
        piece = chunk_write_ - head_len_;
    } else {
        piece = static_cast<size_t>(std::min<uint64_t>(in_.size() - head_len_, body_len_ - sunk_));
        sunk_ += piece;
    }
    if (piece > 0 && !sink_->write(std::string_view(in_.readable_data() + head_len_, piece))) {
        respond_error(sink_->status(), sink_->reason());
        return false;
    }
    if (is_chunked_) {
        in_.erase(head_len_, chunk_read_ - head_len_);
        chunk_read_ = chunk_write_ = head_len_;
        if (refuse_chunked(st) || st == ChunkedStatus::NeedMore) return false;
    } else {
        in_.erase(head_len_, piece);
        if (sunk_ < body_len_) return false;
    }
    if (!sink_->finish()) {
        respond_error(sink_->status(), sink_->reason());
        return false;
    }
    return true;
}

void Connection::send_continue() {
    // Only worth it if the client is waiting: nothing of the body has arrived yet.
    continue_sent_ = true;
    if (in_.size() > head_len_) return;
    out_.append(kContinue, srv_.loop_.buffers());
    flush();
}

namespace {
uint64_t body_size(const Response& res) { return res.has_file() ? res.file_length() : res.body().size(); }
}  // namespace

void Connection::dispatch(std::string_view body, size_t consumed) {
    const RequestHead& h = srv_.head_;
    Request& req = srv_.request_;
    req.set_body(body);
    head_only_ = h.method == Method::Head;
    http10_ = h.version_minor == 0;
    ++served_;
    uint32_t cap = srv_.cfg_.max_requests_per_connection;
    keep_alive_ = h.keep_alive && !srv_.stop_requested() && !peer_eof_ && (cap == 0 || served_ < cap);
    client_closes_ = !h.keep_alive;
    if (srv_.executor_ && submit(body, consumed)) return;
    Response& res = srv_.response_;
    if (srv_.executor_) {  // the pool's queue is full: say so now, without blocking the loop
        res.reset(nullptr);
        res.status(503);
        res.header("Retry-After", "1");
        res.send("Service Unavailable: all handler threads are busy\n", "text/plain; charset=utf-8");
    } else {
        res.reset(this);
        if (sink_) sink_->deliver(*srv_.context_);
        srv_.service_.handle(*srv_.context_, req, res);
    }
    srv_.count_request();
    if (fd_ < 0) return;  // a streamed write failed and closed us
    if (res.streaming()) {
        if (res.aborted()) keep_alive_ = false;
        else res.end();
        observe(&req, res.status(), streamed_);
    } else {
        uint64_t sent = head_only_ || status_has_no_body(res.status()) ? 0 : body_size(res);
        write_response(res);
        observe(&req, res.status(), sent);
    }
    finish_request(consumed);
}

bool Connection::submit(std::string_view body, size_t consumed) {
    // One allocation per request: the hybrid model's price, small next to the
    // blocking handler it exists for.
    auto* ex = new Exchange();
    ex->head = srv_.head_;  // views into in_, which the exchange takes below
    ex->context = srv_.service_.new_context();
    prepare_request(ex->head, ex->request, *ex->context);  // already validated once: cannot fail
    ex->request.set_body(body);
    if (sink_) sink_->deliver(*ex->context);
    ex->response.reset(nullptr);  // no stream: writes are buffered until the handler returns
    ex->connection = this;
    ex->buffer = std::move(in_);
    Service& service = srv_.service_;
    std::shared_ptr<CompletionQueue> done = srv_.completions_;
    bool queued = srv_.executor_->submit([ex, &service, done] {
        service.handle(*ex->context, ex->request, ex->response);
        done->push(ex);
    });
    if (!queued) {
        in_ = std::move(ex->buffer);
        delete ex;
        return false;
    }
    ex_ = ex;
    pending_consumed_ = consumed;
    state_ = State::Handling;
    timer_.disarm();  // the handler takes as long as it takes (the watchdog is for loops)
    return true;
}

void Connection::complete(Exchange* ex) {
    // Back on the loop thread, the request's bytes back where they were.
    ex_ = nullptr;
    in_ = std::move(ex->buffer);
    Response& res = ex->response;
    if (res.aborted()) {  // nothing was sent yet: a proper 500 is still possible
        res.clear();
        res.status(500);
        res.send("Internal Server Error\n", "text/plain; charset=utf-8");
    }
    srv_.count_request();
    uint64_t sent = head_only_ || status_has_no_body(res.status()) ? 0 : body_size(res);
    write_response(res);
    observe(&ex->request, res.status(), sent);
    delete ex;
    finish_request(pending_consumed_);
    if (state_ == State::Idle) {
        process();  // requests pipelined behind this one
        if (fd_ < 0) return;
        on_readable();  // edge-triggered: bytes may have arrived while we did not read
    } else {
        flush();
    }
}

void Connection::finish_request(size_t consumed) {
    head_current_ = false;
    sink_.reset();  // uploads' temp files belong to the request now, or are gone
    in_.consume(consumed);
    if (!keep_alive_) {
        close_after_flush_ = true;
        // The client said this was its last request and sent nothing after it: no
        // unread byte can turn our close into a reset, so the lingering close (a
        // shutdown, a wait for its FIN, another wake-up) buys nothing. One request
        // per connection (HTTP/1.0, ab, httperf) is common enough to matter.
        plain_close_ = client_closes_ && in_.empty();
        in_.consume(in_.size());  // requests pipelined after a close are not answered
        state_ = State::Closing;
        return;
    }
    state_ = State::Idle;
    if (out_.size() > srv_.cfg_.max_pending_output) read_paused_ = true;
}

void Connection::write_head(const Response& res, Framing framing, size_t content_length) {
    HeadParams hp;
    hp.date = srv_.date_.get(srv_.loop_.wall_seconds());
    hp.server = srv_.cfg_.server_name;
    hp.keep_alive = keep_alive_;
    hp.http10 = http10_;
    hp.framing = framing;
    hp.content_length = content_length;
    serialize_head(res, hp, out_, srv_.loop_.buffers());
}

void Connection::write_response(Response& res) {
    // Decided when the head is written: a stop may have begun while the handler ran.
    keep_alive_ = keep_alive_ && !res.closes_connection() && !srv_.stop_requested();
    bool no_body = status_has_no_body(res.status());
    write_head(res, no_body ? Framing::NoBody : Framing::Length, body_size(res));
    if (no_body || head_only_) return;
    if (res.has_file()) {
        uint64_t off = res.file_offset(), len = res.file_length();
        out_.append_file(res.release_file(), off, len);
        return;
    }
    net::BufferPool& pool = srv_.loop_.buffers();
    if (res.body().size() >= kOwnBodyThreshold) out_.append_owned(std::move(res.body()));
    else out_.append(res.body(), pool);
}

void Connection::observe(const Request* req, int status, uint64_t body_bytes) {
    if (!srv_.observer_) return;
    uint64_t elapsed = started_us_ ? monotonic_us() - started_us_ : 0;
    srv_.observer_->on_response({req, status, body_bytes, elapsed, peer_});
    started_us_ = 0;
}

void Connection::begin(Response& res) {
    streamed_ = 0;
    keep_alive_ = keep_alive_ && !res.closes_connection() && !srv_.stop_requested();
    Framing announced;
    if (status_has_no_body(res.status())) {
        announced = Framing::NoBody;
    } else if (http10_) {
        announced = Framing::UntilClose;
        keep_alive_ = keep_alive_ && head_only_;
    } else {
        announced = Framing::Chunked;
    }
    // HEAD gets the head a GET would get (RFC 9110 §9.3.2), and no body.
    stream_framing_ = head_only_ ? Framing::NoBody : announced;
    write_head(res, announced, 0);
}

void Connection::chunk(std::string_view data) {
    if (fd_ < 0 || data.empty() || stream_framing_ == Framing::NoBody) return;
    streamed_ += data.size();
    net::BufferPool& pool = srv_.loop_.buffers();
    if (stream_framing_ == Framing::Chunked) {
        char line[24];
        char* e = std::to_chars(line, line + 16, data.size(), 16).ptr;
        *e++ = '\r';
        *e++ = '\n';
        out_.append(std::string_view(line, static_cast<size_t>(e - line)), pool);
        out_.append(data, pool);
        out_.append("\r\n", pool);
    } else {
        out_.append(data, pool);
    }
    if (out_.size() >= kStreamFlushThreshold) flush();
}

void Connection::finish() {
    if (fd_ >= 0 && stream_framing_ == Framing::Chunked) out_.append("0\r\n\r\n", srv_.loop_.buffers());
}

void Connection::respond_error(int status, std::string_view why) {
    Response& res = srv_.response_;
    res.reset(nullptr);
    res.status(status);
    std::string body;
    body.reserve(64);
    body.append(reason_phrase(status)).append(": ").append(why).append("\n");
    res.send(body, "text/plain; charset=utf-8");
    keep_alive_ = false;
    head_only_ = false;
    http10_ = false;
    write_response(res);
    observe(head_current_ ? &srv_.request_ : nullptr, status, res.body().size());
    head_current_ = false;
    in_.consume(in_.size());
    state_ = State::Closing;
    close_after_flush_ = true;
}

bool Connection::flush() {
    if (fd_ < 0) return false;
    if (!out_.empty()) {
        size_t written = 0;
        net::OutputQueue::Status st = out_.write_to(fd_, srv_.loop_.buffers(), &written);
        if (st == net::OutputQueue::Status::Error) {
            close_now();
            return false;
        }
        if (st == net::OutputQueue::Status::Blocked) {
            if (!write_blocked_ || written > 0) arm(srv_.write_timers_);
            write_blocked_ = true;
            return true;
        }
    }
    bool was_blocked = write_blocked_;
    write_blocked_ = false;
    read_paused_ = false;
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
        case State::Idle: arm(srv_.keepalive_timers_); break;
        case State::Head: arm(srv_.header_timers_); break;
        case State::Body: arm(srv_.body_timers_); break;
        case State::Closing: arm(srv_.write_timers_); break;
        case State::Lingering: arm(srv_.linger_timers_); break;
        case State::Handling: break;
    }
}

void Connection::enter_idle() {
    state_ = State::Idle;
    in_.release(srv_.loop_.buffers());
    if (!write_blocked_) arm(srv_.draining_ ? srv_.drain_grace_timers_ : srv_.keepalive_timers_);
}

void Connection::start_linger() {
    state_ = State::Lingering;
    in_.consume(in_.size());
    in_.release(srv_.loop_.buffers());
    if (peer_eof_) {
        close_now();
        return;
    }
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
    if (state_ == State::Idle && out_.empty() && !write_blocked_) arm(srv_.drain_grace_timers_);
}

void Connection::close_now() {
    if (fd_ < 0) return;
    timer_.disarm();
    if (ex_) {  // the handler still runs: its exchange outlives us and frees itself
        ex_->connection = nullptr;
        ex_ = nullptr;
    }
    ::close(fd_);  // also removes it from epoll
    fd_ = -1;
    net::BufferPool& pool = srv_.loop_.buffers();
    in_.consume(in_.size());
    in_.release(pool);
    out_.clear(pool);
    srv_.unlink(this);
    if (srv_.observer_) srv_.observer_->on_close();
    srv_.loop_.destroy_later(this);
}

}  // namespace kiln::http
