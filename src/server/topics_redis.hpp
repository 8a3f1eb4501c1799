// topics.store = "redis": kiln::publish through Redis pub/sub, so a topic's
// subscribers on every node hear it (see src/app/ws_bus.hpp's TopicBridge).
#pragma once
#include <kiln/server.hpp>

namespace kiln::server {

// In a process about to serve (a worker, or a lone server): every loop thread that
// gains a subscriber subscribes to the channel PREFIX "topics" (redis.prefix; then
// ":dbN" for a Redis database N other than 0) on a
// Redis client of its own, and publish() sends PUBLISH from the publishing loop's
// client (from another thread, through a loop of this process that has subscribers;
// without one the message is dropped). A Redis outage loses what is published during
// it (pub/sub keeps nothing), says so in the error log at most once a second, and
// ends by itself: the clients reconnect and subscribe again.
void share_topics_through_redis(const ServerOptions& options);

}  // namespace kiln::server
