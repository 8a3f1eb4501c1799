// A fixed number of threads and a bounded queue: the hybrid model's handler threads
// (server/serve.cpp) and the threads of kiln::blocking (app/blocking.cpp). submit()
// refuses (false) when the queue is full, so the caller can answer at once (503)
// instead of letting work pile up without bound. A job should not throw; one that
// does is logged and the thread goes on.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::net {

class ThreadPool {
public:
    ThreadPool(unsigned threads, size_t queue_capacity);
    ~ThreadPool();  // finishes queued and running jobs, then joins
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    bool submit(std::function<void()> job);  // any thread
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

}  // namespace kiln::net
