// One answer a coroutine awaits from a connection that serves many (a database or
// Redis reply, a pooled connection granted, a message queued): what the awaiting
// side and the answering side share. Reference-counted, so either may go first: a
// coroutine cancelled or destroyed mid-wait leaves the Pending to its source, which
// drops the answer when it comes (a pipeline cannot skip a reply); a source that
// fails leaves it failed for the awaiting side to read. Loop thread only.
//
// A client's own operation type derives from it and adds what the answer carries.
#pragma once
#include <coroutine>
#include <exception>
#include <optional>

#include "net/async.hpp"

namespace kiln::net {

// The coroutine awaiting a Pending. Cancelling it only marks it: the Pending's
// deferred resume checks cancelled() and leaves it to the scope's own resume.
class PendingWait final : public Wait {
public:
    explicit PendingWait(std::coroutine_handle<> h) : Wait(h) {}
    ~PendingWait() override = default;

private:
    void on_cancel() override {}
};

class Pending {
public:
    explicit Pending(Loop& l) : loop(l) {}
    Pending(const Pending&) = delete;
    Pending& operator=(const Pending&) = delete;

    Loop& loop;
    int refs = 1;  // the awaiting side, plus the source while it carries it
    std::exception_ptr error;
    bool done = false;
    std::optional<PendingWait> wait;  // while a coroutine is suspended on it

    void hold() { ++refs; }
    void release();  // deletes at zero
    void fail(std::exception_ptr e);  // once
    // The answer is in place (in the derived object, or kept elsewhere, such as a
    // listener's queue). Once. The coroutine resumes from Loop::defer, never inside
    // the source's stack.
    void finish();

    // The awaiting side: suspend() parks the coroutine (false: the request was
    // cancelled, do not wait); settle() ends the wait, throwing kiln::Cancelled or
    // the error.
    bool suspend(std::coroutine_handle<> h);
    void settle();
    // A frame destroyed mid-wait: unlinks it from its scope, drops its reference.
    void abandon();

protected:
    virtual ~Pending() = default;

private:
    static void resume(void* self);
};

}  // namespace kiln::net
