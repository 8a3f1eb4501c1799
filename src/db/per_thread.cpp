#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

#include <kiln/db.hpp>

namespace kiln::db {
namespace {

std::atomic<uint64_t> g_next_id{1};
// This thread's connections, by PerThread id (ids are never reused, so an entry
// left by a destroyed PerThread never matches again).
thread_local std::vector<std::pair<uint64_t, Database*>> t_connections;

}  // namespace

struct PerThread::State {
    std::filesystem::path path;
    Options options;
    uint64_t id;
    std::mutex mu;
    std::vector<std::unique_ptr<Database>> connections;  // guarded by mu
};

PerThread::PerThread(std::filesystem::path path, Options options)
    : state_(new State{std::move(path), options, g_next_id.fetch_add(1), {}, {}}) {}

PerThread::~PerThread() = default;

Database& PerThread::get() {
    for (auto& [id, db] : t_connections) {
        if (id == state_->id) return *db;
    }
    auto db = std::make_unique<Database>(state_->path, state_->options);  // opened on this thread
    Database* raw = db.get();
    {
        std::lock_guard lock(state_->mu);
        state_->connections.push_back(std::move(db));
    }
    t_connections.emplace_back(state_->id, raw);
    return *raw;
}

}  // namespace kiln::db
