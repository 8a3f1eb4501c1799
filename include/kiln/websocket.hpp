// WebSocket (RFC 6455) endpoints: app.ws(pattern, ...) answers the upgrade on a GET
// route (after the middleware, so log-in checks and sessions apply) and then talks
// messages, with callbacks or with a coroutine:
//
//   app.ws("/echo", kiln::WsHandlers{
//       .message = [](kiln::WebSocket& ws, std::string_view data, bool binary) {
//           binary ? ws.send_binary(data) : ws.send(data);
//       }});
//
//   app.ws("/chat/:room", [](kiln::WebSocket& ws) -> kiln::Task<> {
//       ws.subscribe(ws.param("room"));
//       while (auto msg = co_await ws.receive()) kiln::publish(ws.param("room"), msg->data);
//   });
//
// Everything runs on the connection's loop thread. Pings are answered, and sent when
// a client is quiet (one that does not answer is closed); text is checked as UTF-8
// (1007), messages past max_message close with 1009; permessage-deflate (RFC 7692)
// is used when the client offers it. A client that reads too slowly is cut once
// max_backlog bytes wait for it (send() says Backlogged before that: wait for
// drained(), or the drain callback). Messages published on a topic reach every
// subscriber on every loop and every worker process of the node.
#pragma once
#include <any>
#include <chrono>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <kiln/locals.hpp>
#include <kiln/request.hpp>
#include <kiln/task.hpp>
#include <kiln/topics.hpp>

namespace kiln {

namespace http {
class WsSession;
}
namespace detail {
class WsWait;
struct WsRun;
struct WsRoute;
class WsBridge;
struct WsHandshake;
struct WsTopics;
}

struct WsOptions {
    size_t max_message = 1 << 20;  // bytes (after inflation); larger closes with 1009
    // A client quiet this long is pinged; quiet as long again, it is closed. 0: never.
    std::chrono::milliseconds ping_interval{30000};
    size_t max_backlog = 1 << 20;  // bytes waiting for a slow reader; past it, it is cut (1008)
    bool compression = true;       // permessage-deflate, when the client offers it
    // zlib's level (1..9) for the messages kiln sends. 1 spends about a third of 6's
    // CPU on text for an output some 18% larger (bench/results/ws-deflate-level.md).
    int compression_level = 1;
    // Subprotocols this endpoint speaks, best first: the first the client also
    // offers is chosen (WebSocket::protocol()); none in common: no subprotocol.
    std::vector<std::string> protocols;
    // Origins (scheme://host[:port]) a browser may connect from besides the page's own
    // (Origin's host equal to Host). Others get 403: a cookie-authenticated WebSocket
    // is otherwise open to any site the user visits. "*" allows every origin.
    std::vector<std::string> allowed_origins;
};

struct WsMessage {
    std::string data;
    bool binary = false;
};

class WebSocket {
public:
    enum class Sent : uint8_t { Ok, Backlogged, Dropped };

    WebSocket(const WebSocket&) = delete;
    WebSocket& operator=(const WebSocket&) = delete;
    ~WebSocket();

    // A text message (must be UTF-8) or a binary one. Backlogged: queued, but the
    // client is behind (drained() or the drain callback says when to go on);
    // Dropped: the WebSocket is closed or closing (or this one would pass max_backlog,
    // and it was cut).
    Sent send(std::string_view text);
    Sent send_binary(std::string_view data);
    // Starts the closing handshake (1000..4999; a reason of at most 123 bytes).
    void close(uint16_t code = 1000, std::string_view reason = {});
    bool is_open() const { return session_ != nullptr; }
    // Once closed: the peer's code (1005: none given; 1006: the connection dropped).
    uint16_t close_code() const { return close_code_; }
    size_t buffered() const;

    std::string_view protocol() const { return protocol_; }
    // The route's parameters, as matched by the upgrade request.
    std::string_view param(std::string_view name) const;

    // The coroutine form: the next message, or nullopt once the WebSocket is closed.
    class Receive;
    Receive receive();
    // Resumes once what waits for the client is below the drain mark (or it closed).
    class Drained;
    Drained drained();

    // Topics: publish() reaches every WebSocket subscribed to the topic, on every
    // loop and worker process of this node. Subscriptions end with the WebSocket.
    void subscribe(std::string_view topic);
    void unsubscribe(std::string_view topic);

    // Values of this WebSocket's own, one per type; the upgrade request's locals
    // (Request::set_local, e.g. the user a middleware found) are moved here.
    template <class T>
    void set_local(T value);
    template <class T>
    T* local();

    class Receive {
    public:
        bool await_ready() const noexcept;
        bool await_suspend(std::coroutine_handle<> h);
        std::optional<WsMessage> await_resume();
        Receive(Receive&&) noexcept;
        ~Receive();
    private:
        friend class WebSocket;
        explicit Receive(WebSocket& ws);
        WebSocket* ws_;
        std::unique_ptr<detail::WsWait> wait_;
    };
    class Drained {
    public:
        bool await_ready() const noexcept;
        bool await_suspend(std::coroutine_handle<> h);
        void await_resume();
        Drained(Drained&&) noexcept;
        ~Drained();
    private:
        friend class WebSocket;
        explicit Drained(WebSocket& ws);
        WebSocket* ws_;
        std::unique_ptr<detail::WsWait> wait_;
    };

private:
    friend class detail::WsBridge;
    friend class detail::WsWait;
    friend struct detail::WsHandshake;
    friend struct detail::WsTopics;
    WebSocket() = default;
    Sent send_message(bool binary, std::string_view data);
    static void on_published(void* self, std::string_view data, bool binary);
    void closed(uint16_t code);

    http::WsSession* session_ = nullptr;  // null once closed
    const detail::WsRoute* route_ = nullptr;
    detail::WsWait* receiver_ = nullptr;  // a receive() waiting
    detail::WsWait* drainer_ = nullptr;   // a drained() waiting
    std::vector<WsMessage> inbox_;        // coroutine form: messages not received yet
    size_t inbox_head_ = 0;
    size_t inbox_bytes_ = 0;              // past max_backlog: the client is cut
    std::vector<std::pair<std::string, std::string>> params_;
    std::vector<std::string> topics_;
    detail::Locals locals_;
    std::string protocol_;
    std::unique_ptr<detail::WsRun> run_;  // coroutine form: its scope
    std::vector<std::pair<std::string, bool>> early_;  // sent before the connection turned
    bool opened_ = false;
    uint16_t close_code_ = 0;
};

// Callbacks, each optional. open gets the upgrade request (valid during the call).
struct WsHandlers {
    std::function<void(WebSocket&, Request&)> open;
    std::function<void(WebSocket&, std::string_view data, bool binary)> message;
    std::function<void(WebSocket&)> drain;  // a Backlogged client caught up
    std::function<void(WebSocket&, uint16_t code, std::string_view reason)> close;
};

// A coroutine run for each WebSocket; when it returns the WebSocket is closed (1000).
using WsCoroutine = std::function<Task<>(WebSocket&)>;

template <class T>
void WebSocket::set_local(T value) {
    locals_.set(std::move(value));
}

template <class T>
T* WebSocket::local() {
    return locals_.get<T>();
}

}  // namespace kiln
