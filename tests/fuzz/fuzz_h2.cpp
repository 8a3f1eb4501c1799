// Fuzzes kiln's HTTP/2 glue (src/http/h2_session.cpp and the connection's HTTP/2
// mode), with nghttp2 under it as in the server: the input is what a client sends on
// one plain connection after the preface. A real loop, server and socket pair; the
// service answers small, large, streamed and HEAD responses, refuses large bodies, and
// answers an extended CONNECT (RFC 8441) with an echoing WebSocket on its stream.
// One input in four arrives in pieces (see below). Checked: nothing crashes or leaks
// (ASan), and every connection the server opened is closed once the client has gone
// (the observer counts opens and closes).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "engine_world.hpp"
#include "http/h2_session.hpp"

using namespace kiln;

namespace {

struct Context final : http::RequestContext {};

class Service final : public http::Service {
public:
    std::unique_ptr<http::RequestContext> new_context() override { return std::make_unique<Context>(); }
    size_t prepare(http::RequestContext&, const http::Request&) override { return 2048; }
    void handle(http::RequestContext&, const http::Request& req, http::Response& res) override {
        std::string_view path = req.path();
        if (req.protocol() == "websocket") {
            res.status(path.starts_with("/refuse") ? 403 : 200);
            res.upgrade(fuzz::echo_upgrade(path.starts_with("/deflate")));
        } else if (path.starts_with("/stream")) {
            res.write("first,");
            res.write(std::string(20000, 's'));
        } else if (path.starts_with("/big")) {
            res.send(std::string(70000, 'b'), "text/plain");
        } else if (path.starts_with("/none")) {
            res.status(204);
        } else {
            res.header("X-Body", std::to_string(req.body().size()));
            res.send("ok", "text/plain");
        }
    }
};

fuzz::EngineWorld<Service>* world;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    world = new fuzz::EngineWorld<Service>(64 * 1024);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    world->remember({reinterpret_cast<const char*>(data), size});
    std::string in(http::kH2Preface);
    in.append(reinterpret_cast<const char*>(data), size);
    // One input in four arrives in pieces of 256 bytes with a loop turn between them,
    // as a real client's frames do: DATA for a WebSocket after its answer, a body after
    // its handler began, frames after a GOAWAY. The rest arrives at once.
    world->play(in, 0, size % 4 == 3 ? 256 : SIZE_MAX);
    return 0;
}
