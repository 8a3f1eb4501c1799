// kiln::blocking's machinery: a process's blocking-work threads (net::ThreadPool),
// and a wait that comes back to its loop through the loop's mailbox.
#include <kiln/app.hpp>  // HttpError
#include <kiln/blocking.hpp>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "net/async.hpp"
#include "net/mailbox.hpp"
#include "net/thread_pool.hpp"

namespace kiln::detail {
namespace {

constexpr size_t kQueue = 4096;

net::ThreadPool& pool() {
    // Made on first use, so in the process that uses it (a worker, after fork).
    static net::ThreadPool threads(std::max(2u, std::thread::hardware_concurrency()), kQueue);
    return threads;
}

// Cancelling it only marks it: the coroutine's memory is in use until the job ends.
class JobWait final : public net::Wait {
public:
    explicit JobWait(std::coroutine_handle<> h) : net::Wait(h) {}
    ~JobWait() override = default;

private:
    void on_cancel() override {}
    bool resumes_on_cancel() const override { return false; }
};

}  // namespace

struct BlockingWait::State {
    std::function<void()> job;
    std::shared_ptr<net::Mailbox> mailbox;
    std::optional<JobWait> wait;  // the loop thread's
    std::mutex mu;
    std::condition_variable ended_cv;
    bool ended = false;  // the job has run (guarded by mu)
};

BlockingWait::~BlockingWait() {
    if (!state_) return;
    state_->wait.reset();
    std::unique_lock<std::mutex> lock(state_->mu);
    state_->ended_cv.wait(lock, [&] { return state_->ended; });  // at once, unless destroyed mid-job
}

bool BlockingWait::await_suspend(std::coroutine_handle<> h) {
    auto s = std::make_shared<State>();
    s->wait.emplace(h);
    if (s->wait->cancelled()) return false;  // the request is gone: fn does not run
    s->job = std::move(job_);
    s->mailbox = s->wait->loop().mailbox();
    bool queued = pool().submit([s] {
        s->job();
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
