// pg::Listener, NextNotification and Client::listen: the coroutine side of a
// channel subscription (the session side is detail::Hub).
#include <kiln/pg.hpp>

#include "pg/errors.hpp"
#include "pg/hub.hpp"
#include "pg/op.hpp"
#include "pg/pool.hpp"

namespace kiln::pg {

Task<Listener> Client::listen(std::string channel) {
    if (channel.empty() || channel.size() > 63 || channel.find('\0') != std::string::npos)
        throw db::Error(db::ErrorKind::Misuse, 0, "a channel name is 1 to 63 bytes without NUL", "LISTEN");
    detail::Hub& hub = pool_->hub();
    auto state = std::make_unique<detail::ListenerState>();
    state->hub = &hub;
    state->channel = std::move(channel);
    Listener listener(std::move(state));  // from here, its destructor unsubscribes
    co_await hub.subscribe(listener.s_.get());
    co_return listener;
}

Listener::Listener(std::unique_ptr<detail::ListenerState> s) : s_(std::move(s)) {}

Listener::Listener(Listener&& other) noexcept = default;

Listener::~Listener() {
    if (!s_) return;
    if (s_->hub) s_->hub->unsubscribe(s_.get());
}

const std::string& Listener::channel() const { return s_->channel; }

size_t Listener::pending() const { return s_->queue.size(); }

NextNotification Listener::next() {
    if (s_->waiter) throw db::Error(db::ErrorKind::Misuse, 0, "next() while another next() waits", "LISTEN");
    return NextNotification(s_.get());
}

NextNotification::~NextNotification() {
    if (!op_) return;
    op_->wait.reset();
    if (s_->waiter == op_) {
        s_->waiter = nullptr;
        op_->release();
    }
    op_->release();
}

bool NextNotification::await_ready() const noexcept { return !s_->queue.empty() || s_->error || s_->dropped; }

bool NextNotification::await_suspend(std::coroutine_handle<> h) {
    if (!s_->hub) return false;  // the client is gone: await_resume says so
    op_ = new detail::Op(s_->hub->loop());
    op_->hold();  // the state's reference, until it wakes us
    s_->waiter = op_;
    return op_->suspend(h);
}

Notification NextNotification::await_resume() {
    if (op_) op_->settle();  // kiln::Cancelled
    if (s_->error) std::rethrow_exception(std::exchange(s_->error, nullptr));
    if (s_->dropped) {
        size_t n = std::exchange(s_->dropped, 0);
        throw db::Error(db::ErrorKind::Other, 0,
                        std::to_string(n) + " notifications on \"" + s_->channel +
                            "\" were dropped: more than 65536 (or 64 MiB) were waiting to be read",
                        "LISTEN");
    }
    if (s_->queue.empty()) std::rethrow_exception(detail::io_error("the PostgreSQL client was closed", "LISTEN"));
    Notification n = std::move(s_->queue.front());
    s_->queue.pop_front();
    s_->queued_bytes -= detail::ListenerState::cost(n);
    return n;
}

}  // namespace kiln::pg
