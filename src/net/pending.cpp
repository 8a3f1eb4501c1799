#include "net/pending.hpp"

#include <cassert>
#include <utility>

#include <kiln/task.hpp>

namespace kiln::net {

void Pending::release() {
    if (--refs == 0) delete this;
}

void Pending::fail(std::exception_ptr e) {
    assert(!done);
    error = std::move(e);
    finish();
}

void Pending::finish() {
    assert(!done);
    done = true;
    if (!wait || wait->cancelled()) return;  // nobody waits (yet): await_ready sees done
    hold();
    loop.defer(&Pending::resume, this);
}

void Pending::resume(void* self) {
    auto* p = static_cast<Pending*>(self);
    // Cancelled meanwhile: the scope resumes the coroutine itself (to throw Cancelled).
    if (p->wait && !p->wait->cancelled()) p->wait->complete();
    p->release();
}

bool Pending::suspend(std::coroutine_handle<> h) {
    wait.emplace(h);
    return !wait->cancelled();  // a cancelled request does not wait: settle() throws
}

void Pending::settle() {
    bool cancelled = wait && wait->cancelled();
    wait.reset();
    if (cancelled) throw Cancelled();
    if (error) std::rethrow_exception(error);
}

void Pending::abandon() {
    wait.reset();
    release();
}

}  // namespace kiln::net
