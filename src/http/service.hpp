// What the HTTP engine calls to get a response: implemented by the layer above
// (kiln::App, adapted in src/server). Called on the connection's loop thread.
#pragma once
#include <cstddef>

#include <kiln/request.hpp>
#include <kiln/response.hpp>

namespace kiln::http {

class Service {
public:
    // The head is parsed and the path decoded: route the request (params, route
    // pointer) and return the largest body it may have. Must not throw.
    virtual size_t prepare(Request& req) = 0;
    // Body complete: fill res. Must not throw (map exceptions to a status).
    virtual void handle(Request& req, Response& res) = 0;
protected:
    ~Service() = default;
};

}  // namespace kiln::http
