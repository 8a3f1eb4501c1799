// One query on its way: what a pg::Query (the coroutine's side) and the connection
// carrying it (the wire's side) share. Reference-counted, so either side may go
// first: a coroutine cancelled or destroyed mid-query leaves the Op to the
// connection, which drops the answer when it comes (a pipeline cannot skip a reply);
// a connection that dies leaves it failed for the Query to read. Loop thread only.
#pragma once
#include <libpq-fe.h>

#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <kiln/pg.hpp>

#include "net/async.hpp"

namespace kiln::pg::detail {

struct Lease;
struct Op;

// The coroutine awaiting an Op. Cancelling it only marks it: the Op's deferred
// resume checks cancelled() and leaves it to the scope's own resume.
class QueryWait final : public net::Wait {
public:
    explicit QueryWait(std::coroutine_handle<> h) : net::Wait(h) {}
    ~QueryWait() override = default;

private:
    void on_cancel() override {}
};

struct Op {
    explicit Op(net::Loop& l) : loop(l) {}
    Op(const Op&) = delete;
    Op& operator=(const Op&) = delete;

    net::Loop& loop;
    int refs = 1;  // the Query, plus the connection while it carries the Op
    Params params;
    PGresult* result = nullptr;  // owned until await_resume takes it
    std::exception_ptr error;
    bool done = false;
    std::optional<QueryWait> wait;  // while a coroutine is suspended on it
    Lease* lease = nullptr;         // a lease request: what it was granted

    void hold() { ++refs; }
    void release();  // deletes at zero
    // The answer: rows (ownership of r passes) or an error. Once. The coroutine
    // resumes from Loop::defer, never inside the connection's stack.
    void succeed(PGresult* r);
    void fail(std::exception_ptr e);
    void grant(Lease* l);  // a lease request's answer
    void wake();           // an answer kept elsewhere (a listener's queue)

    // libpq's arrays for the parameters (pointers into params); valid until params change.
    void param_values(std::vector<const char*>& out) const;

private:
    ~Op();
    void finish();
    static void resume(void* self);
};

// The awaiting side of an Op, shared by pg::Query and a transaction's wait for a
// connection: suspend() parks the coroutine (false: the request was cancelled,
// do not wait); settle() ends the wait, throwing kiln::Cancelled or the Op's error.
bool suspend_on(Op& op, std::coroutine_handle<> h);
void settle(Op& op);

}  // namespace kiln::pg::detail
