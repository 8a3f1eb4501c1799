#include <string>

#include <kiln/db.hpp>

#include "db/connection.hpp"
#include "db/error.hpp"
#include "util/log.hpp"

namespace kiln::db {
namespace {

// Savepoint names come from the nesting depth only.
std::string savepoint(int level) { return "kiln_sp" + std::to_string(level); }

}  // namespace

Transaction Database::transaction(TxMode mode) {
    conn_->check_thread();
    conn_->check_transaction();
    int level = conn_->tx_depth + 1;
    if (level == 1) {
        conn_->run(mode == TxMode::Immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
        ++conn_->tx_serial;
    } else {
        conn_->run("SAVEPOINT " + savepoint(level));
    }
    conn_->tx_depth = level;
    return Transaction(conn_.get(), level, conn_->tx_serial);
}

Transaction::Transaction(Transaction&& other) noexcept
    : conn_(other.conn_), level_(other.level_), serial_(other.serial_) {
    other.conn_ = nullptr;
}

Transaction::~Transaction() {
    if (!conn_) return;
    if (stale()) {  // gone with the transaction it was part of
        conn_ = nullptr;
        return;
    }
    try {
        end(false);
    } catch (const std::exception& e) {
        // Out of order (an outer level going first: two coroutines interleaved on one
        // connection), or the rollback failed. Left as it is, the transaction would stay
        // open with no one to end it, holding the write lock and every later write.
        util::log(util::LogLevel::Error, "kiln::db: %s; the whole transaction is rolled back", e.what());
        abandon();
    }
}

void Transaction::commit() { end(true); }
void Transaction::rollback() { end(false); }

bool Transaction::stale() const { return serial_ != conn_->tx_serial || level_ > conn_->tx_depth; }

void Transaction::abandon() {
    if (sqlite3_get_autocommit(conn_->db) == 0) {
        try {
            conn_->run("ROLLBACK");
        } catch (const std::exception& e) {
            util::log(util::LogLevel::Error, "kiln::db: rolling back a transaction failed: %s", e.what());
        }
    }
    conn_->tx_depth = 0;
    ++conn_->tx_serial;  // every Transaction of it is stale now
    conn_ = nullptr;
}

void Transaction::end(bool commit) {
    if (!conn_) detail::throw_kiln(ErrorKind::Misuse, "the transaction has already ended");
    conn_->check_thread();
    if (stale()) {
        conn_ = nullptr;
        detail::throw_kiln(ErrorKind::Misuse,
                           "the transaction was rolled back already, with the one it was part of (a transaction "
                           "ended out of order)");
    }
    if (level_ != conn_->tx_depth) {
        detail::throw_kiln(ErrorKind::Misuse, "a transaction must end after the ones nested in it (ending level " +
                                                  std::to_string(level_) + " while level " +
                                                  std::to_string(conn_->tx_depth) + " is open)");
    }
    // Some errors (disk full, ON CONFLICT ROLLBACK, ...) make SQLite roll the whole
    // transaction back on its own: nothing is left to roll back, and nothing to commit.
    if (sqlite3_get_autocommit(conn_->db) != 0) {
        conn_->tx_depth = 0;
        ++conn_->tx_serial;
        conn_ = nullptr;
        if (commit) detail::Connection::throw_rolled_back();
        return;
    }
    if (level_ == 1) {
        conn_->run(commit ? "COMMIT" : "ROLLBACK");
    } else {
        std::string name = savepoint(level_);
        if (!commit) conn_->run("ROLLBACK TO " + name);
        conn_->run("RELEASE " + name);
    }
    conn_->tx_depth = level_ - 1;
    conn_ = nullptr;
}

}  // namespace kiln::db
