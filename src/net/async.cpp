#include "net/async.hpp"

#include <cassert>
#include <stdexcept>

namespace kiln::net {
namespace {
thread_local AsyncScope* current_scope = nullptr;
}  // namespace

AsyncScope* AsyncScope::current() { return current_scope; }

AsyncScope::Enter::Enter(AsyncScope* scope) : outer_(current_scope) { current_scope = scope; }
AsyncScope::Enter::~Enter() { current_scope = outer_; }

AsyncScope::~AsyncScope() {
    // A wait outliving its scope would resume into a request that is gone.
    assert(head_ == nullptr);
    while (head_) head_->unlink();
}

void AsyncScope::cancel() {
    cancelled_ = true;
    while (Wait* w = head_) {
        w->unlink();
        w->cancelled_ = true;
        w->on_cancel();
        if (w->resumes_on_cancel()) w->loop_->defer(&Wait::resume_cancelled, w);
    }
}

Wait::Wait(std::coroutine_handle<> h) : h_(h), loop_(Loop::current()), scope_(AsyncScope::current()) {
    if (!loop_) throw std::logic_error("kiln: a coroutine awaited a loop operation outside an event loop thread");
    if (!scope_) return;
    if (scope_->cancelled_) {  // the request is gone already: the await fails at once
        cancelled_ = true;
        scope_ = nullptr;
        return;
    }
    next_ = scope_->head_;
    if (next_) next_->prev_ = this;
    scope_->head_ = this;
    linked_ = true;
}

Wait::~Wait() { unlink(); }

void Wait::unlink() {  // scope_ stays: complete() makes it current again around the resume
    if (!linked_) return;
    if (prev_) prev_->next_ = next_;
    else scope_->head_ = next_;
    if (next_) next_->prev_ = prev_;
    prev_ = next_ = nullptr;
    linked_ = false;
}

void Wait::resume_cancelled(void* self) { static_cast<Wait*>(self)->complete(); }

void Wait::complete() {
    assert(loop_->in_loop_thread());
    unlink();
    AsyncScope* scope = scope_;
    std::coroutine_handle<> h = h_;
    scope_ = nullptr;
    AsyncScope::Enter enter(scope);
    h.resume();  // `this` may be destroyed from here on
}

}  // namespace kiln::net
