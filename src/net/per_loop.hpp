// One client object per event loop thread (a database or Redis client), made on that
// thread's first local() with the options of the moment and closed on that thread
// when its loop goes away (Loop::at_exit), while the loop still works. local() takes
// no lock once a thread has found its client: the last one found is cached per
// thread (per client type), and told apart from an earlier map's at the same
// address by an id. REQUIRES: the map outlives the loops that use it.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "net/loop.hpp"

namespace kiln::net {

template <class Client, class Options>
class PerLoopClients {
public:
    explicit PerLoopClients(Options options) : options_(std::move(options)), id_(next_id().fetch_add(1)) {}
    PerLoopClients(const PerLoopClients&) = delete;
    PerLoopClients& operator=(const PerLoopClients&) = delete;

    void configure(Options options) {
        std::lock_guard<std::mutex> lock(mu_);
        options_ = std::move(options);
    }

    // This loop thread's client; std::logic_error naming `who` off a loop thread.
    Client& local(const char* who) {
        Loop* loop = Loop::current();
        if (!loop) throw std::logic_error(std::string(who) + " outside an event loop thread");
        if (cached_id == id_ && cached_loop == loop) return *static_cast<Client*>(cached_client);
        std::lock_guard<std::mutex> lock(mu_);
        auto& entry = clients_[loop];
        if (!entry) {
            entry = std::make_unique<Entry>(Entry{this, loop, std::make_unique<Client>(options_)});
            loop->at_exit(&close_entry, entry.get());
        }
        cached_id = id_;
        cached_loop = loop;
        cached_client = entry->client.get();
        return *entry->client;
    }

private:
    struct Entry {
        PerLoopClients* owner;
        Loop* loop;
        std::unique_ptr<Client> client;
    };

    // On the loop's own thread, first thing in its destructor.
    static void close_entry(void* p) {
        auto* e = static_cast<Entry*>(p);
        PerLoopClients* owner = e->owner;
        std::unique_ptr<Client> closing;
        {
            std::lock_guard<std::mutex> l(owner->mu_);
            closing = std::move(e->client);
            owner->clients_.erase(e->loop);  // frees e
        }
        if (cached_client == closing.get()) {
            cached_id = 0;
            cached_loop = nullptr;
            cached_client = nullptr;
        }
    }

    static std::atomic<uint64_t>& next_id() {
        static std::atomic<uint64_t> n{1};
        return n;
    }
    static inline thread_local uint64_t cached_id = 0;
    static inline thread_local Loop* cached_loop = nullptr;
    static inline thread_local void* cached_client = nullptr;

    std::mutex mu_;
    Options options_;  // guarded by mu_
    uint64_t id_;
    std::map<Loop*, std::unique_ptr<Entry>> clients_;  // guarded by mu_
};

}  // namespace kiln::net
