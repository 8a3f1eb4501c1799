// A coroutine started at once and owned by nobody: its frame is freed when it ends
// (at the final suspend). What runs in it must catch every exception (an escaping one
// terminates): a waiting request's handler chain, a WebSocket's coroutine.
#pragma once
#include <coroutine>
#include <exception>

namespace kiln::app {

struct Detached {
    struct promise_type {
        Detached get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); }
    };
};

}  // namespace kiln::app
