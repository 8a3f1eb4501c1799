// kiln::TransientError: what an error type mixes in to say "a service this request
// needed is unreachable for now" (a database or Redis down, a connection lost, a lock
// or statement timeout). A handler that lets such an error escape gets 503 with
// Retry-After instead of 500, and the log says warning instead of error: the client
// may try again, and nothing is wrong with the request or the code.
// kiln::db::Error (kinds Io and Busy) and kiln::redis::Error (kind Io) mix it in.
#pragma once

namespace kiln {

class TransientError {
public:
    virtual bool transient() const noexcept = 0;

protected:
    ~TransientError() = default;
};

}  // namespace kiln
