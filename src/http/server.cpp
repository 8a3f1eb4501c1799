#include "http/server.hpp"

#include <unistd.h>

#include <cassert>

#include "http/connection.hpp"

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
    if (completions_) {
        for (Exchange* ex : completions_->close()) {  // finished, never taken
            ex->buffer.consume(ex->buffer.size());
            ex->buffer.release(loop_.buffers());
            delete ex;
        }
    }
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
                ex->buffer.consume(ex->buffer.size());
                ex->buffer.release(loop_.buffers());
                delete ex;
            }
        }
    });
}

void Server::accept(int fd, const net::PeerAddress& peer) {
    assert(loop_.in_loop_thread());
    auto* c = new Connection(*this, fd, peer);
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
    if (cfg_.max_connections && count_ + 1 == cfg_.max_connections && !draining_ && on_capacity_) on_capacity_(true);
    if (draining_ && count_ == 0 && on_drained_) on_drained_();
}

}  // namespace kiln::http
