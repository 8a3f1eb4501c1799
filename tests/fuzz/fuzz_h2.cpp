// Fuzzes kiln's HTTP/2 glue (src/http/h2_session.cpp and the connection's HTTP/2
// mode), with nghttp2 under it as in the server: the input is what a client sends on
// one plain connection after the preface. A real loop, server and socket pair; the
// service answers small, large, streamed and HEAD responses and refuses large bodies.
// Checked: nothing crashes or leaks (ASan), and every connection the server opened is
// closed once the client has gone (the observer counts opens and closes).
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "http/h2_session.hpp"
#include "http/server.hpp"
#include "net/loop.hpp"

using namespace kiln;

namespace {

struct Context final : http::RequestContext {};

class Service final : public http::Service {
public:
    std::unique_ptr<http::RequestContext> new_context() override { return std::make_unique<Context>(); }
    size_t prepare(http::RequestContext&, const http::Request&) override { return 2048; }
    void handle(http::RequestContext&, const http::Request& req, http::Response& res) override {
        std::string_view path = req.path();
        if (path.starts_with("/stream")) {
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

class Count final : public http::Observer {
public:
    void on_response(const Record&) override {}
    void on_open() override { ++open; }
    void on_close() override { ++closed; }
    long open = 0, closed = 0;
};

struct World {
    net::Loop loop;
    Service service;
    Count count;
    http::EngineConfig config;
    std::unique_ptr<http::Server> server;
    World() {
        config.max_pending_output = 64 * 1024;  // reach the backpressure paths
        server = std::make_unique<http::Server>(loop, service, config);
        server->set_observer(&count);
    }
};

World* world;

void drain(int fd) {
    char sink[65536];
    while (::read(fd, sink, sizeof sink) > 0) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    world = new World();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    int sv[2];
    FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
    world->server->accept(sv[0]);
    std::string in(http::kH2Preface);
    in.append(reinterpret_cast<const char*>(data), size);
    size_t at = 0;
    for (int round = 0; round < 64 && (at < in.size() || round < 8); ++round) {
        if (at < in.size()) {
            ssize_t n = ::write(sv[1], in.data() + at, in.size() - at);
            if (n > 0) at += static_cast<size_t>(n);
            else if (n < 0 && errno != EAGAIN) break;  // the server closed
        }
        world->loop.run_once(0);
        drain(sv[1]);
    }
    ::close(sv[1]);
    for (int round = 0; round < 8 && world->count.closed < world->count.open; ++round) world->loop.run_once(0);
    FUZZ_CHECK(world->count.closed == world->count.open);
    return 0;
}
