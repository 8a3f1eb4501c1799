#include "pg/op.hpp"

#include <cassert>
#include <utility>

namespace kiln::pg {
namespace detail {

Op::~Op() {
    if (result) PQclear(result);
}

void Op::release() {
    if (--refs == 0) delete this;
}

void Op::succeed(PGresult* r) {
    assert(!done);
    result = r;
    finish();
}

void Op::fail(std::exception_ptr e) {
    assert(!done);
    error = std::move(e);
    finish();
}

void Op::grant(Lease* l) {
    assert(!done);
    lease = l;
    finish();
}

void Op::wake() {
    assert(!done);
    finish();
}

void Op::finish() {
    done = true;
    if (!wait || wait->cancelled()) return;  // nobody waits (yet): await_ready sees done
    hold();
    loop.defer(&Op::resume, this);
}

void Op::resume(void* self) {
    Op* op = static_cast<Op*>(self);
    // Cancelled meanwhile: the scope resumes the coroutine itself (to throw Cancelled).
    if (op->wait && !op->wait->cancelled()) op->wait->complete();
    op->release();
}

void Op::param_values(std::vector<const char*>& out) const {
    out.clear();
    for (const Params::Slot& s : params.slots_) out.push_back(s.null ? nullptr : params.data_.data() + s.offset);
}

bool suspend_on(Op& op, std::coroutine_handle<> h) {
    op.wait.emplace(h);
    return !op.wait->cancelled();  // a cancelled request does not wait: settle() throws
}

void settle(Op& op) {
    bool cancelled = op.wait && op.wait->cancelled();
    op.wait.reset();
    if (cancelled) throw Cancelled();
    if (op.error) std::rethrow_exception(op.error);
}

}  // namespace detail

Query::~Query() {
    if (!op_) return;
    op_->wait.reset();  // a frame destroyed mid-wait: unlinks it from its scope
    op_->release();
}

bool Query::await_ready() const noexcept { return op_->done; }

bool Query::await_suspend(std::coroutine_handle<> h) { return detail::suspend_on(*op_, h); }

Result Query::await_resume() {
    detail::settle(*op_);
    return Result(std::exchange(op_->result, nullptr));
}

}  // namespace kiln::pg
