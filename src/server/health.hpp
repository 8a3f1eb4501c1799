// The health endpoint with checks: every App::health_check, and the Redis session
// store's, run on each probe (one after another; each bounded by the request's
// deadline, timeouts.handler_ms). 200 {"status":"ok","uptime_seconds":N} when all
// pass; 503 {"status":"unavailable","failing":{NAME:REASON,...}} when one fails or
// throws; 503 {"status":"draining"} while the node stops.
#pragma once
#include <cstdint>

#include <kiln/app.hpp>
#include <kiln/response.hpp>
#include <kiln/task.hpp>

namespace kiln::server {

Task<> check_health(const App& app, Response& res, bool draining, uint64_t uptime_seconds);

}  // namespace kiln::server
