// kiln::Task<T>: a coroutine a handler (or a middleware, or any code it calls)
// returns when it has to wait without blocking its event loop:
//
//   app.get("/slow", [](kiln::Request&, kiln::Response& res) -> kiln::Task<> {
//       co_await kiln::sleep(std::chrono::milliseconds(20));
//       res.text("done\n");
//   });
//
// A Task is lazy: it starts when it is awaited (or when the framework starts a
// handler's), and resumes whoever awaited it when it ends, with its value or its
// exception. It owns its coroutine: destroying a Task that has not finished is
// only allowed before it started. Every operation kiln offers to await (timers,
// database and network clients) completes on the loop thread that started it, so a
// handler always resumes on its own loop: nothing in it needs a lock.
#pragma once
#include <coroutine>
#include <cstddef>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace kiln {

template <class T = void>
class [[nodiscard]] Task;

namespace detail {

// Coroutine frames come from per-thread free lists by size (src/net/frames.cpp).
void* frame_alloc(std::size_t bytes);
void frame_free(void* frame, std::size_t bytes) noexcept;

struct TaskPromiseBase {
    std::coroutine_handle<> continuation = std::noop_coroutine();
    std::exception_ptr error;

    static void* operator new(std::size_t bytes) { return frame_alloc(bytes); }
    static void operator delete(void* frame, std::size_t bytes) noexcept { frame_free(frame, bytes); }

    std::suspend_always initial_suspend() noexcept { return {}; }
    struct FinalAwaiter {
        bool await_ready() noexcept { return false; }
        template <class Promise>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> h) noexcept {
            return h.promise().continuation;  // symmetric transfer: no stack growth on long chains
        }
        void await_resume() noexcept {}
    };
    FinalAwaiter final_suspend() noexcept { return {}; }
    void unhandled_exception() noexcept { error = std::current_exception(); }
};

template <class T>
struct TaskPromise : TaskPromiseBase {
    std::optional<T> value;
    Task<T> get_return_object() noexcept;
    template <class U>
        requires std::is_convertible_v<U&&, T>
    void return_value(U&& v) {
        value.emplace(std::forward<U>(v));
    }
    T result() {
        if (error) std::rethrow_exception(error);
        return std::move(*value);
    }
};

template <>
struct TaskPromise<void> : TaskPromiseBase {
    Task<void> get_return_object() noexcept;
    void return_void() noexcept {}
    void result() {
        if (error) std::rethrow_exception(error);
    }
};

}  // namespace detail

template <class T>
class [[nodiscard]] Task {
public:
    using promise_type = detail::TaskPromise<T>;

    Task() = default;
    Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})), started_(std::exchange(o.started_, false)) {}
    Task& operator=(Task&& o) noexcept {
        if (this != &o) {
            if (h_) h_.destroy();
            h_ = std::exchange(o.h_, {});
            started_ = std::exchange(o.started_, false);
        }
        return *this;
    }
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;
    ~Task() {
        if (h_) h_.destroy();
    }

    bool valid() const noexcept { return static_cast<bool>(h_); }
    bool done() const noexcept { return h_ && h_.done(); }

    // Awaiting: starts the task (or, if start() ran it already, waits for its end).
    bool await_ready() const noexcept { return !h_ || h_.done(); }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
        h_.promise().continuation = awaiting;
        return started_ ? std::noop_coroutine() : std::coroutine_handle<>(h_);
    }
    T await_resume() { return h_.promise().result(); }

    // Runs the task now, up to its first suspension (or its end); a later co_await
    // waits for the rest. For the framework, which starts a handler's Task this way.
    void start() {
        started_ = true;
        h_.resume();
    }
    // The value (or the exception) of a task that is done().
    T result() { return h_.promise().result(); }

private:
    friend struct detail::TaskPromise<T>;
    explicit Task(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
    std::coroutine_handle<promise_type> h_;
    bool started_ = false;
};

namespace detail {

template <class T>
Task<T> TaskPromise<T>::get_return_object() noexcept {
    return Task<T>(std::coroutine_handle<TaskPromise<T>>::from_promise(*this));
}

inline Task<void> TaskPromise<void>::get_return_object() noexcept {
    return Task<void>(std::coroutine_handle<TaskPromise<void>>::from_promise(*this));
}

// What a callable returns when called with Args...: Task<...> or not.
template <class T>
struct IsTask : std::false_type {};
template <class T>
struct IsTask<Task<T>> : std::true_type {};

}  // namespace detail

// Thrown from a co_await when the request it serves is gone (the client closed the
// connection, the handler's deadline passed, or the server is stopping). A handler
// need not catch it: its response is dropped in any case.
class Cancelled : public std::exception {
public:
    const char* what() const noexcept override { return "kiln: the request was cancelled"; }
};

}  // namespace kiln
