// Fuzzes kiln's WebSocket glue (src/http/ws_session.cpp, the connection's WebSocket
// mode and permessage-deflate's inflation): the input is what a client sends after
// the upgrade, on one plain connection. A real loop, server and socket pair; the
// service upgrades every request, the endpoint echoes each message (and closes or pings
// when one asks), with a small message limit and backlog so the refusals and the
// slow-reader cut are reached. The first input byte picks compression on or off.
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
#include "http/server.hpp"
#include "http/ws_session.hpp"
#include "net/loop.hpp"

using namespace kiln;

namespace {

bool g_deflate = false;

class Echo final : public http::WsEndpoint {
public:
    void on_open(http::WsSession& s) override { session_ = &s; }
    void on_message(http::ws::Opcode op, std::string_view data) override {
        if (data == "close") session_->close(4000, "asked");
        else if (data == "ping") session_->ping("p");
        else session_->send(op, data);
    }
    void on_close(uint16_t, std::string_view) override { session_ = nullptr; }

private:
    http::WsSession* session_ = nullptr;
};

struct Context final : http::RequestContext {};

class Service final : public http::Service {
public:
    std::unique_ptr<http::RequestContext> new_context() override { return std::make_unique<Context>(); }
    size_t prepare(http::RequestContext&, const http::Request&) override { return 0; }
    void handle(http::RequestContext&, const http::Request&, http::Response& res) override {
        auto up = std::make_unique<http::WsUpgrade>();
        up->endpoint = std::make_unique<Echo>();
        up->settings.max_message = 4096;
        up->settings.max_backlog = 32 * 1024;
        up->settings.deflate.enabled = g_deflate;
        res.status(101);
        res.upgrade(std::move(up));
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
        config.max_pending_output = 16 * 1024;  // reach the read pause
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
    if (size == 0) return 0;
    g_deflate = data[0] & 1;
    int sv[2];
    FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
    world->server->accept(sv[0]);
    std::string in = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    in.append(reinterpret_cast<const char*>(data) + 1, size - 1);
    size_t at = 0;
    for (int round = 0; round < 64 && (at < in.size() || round < 8); ++round) {
        if (at < in.size()) {
            ssize_t n = ::write(sv[1], in.data() + at, in.size() - at);
            if (n > 0) at += static_cast<size_t>(n);
            else if (n < 0 && errno != EAGAIN) break;  // the server closed
        }
        world->loop.run_once(0);
        if (round % 4 != 3) drain(sv[1]);  // now and then a reader that lags
    }
    ::close(sv[1]);
    for (int round = 0; round < 8 && world->count.closed < world->count.open; ++round) world->loop.run_once(0);
    FUZZ_CHECK(world->count.closed == world->count.open);
    return 0;
}
