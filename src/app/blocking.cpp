// kiln::blocking's machinery: a process's blocking-work threads (net::ThreadPool),
// and a wait that comes back to its loop through the loop's mailbox.
#include <kiln/app.hpp>  // HttpError
#include <kiln/blocking.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "app/blocking_jobs.hpp"
#include "net/async.hpp"
#include "net/mailbox.hpp"
#include "net/thread_pool.hpp"

namespace kiln::detail {
namespace {

constexpr size_t kQueue = 4096;

std::atomic<net::ThreadPool*> made{nullptr};

net::ThreadPool& pool() {
    // Made on first use, so in the process that uses it (a worker, after fork).
    static net::ThreadPool threads(std::max(2u, std::thread::hardware_concurrency()), kQueue);
    made.store(&threads, std::memory_order_release);
    return threads;
}

// Cancelling it only marks it: the coroutine's memory is in use until the job ends,
// or (a job still queued) until a thread takes it and skips it.
class JobWait final : public net::Wait {
public:
    JobWait(std::coroutine_handle<> h, std::atomic<bool>& cancelled) : net::Wait(h), cancelled_(cancelled) {}
    ~JobWait() override = default;

private:
    void on_cancel() override { cancelled_.store(true, std::memory_order_relaxed); }
    bool resumes_on_cancel() const override { return false; }
    std::atomic<bool>& cancelled_;
};

}  // namespace

struct BlockingWait::State {
    std::function<void()> job;
    std::atomic<bool> cancelled{false};  // the request is gone: a job not begun is skipped
    std::shared_ptr<net::Mailbox> mailbox;
    std::optional<JobWait> wait;  // the loop thread's
    std::mutex mu;
    std::condition_variable ended_cv;
    bool ended = false;  // the job has run (guarded by mu)
};

BlockingWait::~BlockingWait() {
    if (!state_) return;
    state_->cancelled.store(true, std::memory_order_relaxed);  // a job not begun is skipped
    state_->wait.reset();
    std::unique_lock<std::mutex> lock(state_->mu);
    state_->ended_cv.wait(lock, [&] { return state_->ended; });  // at once, unless destroyed mid-job
}

bool BlockingWait::await_suspend(std::coroutine_handle<> h) {
    auto s = std::make_shared<State>();
    s->wait.emplace(h, s->cancelled);
    if (s->wait->cancelled()) return false;  // the request is gone: fn does not run
    s->job = std::move(job_);
    s->mailbox = s->wait->loop().mailbox();
    bool queued = pool().submit([s] {
        if (!s->cancelled.load(std::memory_order_relaxed)) s->job();
        s->job = nullptr;  // what it captured goes on this thread
        {
            std::lock_guard<std::mutex> lock(s->mu);
            s->ended = true;
        }
        s->ended_cv.notify_all();
        s->mailbox->post([s] {
            if (s->wait) s->wait->complete();  // resumes the coroutine, on its loop thread
        });
    });
    if (!queued) {
        s->wait.reset();
        throw HttpError(503, "Service Unavailable: too much blocking work waiting");
    }
    state_ = std::move(s);
    return true;
}

void BlockingWait::await_resume() {
    if (!state_) throw Cancelled();  // cancelled before it started
    bool cancelled = state_->wait && state_->wait->cancelled();
    state_->wait.reset();
    if (cancelled) throw Cancelled();
}

}  // namespace kiln::detail

namespace kiln::app {

size_t blocking_jobs() {
    net::ThreadPool* p = detail::made.load(std::memory_order_acquire);
    return p ? p->busy() : 0;
}

}  // namespace kiln::app
