// What the engine fuzzers (fuzz_h2, fuzz_ws) share: a real loop and server on which a
// fuzz input is played as one client's bytes over a socket pair, the check that
// every connection the server opened is closed once that client has gone, and a
// WebSocket endpoint that echoes (and closes or pings when a message asks).
#pragma once
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
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
    up->settings.max_backlog = 8 * 1024;  // below what an input can queue: the slow-reader cut is reached
    up->settings.drain_mark = 4 * 1024;   // below the backlog limit: Backlogged and on_drain are reached
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
        std::signal(SIGPIPE, SIG_IGN);  // as kiln's server does: a write to a closed peer is EPIPE
        config.max_pending_output = max_pending_output;  // small: reach the backpressure paths
        server = std::make_unique<http::Server>(loop, service, config);
        server->set_observer(&count);
    }

    // Plays `in` as a client on a fresh connection: writes at most `piece` bytes a
    // round (what the socket takes), turns the loop, reads what came back (skipping
    // every lag_every-th round: a reader that lags), then hangs up and checks that the
    // server closed its side. The world is persistent (one loop and server for every
    // input), so the target gives each fuzz input to remember() first: when the check
    // fails the last ones are written to history-NNN files, and `fuzz_target history-*`
    // replays them in order.
    void play(std::string_view in, int lag_every = 0, size_t piece = SIZE_MAX) {
        int sv[2];
        FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
        // A small send buffer on the server's side: its writes block, so its output
        // queue, HTTP/2 flow of DATA and a WebSocket's backlog fill within an input.
        int small = 4096;
        ::setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
        server->accept(sv[0]);
        size_t at = 0;
        const int rounds = 64 + static_cast<int>(piece == SIZE_MAX ? 0 : in.size() / piece);
        for (int round = 0; round < rounds && (at < in.size() || round < 8); ++round) {
            if (at < in.size()) {
                ssize_t n = ::send(sv[1], in.data() + at, std::min(piece, in.size() - at), MSG_NOSIGNAL);
                if (n > 0) at += static_cast<size_t>(n);
                else if (n < 0 && errno != EAGAIN) break;  // the server closed
            }
            loop.run_once(0);
            if (lag_every == 0 || round % lag_every != lag_every - 1) drain(sv[1]);
        }
        ::close(sv[1]);
        // Its close may wait for deferred work: turn the loop until it comes (bounded),
        // and say so when that took more than a few turns (none did in 44 M inputs).
        int turns = 0;
        for (; turns < 256 && count.closed < count.open; ++turns) loop.run_once(0);
        if (turns > 8) std::fprintf(stderr, "slow close: %d loop turns after the client left\n", turns);
        if (count.closed != count.open) {
            std::fprintf(stderr, "a connection was still open 256 loop turns after its client left "
                                 "(%ld opened, %ld closed); the last inputs are in history-*\n",
                         count.open, count.closed);
            write_history();
        }
        FUZZ_CHECK(count.closed == count.open);
    }

    static constexpr size_t kHistory = 64;
    std::string history[kHistory];
    size_t played = 0;

    void remember(std::string_view in) { history[played++ % kHistory].assign(in); }

    void write_history() const {
        size_t first = played > kHistory ? played - kHistory : 0;
        for (size_t i = first; i < played; ++i) {
            char name[32];
            std::snprintf(name, sizeof name, "history-%03zu", i - first);
            if (std::FILE* f = std::fopen(name, "wb")) {
                const std::string& in = history[i % kHistory];
                std::fwrite(in.data(), 1, in.size(), f);
                std::fclose(f);
            }
        }
    }

    static void drain(int fd) {
        char sink[65536];
        while (::read(fd, sink, sizeof sink) > 0) {
        }
    }
};

}  // namespace kiln::fuzz
