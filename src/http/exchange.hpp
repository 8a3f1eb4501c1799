// Handing requests to other threads (the hybrid model): an Exchange is one request
// in flight, with its own head, request, response and context, and the read buffer its
// views point into (taken from the connection, so nothing the handler reads can
// be freed or moved under it). The loop submits it to an Executor; the handler
// runs on a pool thread and touches only the Exchange; the finished Exchange goes
// back through a CompletionQueue, and the loop thread resumes the connection.
//
// Lifetimes: the Executor's thread owns the Exchange until it pushes it; the
// queue then owns it until the loop takes it. The loop's Server closes its queue
// before it dies: a push to a closed queue frees the Exchange there, so a handler
// that outlives its loop never reaches the loop.
#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "http/parser.hpp"
#include "http/request.hpp"
#include "http/response.hpp"
#include "http/service.hpp"
#include "net/buffer.hpp"
#include "net/loop.hpp"

namespace kiln::http {

class Connection;

struct Exchange {
    RequestHead head;
    Request request;
    Response response;
    std::unique_ptr<RequestContext> context;  // the layer above's, for this request
    net::Buffer buffer;            // the connection's read buffer while the handler runs
    Connection* connection;        // null once the connection closed (loop thread only)
    bool waiting = false;          // a handler that waits on the loop (not a pool thread's)
    bool starting = false;         // inside Service::start: a completion now is synchronous
    bool finished = false;         // it completed while starting
    // HTTP/2: the stream, and the bytes the head's views and the body point into.
    int32_t stream_id = 0;
    std::string fields;
    std::vector<uint32_t> field_offsets;  // per field: name offset, length, value offset, length
    std::string body_bytes;
};

// Frees an exchange whose connection is gone, its read buffer back to `pool`.
inline void discard(Exchange* ex, net::BufferPool& pool) {
    ex->buffer.consume(ex->buffer.size());
    ex->buffer.release(pool);
    delete ex;
}

// Runs jobs on other threads. submit() returns false when the queue is full.
class Executor {
public:
    virtual bool submit(std::function<void()> job) = 0;
protected:
    ~Executor() = default;
};

class CompletionQueue {
public:
    explicit CompletionQueue(net::Loop& loop) : loop_(&loop) {}
    // Any thread. Takes ownership; wakes the loop, or frees ex if the queue is closed.
    void push(Exchange* ex);
    // Loop thread: the finished exchanges, in completion order.
    std::vector<Exchange*> take();
    // Loop thread, before the loop goes away; returns what was still queued.
    std::vector<Exchange*> close();

private:
    std::mutex mu_;
    net::Loop* loop_;  // null once closed (guarded by mu_)
    std::vector<Exchange*> done_;
};

}  // namespace kiln::http
