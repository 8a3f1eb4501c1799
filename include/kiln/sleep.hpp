// co_await kiln::sleep(duration), or kiln::sleep(ms) with a plain number of
// milliseconds: suspends the coroutine for about that long without blocking its
// event loop, and resumes it on the same loop thread. The loop's clock is coarse (a
// few milliseconds either way). Only on a loop thread (a handler, or what it
// calls); elsewhere it throws std::logic_error. Throws kiln::Cancelled if the
// request it serves is cancelled meanwhile. A zero duration still lets the loop
// serve others first (a yield).
#pragma once
#include <chrono>
#include <concepts>
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
// co_await kiln::sleep(ms): a plain number is milliseconds.
template <std::integral Int>
Sleep sleep(Int ms) {
    return Sleep(std::chrono::milliseconds(ms));
}

}  // namespace kiln
