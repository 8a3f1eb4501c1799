// One query on its way: a net::Pending (see there: either side may go first) that
// carries the query's parameters out and its rows back. Loop thread only.
#pragma once
#include <libpq-fe.h>

#include <vector>

#include <kiln/pg.hpp>

#include "net/pending.hpp"

namespace kiln::pg::detail {

struct Lease;

struct Op final : net::Pending {
    explicit Op(net::Loop& l) : net::Pending(l) {}

    Params params;
    PGresult* result = nullptr;  // owned until await_resume takes it
    Lease* lease = nullptr;      // a lease request: what it was granted
    bool replanned = false;      // sent again once after its cached plan went stale

    // The answer: rows (ownership of r passes). Once.
    void succeed(PGresult* r) {
        result = r;
        finish();
    }
    void grant(Lease* l) {  // a lease request's answer
        lease = l;
        finish();
    }
    // libpq's arrays for the parameters (pointers into params); valid until params change.
    void param_values(std::vector<const char*>& out) const;

private:
    ~Op() override;
};

}  // namespace kiln::pg::detail
