// The node's channel for publish() between worker processes (net::ProcessBus),
// opened by the server layer in each worker of an app with WebSocket routes.
#pragma once
#include <cstdint>
#include <string>

namespace kiln::app {

// Binds slot `index` of `slots` for node `node` and starts receiving; "" or why not.
std::string open_ws_bus(uint64_t node, unsigned index, unsigned slots);
void close_ws_bus();

}  // namespace kiln::app
