#include "http/server.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cassert>
#include <ctime>
#include <string_view>

#include "http/connection.hpp"
#include "util/log.hpp"

namespace kiln::http {

Server::Server(net::Loop& loop, Service& service, const EngineConfig& config)
    : loop_(loop),
      service_(service),
      cfg_(config),
      header_timers_(loop.timers(config.header_timeout_ms)),
      body_timers_(loop.timers(config.body_timeout_ms)),
      keepalive_timers_(loop.timers(config.keepalive_timeout_ms)),
      write_timers_(loop.timers(config.write_timeout_ms)),
      linger_timers_(loop.timers(config.linger_timeout_ms)),
      drain_grace_timers_(loop.timers(config.drain_idle_grace_ms)),
      context_(service.new_context()) {}

Server::~Server() {
    while (first_) first_->close_now();  // in-flight exchanges lose their connection
    loop_.finish_deferred();  // handlers that waited were cancelled: let them end
    if (completions_) {
        for (Exchange* ex : completions_->close()) discard(ex, loop_.buffers());  // finished, never taken
    }
    for (ActiveState* a : spare_active_) delete a;
    for (Exchange* ex : spare_exchanges_) delete ex;
}

namespace {
// Spares beyond this many are freed: a burst of busy connections does not pin its
// peak for good. Typically one is in use at a time (a connection whose request
// arrives whole takes it and gives it back in the same event).
constexpr size_t kMaxSpareActive = 256;
}  // namespace

ActiveState* Server::take_active() {
    if (spare_active_.empty()) return new ActiveState();
    ActiveState* a = spare_active_.back();
    spare_active_.pop_back();
    return a;
}

void Server::give_back(ActiveState* a) {
    if (spare_active_.size() < kMaxSpareActive) {
        spare_active_.push_back(a);
        return;
    }
    a->out.clear(loop_.buffers());
    delete a;
}

Exchange* Server::take_exchange() {
    if (spare_exchanges_.empty()) {
        auto* ex = new Exchange();
        ex->context = service_.new_context();
        return ex;
    }
    Exchange* ex = spare_exchanges_.back();
    spare_exchanges_.pop_back();
    return ex;
}

void Server::give_back_exchange(Exchange* ex) {
    // What a stream set is reset here, so a taken exchange starts clean.
    constexpr size_t kMaxKeptBytes = 64 * 1024;
    ex->response.reset(nullptr);
    ex->head.header_count = 0;
    ex->fields.clear();
    ex->field_offsets.clear();
    ex->body_bytes.clear();
    if (ex->fields.capacity() > kMaxKeptBytes) std::string().swap(ex->fields);
    if (ex->body_bytes.capacity() > kMaxKeptBytes) std::string().swap(ex->body_bytes);
    ex->connection = nullptr;
    ex->waiting = ex->starting = ex->finished = false;
    ex->stream_id = 0;
    if (spare_exchanges_.size() >= kMaxSpareActive) {
        delete ex;
        return;
    }
    spare_exchanges_.push_back(ex);
}

void Server::set_executor(Executor* executor) {
    assert(loop_.in_loop_thread());
    executor_ = executor;
    completions_ = std::make_shared<CompletionQueue>(loop_);
    loop_.add_wake_hook([this] {
        for (Exchange* ex : completions_->take()) {
            if (ex->connection) {
                ex->connection->complete(ex);
            } else {  // the client went away while its handler ran
                discard(ex, loop_.buffers());
            }
        }
    });
}

namespace {
// One log line a minute per limit, naming its setting.
void log_once_a_minute(std::atomic<int64_t>& last_logged, const char* why, size_t limit) {
    int64_t now = static_cast<int64_t>(time(nullptr)), last = last_logged.load(std::memory_order_relaxed);
    if (now - last >= 60 && last_logged.compare_exchange_strong(last, now))
        util::log(util::LogLevel::Warn, why, limit);
}

// A connection past a limit: told so in one small write, then closed. The socket is
// fresh, so the answer fits its buffer; what does not is dropped. A TLS client is
// only closed: it waits for a ServerHello, and plain bytes would read to it as a
// broken peer, not as a 503.
void refuse(int fd, bool tls, std::string_view answer, std::atomic<int64_t>& last_logged, const char* why,
            size_t limit) {
    if (!tls) {
        ssize_t ignored = ::send(fd, answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)ignored;
    }
    ::close(fd);
    log_once_a_minute(last_logged, why, limit);
}

constexpr std::string_view kTooMany =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nX-Content-Type-Options: nosniff\r\n"
    "Content-Length: 42\r\nRetry-After: 1\r\nConnection: close\r\n\r\nService Unavailable: too many connections\n";
constexpr std::string_view kTooManyFromYou =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nX-Content-Type-Options: nosniff\r\n"
    "Content-Length: 60\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
    "Service Unavailable: too many connections from your address\n";
std::atomic<int64_t> full_logged{0}, address_logged{0};
constexpr const char* kPerAddressLog =
    "refusing connections: limits.max_connections_per_address = %zu are open from one address in this worker";
}  // namespace

void Server::refuse_per_address(int fd, bool tls) const {
    if (!tls) {
        // What the balancer sent after the header is read and dropped first (a bounded
        // amount), so that the close sends a FIN: unread bytes would make it a reset,
        // which can destroy the answer before the client reads it.
        char sink[4096];
        for (int i = 0; i < 16 && ::recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; ++i) {
        }
        ssize_t ignored = ::send(fd, kTooManyFromYou.data(), kTooManyFromYou.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)ignored;
    }
    log_once_a_minute(address_logged, kPerAddressLog, cfg_.max_connections_per_address);
}

void Server::accept(int fd, const net::PeerAddress& peer, bool proxy_protocol, const net::TlsContext* tls) {
    assert(loop_.in_loop_thread());
    if (cfg_.max_process_connections && cfg_.open_connections &&
        cfg_.open_connections->fetch_add(1, std::memory_order_relaxed) >= cfg_.max_process_connections) {
        cfg_.open_connections->fetch_sub(1, std::memory_order_relaxed);
        refuse(fd, tls != nullptr, kTooMany, full_logged,
               "refusing connections: limits.max_connections = %zu are open in this worker",
               cfg_.max_process_connections);
        return;
    }
    // A proxy_protocol listener's peer is the balancer: the connection is counted once
    // its header names the client (Connection::take_proxy_header), or it would count
    // every client's connection against the balancer's address.
    const bool count_now = cfg_.max_connections_per_address && cfg_.address_counts && !proxy_protocol;
    if (count_now && !cfg_.address_counts->add(peer, cfg_.max_connections_per_address)) {
        if (cfg_.max_process_connections && cfg_.open_connections)
            cfg_.open_connections->fetch_sub(1, std::memory_order_relaxed);
        refuse(fd, tls != nullptr, kTooManyFromYou, address_logged, kPerAddressLog, cfg_.max_connections_per_address);
        return;
    }
    auto* c = new Connection(*this, fd, peer, proxy_protocol, tls);
    c->counted_ = count_now;
    loop_.add(fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, c);
    if (cfg_.max_connections && count_ >= cfg_.max_connections && on_capacity_) on_capacity_(false);
}

void Server::drain(std::function<void()> on_drained) {
    assert(loop_.in_loop_thread());
    draining_ = true;
    request_stop();
    on_drained_ = std::move(on_drained);
    for (Connection* c = first_; c;) {
        Connection* next = c->next_;
        c->drain();
        c = next;
    }
    if (count_ == 0 && on_drained_) on_drained_();
}

void Server::count_request() {
    if (cfg_.max_requests == 0 || ++requests_ != cfg_.max_requests) return;
    request_stop();  // this response says Connection: close
    if (on_budget_spent_) on_budget_spent_();
}

void Server::link(Connection* c) {
    c->next_ = first_;
    if (first_) first_->prev_ = c;
    first_ = c;
    ++count_;
}

void Server::unlink(Connection* c) {
    if (c->prev_) c->prev_->next_ = c->next_;
    else first_ = c->next_;
    if (c->next_) c->next_->prev_ = c->prev_;
    c->prev_ = c->next_ = nullptr;
    --count_;
    if (cfg_.max_process_connections && cfg_.open_connections)
        cfg_.open_connections->fetch_sub(1, std::memory_order_relaxed);
    if (c->counted_ && cfg_.address_counts) cfg_.address_counts->remove(c->peer_);
    if (cfg_.max_connections && count_ + 1 == cfg_.max_connections && !draining_ && on_capacity_) on_capacity_(true);
    if (draining_ && count_ == 0 && on_drained_) on_drained_();
}

}  // namespace kiln::http
