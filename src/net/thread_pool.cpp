#include "net/thread_pool.hpp"

#include <exception>

#include "util/log.hpp"

namespace kiln::net {

ThreadPool::ThreadPool(unsigned threads, size_t queue_capacity) : capacity_(queue_capacity) {
    threads_.reserve(threads);
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        stopping_ = true;
    }
    ready_.notify_all();
    for (std::thread& t : threads_) t.join();
}

bool ThreadPool::submit(std::function<void()> job) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_ || queue_.size() >= capacity_) return false;
        queue_.push_back(std::move(job));
    }
    ready_.notify_one();
    return true;
}

size_t ThreadPool::busy() const {
    std::lock_guard<std::mutex> lock(mu_);
    return queue_.size() + running_;
}

void ThreadPool::work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, and nothing left
        std::function<void()> job = std::move(queue_.front());
        queue_.pop_front();
        ++running_;
        lock.unlock();
        try {
            job();
        } catch (const std::exception& e) {  // a broken invariant in the engine: say so, keep serving
            util::log(util::LogLevel::Error, "pool thread: a job threw: %s", e.what());
        }
        lock.lock();
        --running_;
    }
}

}  // namespace kiln::net
