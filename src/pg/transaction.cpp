// pg::Transaction and Client::begin: a leased connection (Pool::lease) carrying
// BEGIN, the transaction's statements, then COMMIT or ROLLBACK, in pipeline order.
#include <optional>

#include <kiln/pg.hpp>

#include "pg/op.hpp"
#include "pg/pool.hpp"

namespace kiln::pg {
namespace {

// co_await on the pool's answer to a lease request. A lease granted to a coroutine
// that no longer takes it (cancelled meanwhile) goes straight back.
class LeaseWait {
public:
    explicit LeaseWait(detail::Pool& pool) : pool_(pool), op_(pool.lease()) {}
    LeaseWait(const LeaseWait&) = delete;
    LeaseWait& operator=(const LeaseWait&) = delete;
    ~LeaseWait() {
        op_->wait.reset();
        if (op_->done && op_->lease && !taken_) pool_.release(op_->lease);
        op_->release();
    }
    bool await_ready() const noexcept { return op_->done; }
    bool await_suspend(std::coroutine_handle<> h) { return op_->suspend(h); }
    detail::Lease* await_resume() {
        op_->settle();
        taken_ = true;
        return op_->lease;
    }

private:
    detail::Pool& pool_;
    detail::Op* op_;
    bool taken_ = false;
};

}  // namespace

Task<Transaction> Client::begin() {
    detail::Lease* lease = co_await LeaseWait(*pool_);
    Transaction tx(pool_.get(), lease);
    lease->dirty = true;  // from here on, handing it back rolls back
    co_await tx.exec("BEGIN");
    co_return tx;
}

Transaction::~Transaction() {
    if (!lease_) return;
    lease_->dirty = true;
    pool_->release(lease_);
}

Query Transaction::send(db::Sql sql, Params params) {
    if (!lease_)
        throw db::Error(db::ErrorKind::Misuse, 0, "a statement after the transaction's commit() or rollback()",
                        std::string(sql.text()));
    return pool_->send(*lease_, sql, std::move(params));
}

Task<> Transaction::commit() { return finish("COMMIT"); }

Task<> Transaction::rollback() { return finish("ROLLBACK"); }

Task<> Transaction::finish(db::Sql sql) {
    Query q = send(sql, {});
    // Whatever happens now, the transaction is over for its user; the lease goes
    // back clean only when the server confirmed the end.
    detail::Lease* lease = std::exchange(lease_, nullptr);
    std::optional<Result> r;
    try {
        r.emplace(co_await q);
    } catch (...) {
        lease->dirty = true;
        pool_->release(lease);
        throw;
    }
    lease->dirty = false;
    pool_->release(lease);
    // COMMIT of a transaction that had an error rolls back, and says so in its tag.
    if (sql.text() == "COMMIT" && r->command() == "ROLLBACK")
        throw db::Error(db::ErrorKind::Misuse, 0,
                        "the transaction was rolled back: a statement in it failed, so COMMIT could not apply it",
                        "COMMIT");
}

}  // namespace kiln::pg
