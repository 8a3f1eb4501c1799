// app::Dispatcher: a kiln::App as the HTTP engine's Service. Its RequestContext
// holds the kiln::Request and kiln::Response a handler sees, bound to the
// engine's messages for each request (one context per loop, reused; one per
// Exchange on a pool thread). Routing happens in prepare() as soon as the head is
// in, so the body limit and the upload rules are the route's. Read-only after
// construction: every loop of a process shares one.
#pragma once
#include <cstdint>
#include <memory>

#include <kiln/task.hpp>

#include <kiln/app.hpp>
#include <kiln/request.hpp>
#include <kiln/response.hpp>

#include "app/compression.hpp"
#include "http/service.hpp"
#include "net/async.hpp"
#include "net/deadline_heap.hpp"

namespace kiln::app {

// A request that waits: its scope (the waits to cancel together), its deadline.
struct AsyncRun {
    net::AsyncScope scope;
    net::Deadline deadline;
    net::Loop* loop = nullptr;
    http::Completion done;
    // The server's timeouts.handler_ms, not the route's deadline_ms: it lapses once
    // the answer has begun (a stream, such as server-sent events, lives on).
    const http::Response* until_answer = nullptr;
    bool timed_out = false;
};

struct Context final : http::RequestContext {
    Request request;
    Response response{Response::Unowned{}};
    std::unique_ptr<AsyncRun> async;  // while a waiting request runs
};

class Dispatcher : public http::Service {
public:
    Dispatcher(const App& app, uint64_t upload_spool_limit, uint32_t handler_timeout_ms = 0)
        : app_(app), spool_limit_(upload_spool_limit), handler_timeout_ms_(handler_timeout_ms) {}
    virtual ~Dispatcher() = default;
    // On-the-fly compression (off until set): before the loops start.
    void set_compression(CompressionPolicy policy) { compression_ = std::move(policy); }

    std::unique_ptr<http::RequestContext> new_context() override;
    size_t prepare(http::RequestContext& ctx, const http::Request& req) override;
    std::unique_ptr<http::BodySink> body_sink(http::RequestContext& ctx, const http::Request& req) override;
    void handle(http::RequestContext& ctx, const http::Request& req, http::Response& res) override;
    bool waits(http::RequestContext& ctx) override;
    void start(http::RequestContext& ctx, const http::Request& req, http::Response& res, http::Completion done) override;
    void cancel(http::RequestContext& ctx) override;

    // The form an upload sink collected, to the request about to be handled.
    static void deliver_form(http::RequestContext& ctx, Form&& form);

protected:
    // What a waiting request runs: the app's chain (App::handle_async).
    virtual Task<> run_waiting(Context& c);

private:
    void finish_async(Context& c);
    const App& app_;
    uint64_t spool_limit_;
    uint32_t handler_timeout_ms_;  // timeouts.handler_ms: a route without its own deadline
    CompressionPolicy compression_{.enabled = false};
    void begin_compression(Context& c) const;  // before the handler
    void end_compression(Context& c) const;    // after it: a whole body is coded here
};

}  // namespace kiln::app
