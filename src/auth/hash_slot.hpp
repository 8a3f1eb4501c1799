// How many Argon2id hashes run at once in this process. Each holds 64 MiB while it
// runs; a flood of log-ins (each costs one, a decoy for an unknown account too) must
// not run as many at once as the blocking pool has threads in every worker.
#pragma once

#include <kiln/app.hpp>  // HttpError

namespace kiln::auth {

// What a hash asked for past kMaxHashing throws at once: a 503 (with Retry-After).
class HashingBusy : public HttpError {
public:
    HashingBusy() : HttpError(503, "Service Unavailable: too many passwords being checked; try again") {}
};

// One of the kMaxHashing slots, held while a hash runs.
class HashSlot {
public:
    HashSlot();  // throws HashingBusy when all are taken
    ~HashSlot();
    HashSlot(const HashSlot&) = delete;
    HashSlot& operator=(const HashSlot&) = delete;
};

// Test hook: called each time a slot is asked for, before it is counted (a test takes
// the last slot there, to refuse one chosen hash of a log-in). nullptr, the default:
// none. Set it while no hash runs.
void set_slot_request_hook(void (*hook)());

}  // namespace kiln::auth
