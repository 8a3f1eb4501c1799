// What the HTTP engine calls to get a response: implemented by the layer above
// (app::Dispatcher for a kiln::App). The engine owns the messages (http::Request,
// http::Response); the layer above keeps its own per-request state in a
// RequestContext the engine asks it for: one per loop, reused request after
// request, and one per Exchange handed to another thread. Called on the thread
// that runs the request (the loop's, or a pool thread's for handle()).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "http/request.hpp"
#include "http/response.hpp"

namespace kiln::http {

// The layer above's state for one request in flight (its request object, ...).
class RequestContext {
public:
    virtual ~RequestContext() = default;
};

// Takes a request body piece by piece as it arrives, instead of the connection
// buffering it whole (multipart uploads: memory stays bounded whatever the size).
// Belongs to the connection; called on its loop thread.
class BodySink {
public:
    virtual ~BodySink() = default;
    // A piece of the (de-chunked) body. False: refuse the body with status().
    virtual bool write(std::string_view data) = 0;
    // The body is complete. False: refuse it with status().
    virtual bool finish() = 0;
    virtual int status() const = 0;             // 400, 413, 500 ...
    virtual std::string_view reason() const = 0;  // for the error response
    // Seconds for the error response's Retry-After (0: none): a refusal for want of
    // room that passes (503, 507).
    virtual uint32_t retry_after() const { return 0; }
    // Hands what was collected to the context of the request about to be handled.
    virtual void deliver(RequestContext& ctx) = 0;
};

// Called once a request that waited is answered (on its loop thread).
struct Completion {
    void (*fn)(void* arg) = nullptr;
    void* arg = nullptr;
};

class Service {
public:
    virtual std::unique_ptr<RequestContext> new_context() = 0;
    // The head is parsed and the path decoded: route the request and return the
    // largest body it may have. Must not throw.
    virtual size_t prepare(RequestContext& ctx, const Request& req) = 0;
    // After prepare(): a sink to stream this request's body into, or nullptr to
    // have it buffered whole. Must not throw.
    virtual std::unique_ptr<BodySink> body_sink(RequestContext&, const Request&) { return nullptr; }
    // Body complete: fill res. Must not throw (map exceptions to a status).
    virtual void handle(RequestContext& ctx, const Request& req, Response& res) = 0;

    // Requests whose handler may wait (a coroutine). After prepare(): true if this
    // one does; the engine then keeps the request in an Exchange of its own and
    // calls start() instead of handle(), on the loop thread.
    virtual bool waits(RequestContext&) { return false; }
    // Starts the handler; done runs on this loop thread once res is complete,
    // possibly before start() returns. Must not throw.
    virtual void start(RequestContext&, const Request&, Response&, Completion) {}
    // The client is gone or the server is stopping: the handler's waits end (they
    // throw kiln::Cancelled); done still runs, and the response is dropped.
    virtual void cancel(RequestContext&) {}
protected:
    ~Service() = default;
};

}  // namespace kiln::http
