// Fuzzes kiln's WebSocket glue (src/http/ws_session.cpp, the connection's WebSocket
// mode and permessage-deflate's inflation): the input is what a client sends after
// the upgrade, on one plain connection. A real loop, server and socket pair; the
// service upgrades every request, the endpoint echoes each message (and closes or pings
// when one asks), with a small message limit and backlog so the refusals and the
// slow-reader cut are reached. The first input byte picks compression on or off.
// Checked: nothing crashes or leaks (ASan), and every connection the server opened is
// closed once the client has gone (the observer counts opens and closes).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "engine_world.hpp"

using namespace kiln;

namespace {

bool g_deflate = false;

struct Context final : http::RequestContext {};

class Service final : public http::Service {
public:
    std::unique_ptr<http::RequestContext> new_context() override { return std::make_unique<Context>(); }
    size_t prepare(http::RequestContext&, const http::Request&) override { return 0; }
    void handle(http::RequestContext&, const http::Request&, http::Response& res) override {
        res.status(101);
        res.upgrade(fuzz::echo_upgrade(g_deflate));
    }
};

fuzz::EngineWorld<Service>* world;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    world = new fuzz::EngineWorld<Service>(16 * 1024);  // small: reach the read pause
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    world->remember({reinterpret_cast<const char*>(data), size});
    g_deflate = data[0] & 1;
    std::string in = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    in.append(reinterpret_cast<const char*>(data) + 1, size - 1);
    world->play(in, 4);  // every fourth round the client does not read
    return 0;
}
