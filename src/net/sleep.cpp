#include <kiln/sleep.hpp>

#include "net/async.hpp"
#include "net/deadline_heap.hpp"

namespace kiln {
namespace detail {

class SleepWait final : public net::Wait {
public:
    SleepWait(std::coroutine_handle<> h, std::chrono::milliseconds d) : net::Wait(h) {
        if (cancelled()) return;
        deadline_.owner = this;
        deadline_.fire = [](net::Deadline* dl) { static_cast<SleepWait*>(dl->owner)->complete(); };
        uint64_t ms = d.count() > 0 ? static_cast<uint64_t>(d.count()) : 0;
        loop().deadlines().arm(deadline_, loop().now_ms() + ms);
    }
    ~SleepWait() override { loop().deadlines().disarm(deadline_); }

private:
    void on_cancel() override { loop().deadlines().disarm(deadline_); }
    net::Deadline deadline_;
};

}  // namespace detail

Sleep::Sleep(std::chrono::milliseconds duration) : duration_(duration) {}
Sleep::Sleep(Sleep&&) noexcept = default;
Sleep::~Sleep() = default;

bool Sleep::await_suspend(std::coroutine_handle<> h) {
    wait_ = std::make_unique<detail::SleepWait>(h, duration_);
    return !wait_->cancelled();  // a cancelled request does not wait: await_resume throws
}

void Sleep::await_resume() {
    bool cancelled = wait_ && wait_->cancelled();
    wait_.reset();
    if (cancelled) throw Cancelled();
}

}  // namespace kiln
