// Topics: publish() sends a message to every subscriber of a topic on this node, on
// every event loop of every worker process. Subscribers are WebSockets
// (WebSocket::subscribe, see <kiln/websocket.hpp>) and coroutines holding a
// Subscription, such as a server-sent events handler:
//
//   app.get("/events", [](kiln::Request&, kiln::Response& res) -> kiln::Task<> {
//       kiln::Subscription news("news");
//       kiln::EventStream events = res.event_stream();
//       for (;;) {
//           if (auto msg = co_await news.next(std::chrono::seconds(15))) events.send(*msg);
//           else events.comment();  // quiet for 15 s: a heartbeat
//       }
//   });
//
// Delivery is best effort and in order per publisher: what a worker cannot take yet
// waits (up to 16 MiB per worker); past that, a stuck worker's messages are dropped
// (it never stalls the rest, and the error log says so once a minute), and
// a message larger than the bus's datagram (about 200 KiB) reaches only this process.
// With topics.store = "redis" (and redis.url), messages go through Redis pub/sub and
// reach every node's subscribers (in order while the connection carrying a loop's
// publishes stays up; what is published during an outage is lost).
#pragma once
#include <chrono>
#include <coroutine>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {

namespace detail {
class TopicPending;
struct WsTopics;
}

// Any thread.
void publish(std::string_view topic, std::string_view message, bool binary = false);

// A coroutine's subscription to one topic, from construction to destruction; made
// and used on one event loop thread. Messages published meanwhile queue up (at most
// max_queued of them and max_queued_bytes in all: past either the oldest are dropped,
// and dropped() counts them).
class Subscription {
public:
    explicit Subscription(std::string topic);
    ~Subscription();
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;

    class Next;
    // The next message; with a timeout, nullopt if none came in time. Throws
    // kiln::Cancelled if the request it serves is cancelled meanwhile. One coroutine
    // awaits a Subscription at a time (a second throws std::logic_error). The waiting
    // coroutine resumes from its loop's queue of deferred work, never inside the
    // publish() that woke it.
    Next next();
    Next next(std::chrono::milliseconds timeout);
    size_t dropped() const { return dropped_; }
    size_t max_queued = 4096;
    size_t max_queued_bytes = 16 * 1024 * 1024;

    class Next {
    public:
        bool await_ready() const noexcept;
        bool await_suspend(std::coroutine_handle<> h);
        std::optional<std::string> await_resume();
        Next(Next&& o) noexcept;
        Next& operator=(Next&&) = delete;
        ~Next();
    private:
        friend class Subscription;
        Next(Subscription& sub, std::chrono::milliseconds timeout);
        Subscription* sub_;
        std::chrono::milliseconds timeout_;
        detail::TopicPending* pending_ = nullptr;  // while suspended, until await_resume
    };

private:
    friend struct detail::WsTopics;
    static void on_message(void* self, std::string_view data, bool binary);
    std::string topic_;
    std::deque<std::string> queue_;
    size_t queued_bytes_ = 0;
    friend class detail::TopicPending;
    detail::TopicPending* waiting_ = nullptr;  // holds a reference to it
    size_t dropped_ = 0;
};

}  // namespace kiln
