// One Redis command on its way: a net::Pending (either side may go first) that
// carries the reply back. Loop thread only.
#pragma once
#include <kiln/redis.hpp>

#include "net/pending.hpp"

namespace kiln::redis::detail {

struct Op final : net::Pending {
    explicit Op(net::Loop& l) : net::Pending(l) {}
    Reply reply;

    void succeed(Reply r) {
        reply = std::move(r);
        finish();
    }

private:
    ~Op() override = default;
};

// Error(Io) as an exception_ptr, for Pending::fail.
std::exception_ptr io_error(const std::string& message);

}  // namespace kiln::redis::detail
