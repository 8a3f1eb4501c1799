#include <kiln/redis.hpp>

#include <map>
#include <mutex>
#include <stdexcept>

#include "net/loop.hpp"

namespace kiln::redis {

struct PerLoop::State {
    std::mutex mu;
    Options options;
    struct Entry {
        State* owner;
        net::Loop* loop;
        std::unique_ptr<Client> client;
    };
    std::map<net::Loop*, std::unique_ptr<Entry>> clients;  // guarded by mu
};

PerLoop::PerLoop(Options options) : s_(std::make_unique<State>()) { s_->options = std::move(options); }

PerLoop::~PerLoop() = default;

void PerLoop::configure(Options options) {
    parse_url(options.url);  // a bad URL is refused here, at start, not at the first command
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->options = std::move(options);
}

Client& PerLoop::local() {
    net::Loop* loop = net::Loop::current();
    if (!loop) throw std::logic_error("kiln::redis::PerLoop::local() outside an event loop thread");
    std::lock_guard<std::mutex> lock(s_->mu);  // uncontended: each loop thread finds its own entry
    auto& entry = s_->clients[loop];
    if (!entry) {
        entry = std::make_unique<State::Entry>(State::Entry{s_.get(), loop, std::make_unique<Client>(s_->options)});
        // Closed on its own thread while its loop still works; the entry goes with it.
        loop->at_exit([](void* p) {
            auto* e = static_cast<State::Entry*>(p);
            State* owner = e->owner;
            std::unique_ptr<Client> closing;
            {
                std::lock_guard<std::mutex> l(owner->mu);
                closing = std::move(e->client);
                owner->clients.erase(e->loop);  // frees e
            }
        }, entry.get());
    }
    return *entry->client;
}

}  // namespace kiln::redis
