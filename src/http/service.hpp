// What the HTTP engine calls to get a response: implemented by the layer above
// (kiln::App, adapted in src/server). Called on the connection's loop thread.
#pragma once
#include <cstddef>
#include <memory>
#include <string_view>

#include <kiln/request.hpp>
#include <kiln/response.hpp>

namespace kiln::http {

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
    // Hands what was collected to the request about to be handled.
    virtual void deliver(Request& req) = 0;
};

class Service {
public:
    // The head is parsed and the path decoded: route the request (params, route
    // pointer) and return the largest body it may have. Must not throw.
    virtual size_t prepare(Request& req) = 0;
    // After prepare(): a sink to stream this request's body into, or nullptr to
    // have it buffered whole. Must not throw.
    virtual std::unique_ptr<BodySink> body_sink(Request&) { return nullptr; }
    // Body complete: fill res. Must not throw (map exceptions to a status).
    virtual void handle(Request& req, Response& res) = 0;
protected:
    ~Service() = default;
};

}  // namespace kiln::http
