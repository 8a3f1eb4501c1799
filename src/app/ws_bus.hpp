// Where publish() goes beyond this process, set up by the server layer in each
// worker: the node's channel between worker processes (net::ProcessBus), or a bridge
// through which topics span nodes (topics.store = "redis").
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace kiln::net {
class Loop;
}

namespace kiln::app {

// Where this worker's bus binds: slot `index` of `slots` in the node's bus directory
// `dir` (the supervisor's). It opens at the first subscriber or publish (an error is
// logged then); close_ws_bus, after the loops, stops it.
void place_ws_bus(std::string dir, unsigned index, unsigned slots);
void close_ws_bus();

// Topics across nodes: publish() hands each message, encoded, to `send` (any thread)
// and delivers nothing itself; `loop_joined` runs on each loop thread that gains its
// first subscriber (to subscribe there); what comes back is given to deliver_encoded
// on that loop. Set before serving; the bus is then not used.
struct TopicBridge {
    std::function<void(std::string encoded)> send;
    std::function<void(net::Loop& loop)> loop_joined;
};
void set_topic_bridge(TopicBridge bridge);
// This loop's subscribers get an encoded message (a bridge's delivery).
void deliver_encoded(std::string_view encoded);
// Runs fn on one of this process's loops, one with subscribers first (false: no loop
// serves). For publish() off the loops: a bridge client lives on a loop.
bool post_to_a_loop(std::function<void()> fn);
// A loop thread that serves: post_to_a_loop may use it, until the loop goes.
void loop_serves(net::Loop& loop);

}  // namespace kiln::app
