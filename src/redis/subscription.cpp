// Subscription, NextMessage and Client::subscribe: the coroutine side of pub/sub
// (the connection side is detail::Hub).
#include <kiln/redis.hpp>

#include "redis/hub.hpp"
#include "redis/op.hpp"
#include "redis/pool.hpp"

namespace kiln::redis {

Task<Subscription> Client::subscribe(std::string channel) {
    if (channel.empty()) throw Error(Error::Kind::Misuse, "a channel name cannot be empty");
    detail::Hub& hub = pool_->hub();
    auto state = std::make_unique<detail::SubscriptionState>();
    state->hub = &hub;
    state->channel = std::move(channel);
    Subscription sub(std::move(state));  // from here, its destructor unsubscribes
    co_await hub.subscribe(sub.s_.get());
    co_return sub;
}

Subscription::Subscription(std::unique_ptr<detail::SubscriptionState> s) : s_(std::move(s)) {}

Subscription::Subscription(Subscription&& other) noexcept = default;

Subscription::~Subscription() {
    if (s_ && s_->hub) s_->hub->unsubscribe(s_.get());
}

const std::string& Subscription::channel() const { return s_->channel; }

size_t Subscription::pending() const { return s_->queue.size(); }

NextMessage Subscription::next() {
    if (s_->waiter) throw Error(Error::Kind::Misuse, "next() while another next() waits");
    return NextMessage(s_.get());
}

NextMessage::~NextMessage() {
    if (!op_) return;
    if (s_->waiter == op_) {
        s_->waiter = nullptr;
        op_->release();
    }
    op_->abandon();
}

bool NextMessage::await_ready() const noexcept { return !s_->queue.empty() || s_->error || s_->dropped || !s_->hub; }

bool NextMessage::await_suspend(std::coroutine_handle<> h) {
    op_ = new detail::Op(s_->hub->loop());
    op_->hold();  // the state's reference, until it wakes us
    s_->waiter = op_;
    return op_->suspend(h);
}

Message NextMessage::await_resume() {
    if (op_) op_->settle();  // kiln::Cancelled
    // The loss in its place: after the messages that came before it (a consumer that
    // reloads its state on the error must not then apply older messages over it).
    if (s_->error && (s_->error_after == 0 || s_->queue.empty())) {
        s_->error_after = 0;
        std::rethrow_exception(std::exchange(s_->error, nullptr));
    }
    if (s_->dropped) {
        size_t n = std::exchange(s_->dropped, 0);
        throw Error(Error::Kind::Io, std::to_string(n) + " messages on \"" + s_->channel +
                                         "\" were dropped: more than 65536, or 64 MiB, were waiting to be read");
    }
    if (s_->queue.empty()) throw Error(Error::Kind::Io, "the Redis client was closed");
    return s_->pop();
}

}  // namespace kiln::redis
