// One benchmark session (see the header).
#include "bench/session.hpp"

#include <sys/epoll.h>

#include <cstdio>
#include <cstring>

#include "bench/assets.hpp"

namespace kiln::bench {
namespace {

constexpr auto kConnectRetryDelay = std::chrono::milliseconds(10);
constexpr uint64_t kDropMin = 40, kDropMax = 167;  // the study's -c 2 range

const char* kind_method(bool upload) { return upload ? "POST" : "GET"; }

}  // namespace

Session::Session(const RunPlan& plan, LoopContext& loop, int index)
    : plan_(plan), loop_(loop), stats_(*loop.stats), index_(index),
      rng_(plan.options->seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(index) + 1) {
    const BenchOptions& o = *plan_.options;
    if (o.fixed_assets) {
        assets_known_ = true;
        asset_targets_ = &plan_.fixed_targets;
        asset_prefixes_ = &plan_.fixed_prefixes;
    } else {
        asset_targets_ = &own_targets_;
        asset_prefixes_ = &own_prefixes_;
        collect_body_ = o.get_assets;
    }
}

uint64_t Session::random() {  // splitmix64: small, and good enough for drop points
    uint64_t z = (rng_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void Session::start(Clock::time_point now) {
    ++loop_.active;
    advance(now);
}

void Session::advance(Clock::time_point now) {
    const BenchOptions& o = *plan_.options;
    while (state_ == State::Idle) {
        if (sent_ >= o.requests || loop_.stop->load(std::memory_order_relaxed) ||
            (plan_.has_deadline && now >= plan_.deadline)) {
            finish();
            return;
        }
        begin_request(now);
    }
}

void Session::begin_request(Clock::time_point now) {
    ++sent_;
    started_ = now;
    response_bytes_ = 0;
    switch (kind_) {
        case Kind::Page: ++stats_.pages; break;
        case Kind::Asset: ++stats_.assets; break;
        case Kind::Upload: ++stats_.uploads; break;
    }
    parser_.reset();
    if (!conn_.is_open()) {
        Connection::Io r = conn_.open(plan_.addr, loop_.epfd, this);
        if (r == Connection::Io::Error) {
            fail(Failure::Connect, std::strerror(conn_.error()));
            state_ = State::WaitRetry;
            retry_at_ = now + kConnectRetryDelay;
            return;
        }
        reqs_on_conn_ = 0;
        if (plan_.options->mode == ConnMode::RandomDrop)
            disconnect_after_ = kDropMin + random() % (kDropMax - kDropMin + 1);
        if (r == Connection::Io::Blocked) {
            state_ = State::Connecting;
            return;
        }
        ++stats_.connections;
    }
    send();
}

void Session::send() {
    const BenchOptions& o = *plan_.options;
    const RequestTemplates& t = *plan_.templates;
    close_after_ = o.mode == ConnMode::CloseEach ||
                   (o.mode == ConnMode::RandomDrop && reqs_on_conn_ + 1 >= disconnect_after_);
    RequestBytes rb;
    switch (kind_) {
        case Kind::Page: rb.add(t.page_prefix); break;
        case Kind::Asset: rb.add((*asset_prefixes_)[asset_next_]); break;
        case Kind::Upload: rb.add(t.upload_prefix); break;
    }
    rb.add(jar_.header_line());
    if (close_after_) rb.add(kConnectionClose);
    if (kind_ == Kind::Upload) {
        rb.add(t.upload_end);
        rb.add(t.upload_body);
    } else {
        rb.add("\r\n");
    }
    stats_.bytes_sent += rb.total;
    bool fresh = reqs_on_conn_ == 0;
    switch (conn_.write(rb.iov, rb.count)) {
        case Connection::Io::Done: state_ = State::Reading; break;
        case Connection::Io::Blocked: state_ = State::Writing; break;
        case Connection::Io::Error:
            fail(Failure::Reset, std::strerror(conn_.error()));
            if (fresh) {  // a new connection that cannot take a request: do not spin on it
                state_ = State::WaitRetry;
                retry_at_ = started_ + kConnectRetryDelay;
            }
            break;
    }
}

void Session::on_event(uint32_t ev) {
    constexpr uint32_t kOut = EPOLLOUT | EPOLLERR | EPOLLHUP;
    constexpr uint32_t kIn = EPOLLIN | EPOLLERR | EPOLLHUP;
    if (state_ == State::Connecting && (ev & kOut)) {
        switch (conn_.finish_connect()) {
            case Connection::Io::Blocked: return;
            case Connection::Io::Error: {
                fail(Failure::Connect, std::strerror(conn_.error()));
                state_ = State::WaitRetry;
                retry_at_ = Clock::now() + kConnectRetryDelay;
                return;
            }
            case Connection::Io::Done:
                ++stats_.connections;
                send();
                break;
        }
    } else if (state_ == State::Writing && (ev & kOut)) {
        switch (conn_.write_more()) {
            case Connection::Io::Done: state_ = State::Reading; break;
            case Connection::Io::Blocked: break;
            case Connection::Io::Error: fail(Failure::Reset, std::strerror(conn_.error())); break;
        }
    }
    if ((state_ == State::Reading || state_ == State::Writing) && (ev & kIn)) on_readable();
    if (state_ == State::Idle) advance(now_);
}

void Session::on_readable() {
    for (;;) {
        long n = conn_.read();
        if (n > 0) {
            bool filled = conn_.space() == 0;
            stats_.bytes_received += static_cast<uint64_t>(n);
            response_bytes_ += static_cast<uint64_t>(n);
            if (process() || !filled) return;  // a short read drained the socket
            continue;
        }
        if (n == -1) return;
        if (n == 0) {
            if (parser_.finish_at_eof()) {
                complete();
            } else if (response_bytes_ == 0) {
                fail(Failure::Closed, "connection closed before the response");
            } else {
                fail(Failure::Truncated, parser_.in_body() ? "connection closed inside the body"
                                                           : "connection closed inside the head");
            }
            return;
        }
        fail(Failure::Reset, std::strerror(conn_.error()));
        return;
    }
}

bool Session::process() {
    for (;;) {
        size_t used = 0;
        ResponseParser::Step s =
            parser_.feed(conn_.data(), conn_.size(), &used, collect_body_ && kind_ == Kind::Page ? &page_body_ : nullptr);
        conn_.consume(used);
        switch (s) {
            case ResponseParser::Step::Head: on_head(); continue;
            case ResponseParser::Step::Done: complete(); return true;
            case ResponseParser::Step::Error: fail(Failure::Parse, describe(parser_.error()).data()); return true;
            case ResponseParser::Step::NeedMore:
                if (!parser_.in_body() && conn_.size() >= kReadBufferBytes) {
                    fail(Failure::Parse, "response head larger than the read buffer");
                    return true;
                }
                return false;
        }
    }
}

void Session::on_head() {
    const ResponseHead& h = parser_.head();
    for (size_t i = 0; i < h.set_cookie_count; ++i)
        if (jar_.apply(h.set_cookies[i]) == CookieJar::Change::Set) ++stats_.new_cookies;
}

void Session::complete() {
    if (conn_.size() != 0) {
        fail(Failure::Parse, "bytes after the end of the response");
        return;
    }
    now_ = Clock::now();
    const ResponseHead& h = parser_.head();
    bool ok = h.status >= 200 && h.status < 300;
    if (ok) {
        ++stats_.ok;
        stats_.progress_ok.store(stats_.ok, std::memory_order_relaxed);
        stats_.latency_ns.record(static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(now_ - started_).count()));
    } else {
        Failure f = h.status < 400 ? Failure::Status3xx : h.status < 500 ? Failure::Status4xx : Failure::Status5xx;
        ++stats_.failed[static_cast<size_t>(f)];
        stats_.progress_failed.store(stats_.failed_total(), std::memory_order_relaxed);
    }
    if (plan_.options->verbose)
        std::fprintf(stderr, "batch %d: %s %s -> %d (%llu body bytes, %.3f ms)%s\n", index_,
                     kind_method(kind_ == Kind::Upload), target(), h.status,
                     static_cast<unsigned long long>(parser_.body_bytes()),
                     std::chrono::duration<double, std::milli>(now_ - started_).count(),
                     h.keep_alive ? "" : " [server closes]");
    ++reqs_on_conn_;
    if (close_after_ || !h.keep_alive || conn_.writing()) conn_.close();
    if (kind_ == Kind::Page && collect_body_) {
        if (ok) {
            own_targets_ = extract_assets(page_body_, plan_.options->target.path);
            for (const std::string& a : own_targets_) own_prefixes_.push_back(plan_.templates->get_prefix(a));
            assets_known_ = true;
            collect_body_ = false;
            if (plan_.options->verbose)
                std::fprintf(stderr, "batch %d: page names %zu asset(s)\n", index_, own_targets_.size());
            std::string().swap(page_body_);
        } else {
            page_body_.clear();
        }
    }
    next_kind();
    state_ = State::Idle;
}

void Session::fail(Failure f, const char* detail) {
    ++stats_.failed[static_cast<size_t>(f)];
    stats_.progress_failed.store(stats_.failed_total(), std::memory_order_relaxed);
    now_ = Clock::now();
    if (plan_.options->verbose)
        std::fprintf(stderr, "batch %d: %s %s failed: %s (%s)\n", index_, kind_method(kind_ == Kind::Upload),
                     target(), failure_name(f).data(), detail);
    conn_.close();
    conn_.discard();
    if (kind_ == Kind::Page) page_body_.clear();
    next_kind();
    state_ = State::Idle;
}

void Session::next_kind() {
    bool upload = plan_.options->upload;
    switch (kind_) {
        case Kind::Page:
            if (assets_known_ && asset_next_ < asset_targets_->size()) {
                kind_ = Kind::Asset;
                return;
            }
            kind_ = upload ? Kind::Upload : Kind::Page;
            return;
        case Kind::Asset:
            ++asset_next_;
            if (asset_next_ < asset_targets_->size()) return;
            kind_ = upload ? Kind::Upload : Kind::Page;
            return;
        case Kind::Upload:
            kind_ = Kind::Page;
            return;
    }
}

void Session::on_tick(Clock::time_point now) {
    if (state_ == State::Finished) return;
    bool stop = loop_.stop->load(std::memory_order_relaxed) || (plan_.has_deadline && now >= plan_.deadline);
    if (state_ == State::WaitRetry) {
        if (stop) {
            finish();
        } else if (now >= retry_at_) {
            state_ = State::Idle;
            advance(now);
        }
        return;
    }
    if (state_ == State::Idle) {
        advance(now);
        return;
    }
    if (stop) {  // in flight: neither a success nor a failure, and not a request
        ++stats_.abandoned;
        switch (kind_) {
            case Kind::Page: --stats_.pages; break;
            case Kind::Asset: --stats_.assets; break;
            case Kind::Upload: --stats_.uploads; break;
        }
        finish();
        return;
    }
    if (now - started_ >= std::chrono::milliseconds(plan_.options->timeout_ms)) {
        fail(Failure::Timeout, "no complete response within --timeout");
        advance(now);
    }
}

void Session::finish() {
    conn_.close();
    if (state_ != State::Finished) --loop_.active;
    state_ = State::Finished;
}

const char* Session::target() const {
    switch (kind_) {
        case Kind::Page: return plan_.options->target.path.c_str();
        case Kind::Asset: return (*asset_targets_)[asset_next_].c_str();
        case Kind::Upload: return kUploadTarget.data();
    }
    return "";
}

}  // namespace kiln::bench
