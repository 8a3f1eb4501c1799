// kiln::blocking: work that would block an event loop (SQLite, a file, a heavy
// computation, a library without an asynchronous API) done on kiln's blocking-work
// threads, while the handler's coroutine waits without holding its loop:
//
//     kiln::db::PerThread db("data/app.sqlite");   // each thread its own connection
//     app.get("/posts", [&](kiln::Request&, kiln::Response& res) -> kiln::Task<> {
//         auto posts = co_await kiln::blocking([&] { return Post::recent(db.get(), 20); });
//         kiln::render(res, views::posts::index{.posts = posts});
//     });
//
// The coroutine resumes on its own loop thread with fn's result, or fn's exception
// rethrown. fn may use the coroutine's locals by reference: the coroutine does not
// resume, even when its request is cancelled meanwhile, until fn has returned (a
// thread cannot be interrupted; the await then throws kiln::Cancelled). A request
// cancelled before fn began (when it awaits, or while fn waited for a thread) does not
// run fn at all. A stopping worker does not return from App::run while fn runs, up to
// its drain timeout (timeouts.drain_ms); past it, the process exits without waiting
// (objects main() owns may be in use). The threads (as many as the machine has
// cores, at least 2) are made in each process on first use; when 4,096 jobs are
// already waiting for them, the await throws HttpError(503).
#pragma once
#include <coroutine>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include <kiln/task.hpp>

namespace kiln {

namespace detail {

// co_await: runs job on the blocking threads, resumes when it has run.
class BlockingWait {
public:
    explicit BlockingWait(std::function<void()> job) : job_(std::move(job)) {}
    BlockingWait(const BlockingWait&) = delete;
    BlockingWait& operator=(const BlockingWait&) = delete;
    ~BlockingWait();  // never while the job runs: waits for it (a frame destroyed mid-job)

    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h);
    void await_resume();  // kiln::Cancelled if the request was cancelled meanwhile

private:
    struct State;
    std::function<void()> job_;
    std::shared_ptr<State> state_;
};

template <class R>
Task<R> run_blocking(std::function<R()> fn) {
    std::exception_ptr error;
    if constexpr (std::is_void_v<R>) {
        co_await BlockingWait([&] {
            try {
                fn();
            } catch (...) {
                error = std::current_exception();
            }
        });
        if (error) std::rethrow_exception(error);
    } else {
        std::optional<R> out;
        co_await BlockingWait([&] {
            try {
                out.emplace(fn());
            } catch (...) {
                error = std::current_exception();
            }
        });
        if (error) std::rethrow_exception(error);
        co_return std::move(*out);
    }
}

}  // namespace detail

// fn's type is erased here (a std::function): a coroutine frame holding the caller's
// lambda type would draw GCC's -Wsubobject-linkage in every user's file.
template <class F>
    requires std::invocable<F&>
Task<std::invoke_result_t<F&>> blocking(F fn) {
    return detail::run_blocking<std::invoke_result_t<F&>>(std::function<std::invoke_result_t<F&>()>(std::move(fn)));
}

}  // namespace kiln
