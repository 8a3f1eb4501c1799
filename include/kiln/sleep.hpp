// co_await kiln::sleep(duration): suspends the coroutine for at least `duration`
// without blocking its event loop, and resumes it on the same loop thread. Only
// on a loop thread (a handler, or what it calls); elsewhere it throws
// std::logic_error. Throws kiln::Cancelled if the request it serves is cancelled
// meanwhile. A zero duration still lets the loop serve others first (a yield).
// Timer resolution is the loop's clock, a few milliseconds.
#pragma once
#include <chrono>
#include <coroutine>
#include <memory>

#include <kiln/task.hpp>

namespace kiln {

namespace detail {
class SleepWait;
}

class [[nodiscard]] Sleep {
public:
    explicit Sleep(std::chrono::milliseconds duration);
    Sleep(Sleep&&) noexcept;
    ~Sleep();

    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h);
    void await_resume();

private:
    std::chrono::milliseconds duration_;
    std::unique_ptr<detail::SleepWait> wait_;
};

template <class Rep, class Period>
Sleep sleep(std::chrono::duration<Rep, Period> d) {
    return Sleep(std::chrono::ceil<std::chrono::milliseconds>(d));
}

}  // namespace kiln
