#include <kiln/pg.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "net/loop.hpp"

namespace kiln::pg {

struct PerLoop::State {
    std::mutex mu;
    Options options;
    uint64_t id;  // tells this PerLoop's cache entries from an earlier one's at the same address
    struct Entry {
        State* owner;
        net::Loop* loop;
        std::unique_ptr<Client> client;
    };
    std::map<net::Loop*, std::unique_ptr<Entry>> clients;  // guarded by mu
};

namespace {
std::atomic<uint64_t> next_id{1};
// The last client local() gave on this thread: no lock on the way to a query.
thread_local uint64_t cached_id = 0;
thread_local net::Loop* cached_loop = nullptr;
thread_local Client* cached_client = nullptr;
}  // namespace

PerLoop::PerLoop(Options options) : s_(std::make_unique<State>()) {
    s_->options = std::move(options);
    s_->id = next_id.fetch_add(1);
}

PerLoop::~PerLoop() = default;

void PerLoop::configure(Options options) {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->options = std::move(options);
}

Client& PerLoop::local() {
    net::Loop* loop = net::Loop::current();
    if (!loop) throw std::logic_error("kiln::pg::PerLoop::local() outside an event loop thread");
    if (cached_id == s_->id && cached_loop == loop) return *cached_client;
    std::lock_guard<std::mutex> lock(s_->mu);
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
            if (cached_client == closing.get()) {
                cached_id = 0;
                cached_loop = nullptr;
                cached_client = nullptr;
            }
        }, entry.get());
    }
    cached_id = s_->id;
    cached_loop = loop;
    cached_client = entry->client.get();
    return *cached_client;
}

Options options_from(const ServerOptions& server) {
    Options o;
    o.url = server.database_url;
    o.pool = server.database_pool;
    o.statement_timeout = std::chrono::milliseconds(server.database_statement_timeout_ms);
    return o;
}

}  // namespace kiln::pg
