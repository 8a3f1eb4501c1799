// What the engine fuzzers (fuzz_h2, fuzz_ws) share: a real loop and server on which a
// fuzz input is played as one client's bytes over a socket pair, the check that
// every connection the server opened is closed once that client has gone, and a
// WebSocket endpoint that echoes (and closes or pings when a message asks).
#pragma once
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "http/server.hpp"
#include "http/ws_session.hpp"
#include "net/loop.hpp"

namespace kiln::fuzz {

class Count final : public http::Observer {
public:
    void on_response(const Record&) override {}
    void on_open() override { ++open; }
    void on_close() override { ++closed; }
    long open = 0, closed = 0;
};

class EchoEndpoint final : public http::WsEndpoint {
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

// A WebSocket answer with small limits (the refusals and the slow-reader cut are reached).
inline std::unique_ptr<http::WsUpgrade> echo_upgrade(bool deflate) {
    auto up = std::make_unique<http::WsUpgrade>();
    up->endpoint = std::make_unique<EchoEndpoint>();
    up->settings.max_message = 4096;
    up->settings.max_backlog = 32 * 1024;
    up->settings.deflate.enabled = deflate;
    return up;
}

template <class Service>
struct EngineWorld {
    net::Loop loop;
    Service service;
    Count count;
    http::EngineConfig config;
    std::unique_ptr<http::Server> server;

    explicit EngineWorld(size_t max_pending_output) {
        config.max_pending_output = max_pending_output;  // small: reach the backpressure paths
        server = std::make_unique<http::Server>(loop, service, config);
        server->set_observer(&count);
    }

    // Plays `in` as a client on a fresh connection: writes what the socket takes, turns
    // the loop, reads what came back (skipping every lag_every-th round: a reader that
    // lags), then hangs up and checks the server closed its side.
    void play(std::string_view in, int lag_every = 0) {
        int sv[2];
        FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
        server->accept(sv[0]);
        size_t at = 0;
        for (int round = 0; round < 64 && (at < in.size() || round < 8); ++round) {
            if (at < in.size()) {
                ssize_t n = ::write(sv[1], in.data() + at, in.size() - at);
                if (n > 0) at += static_cast<size_t>(n);
                else if (n < 0 && errno != EAGAIN) break;  // the server closed
            }
            loop.run_once(0);
            if (lag_every == 0 || round % lag_every != lag_every - 1) drain(sv[1]);
        }
        ::close(sv[1]);
        for (int round = 0; round < 8 && count.closed < count.open; ++round) loop.run_once(0);
        FUZZ_CHECK(count.closed == count.open);
    }

    static void drain(int fd) {
        char sink[65536];
        while (::read(fd, sink, sizeof sink) > 0) {
        }
    }
};

}  // namespace kiln::fuzz
