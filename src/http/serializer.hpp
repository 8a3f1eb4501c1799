// Response head serialization: status line and header section, appended straight
// into the connection's output queue (one size computation, one reservation, then
// plain copies). The connection decides framing; this file only writes it down.
#pragma once
#include <cstddef>
#include <string_view>

#include "http/response.hpp"
#include "net/output.hpp"

namespace kiln::http {

enum class Framing { Length, Chunked, UntilClose, NoBody };

struct HeadParams {
    std::string_view date;
    std::string_view server;
    bool keep_alive = true;
    bool http10 = false;       // answer a 1.0 client: "Connection: keep-alive" when kept
    bool upgrade = false;      // a 101 switching protocols: "Connection: Upgrade"
    Framing framing = Framing::Length;
    size_t content_length = 0;  // for Framing::Length (also for HEAD responses)
};

// True for statuses that never carry a body (1xx, 204, 304).
inline bool status_has_no_body(int s) { return s < 200 || s == 204 || s == 304; }

void serialize_head(const Response& res, const HeadParams& p, net::OutputQueue& out, net::BufferPool& pool);

}  // namespace kiln::http
