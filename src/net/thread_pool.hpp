// The hybrid model's handler threads: a fixed number of threads and a bounded
// queue. submit() refuses (false) when the queue is full, so the loop answers 503
// at once instead of letting requests pile up without bound. Jobs are the
// engine's; a job must not throw (the app maps handler exceptions itself).
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "http/exchange.hpp"

namespace kiln::server {

class ThreadPool final : public http::Executor {
public:
    ThreadPool(unsigned threads, size_t queue_capacity);
    ~ThreadPool();  // finishes queued and running jobs, then joins
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    bool submit(std::function<void()> job) override;  // any thread
    size_t busy() const;  // jobs queued or running

private:
    void work();
    mutable std::mutex mu_;
    std::condition_variable ready_;
    std::deque<std::function<void()>> queue_;  // guarded by mu_
    size_t running_ = 0;                       // guarded by mu_
    bool stopping_ = false;                    // guarded by mu_
    const size_t capacity_;
    std::vector<std::thread> threads_;
};

}  // namespace kiln::server
