// The app layer's WebSocket parts shared between files: a ws route as registered,
// the topics publish() reaches, and the Sec-WebSocket-Accept computation.
#pragma once
#include <string>
#include <string_view>

#include <kiln/websocket.hpp>

namespace kiln::detail {

struct WsRoute {
    WsHandlers handlers;
    WsCoroutine coroutine;  // set: the coroutine form (handlers.message unused)
    WsOptions options;
};

// Subscriptions: per loop thread, a topic's subscribers (WebSockets, Subscriptions),
// each an object and what delivers a message to it (see ws_topics.cpp).
struct WsTopics {
    using Deliver = void (*)(void* subscriber, std::string_view data, bool binary);
    static void join(void* subscriber, Deliver fn, std::string_view topic);
    static void leave(void* subscriber, std::string_view topic);
    static void leave_all(WebSocket& ws);
    // This loop's subscribers of `topic` get the message (on their loop thread).
    static void deliver(std::string_view topic, std::string_view data, bool binary);
};

// base64(SHA-1(key + RFC 6455's GUID)).
std::string websocket_accept(std::string_view key);

}  // namespace kiln::detail
