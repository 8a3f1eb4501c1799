// What a coroutine awaits on an event loop, and how a request's pending waits are
// cancelled together.
//
// A Wait is one pending operation (a timer, a database reply, a socket becoming
// ready). Its source calls complete() on the loop thread when the operation ends;
// that resumes the coroutine, on this same thread. A Wait belongs to the AsyncScope
// that was current when it was made: the request whose handler is running. When the
// scope is cancelled (the client went away, the handler's deadline passed, the
// server is stopping), each of its waits is told to stop (on_cancel(), which must
// make sure its source will not complete it) and is then resumed from Loop::defer,
// never inside the canceller's stack; its await then throws kiln::Cancelled.
//
// AsyncScope::current() is a thread-local set while a scope's coroutine runs: the
// framework sets it when it starts a handler, and complete() sets it again around
// every resume, so it follows the coroutine across suspensions.
#pragma once
#include <coroutine>

#include "net/loop.hpp"

namespace kiln::net {

class AsyncScope;

class Wait {
public:
    Wait(const Wait&) = delete;
    Wait& operator=(const Wait&) = delete;

    // The operation ended (or was cancelled): resumes the coroutine. The Wait may
    // be gone when this returns (it usually lives in the coroutine's frame).
    void complete();
    bool cancelled() const { return cancelled_; }
    Loop& loop() const { return *loop_; }

protected:
    // Current loop and scope; throws std::logic_error outside a loop thread.
    explicit Wait(std::coroutine_handle<> h);
    virtual ~Wait();
    // Stop the operation: after this its source must not call complete().
    virtual void on_cancel() = 0;
    // Whether a cancelled wait is resumed at once (to throw). A wait whose operation
    // cannot be stopped, and still uses the coroutine's memory, says false: on_cancel()
    // only marks it, and its source completes it when the operation has ended.
    virtual bool resumes_on_cancel() const { return true; }

private:
    friend class AsyncScope;
    static void resume_cancelled(void* self);
    void unlink();

    std::coroutine_handle<> h_;
    Loop* loop_;
    AsyncScope* scope_;
    Wait* prev_ = nullptr;
    Wait* next_ = nullptr;
    bool linked_ = false;  // in scope_'s list
    bool cancelled_ = false;
};

class AsyncScope {
public:
    AsyncScope() = default;
    AsyncScope(const AsyncScope&) = delete;
    AsyncScope& operator=(const AsyncScope&) = delete;
    ~AsyncScope();

    // Every pending wait is stopped and resumed (deferred) to throw; a wait made
    // later throws at once. Idempotent.
    void cancel();
    bool cancelled() const { return cancelled_; }
    bool idle() const { return head_ == nullptr; }  // no wait pending

    static AsyncScope* current();
    // Makes `scope` current for as long as it lives (null: none).
    class Enter {
    public:
        explicit Enter(AsyncScope* scope);
        ~Enter();
        Enter(const Enter&) = delete;
        Enter& operator=(const Enter&) = delete;
    private:
        AsyncScope* outer_;
    };

private:
    friend class Wait;
    Wait* head_ = nullptr;
    bool cancelled_ = false;
};

}  // namespace kiln::net
