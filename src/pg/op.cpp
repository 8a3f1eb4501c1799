#include "pg/op.hpp"

#include <utility>

namespace kiln::pg {
namespace detail {

Op::~Op() {
    if (result) PQclear(result);
}

void Op::param_values(std::vector<const char*>& out) const {
    out.clear();
    for (const Params::Slot& s : params.slots_) out.push_back(s.null ? nullptr : params.data_.data() + s.offset);
}

}  // namespace detail

Query::~Query() {
    if (op_) op_->abandon();
}

bool Query::await_ready() const noexcept { return op_->done; }

bool Query::await_suspend(std::coroutine_handle<> h) { return op_->suspend(h); }

Result Query::await_resume() {
    op_->settle();
    return Result(std::exchange(op_->result, nullptr));
}

}  // namespace kiln::pg
