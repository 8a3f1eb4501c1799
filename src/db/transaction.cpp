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
    int level = conn_->tx_depth + 1;
    if (level == 1) {
        conn_->run(mode == TxMode::Immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
    } else {
        conn_->run("SAVEPOINT " + savepoint(level));
    }
    conn_->tx_depth = level;
    return Transaction(conn_.get(), level);
}

Transaction::Transaction(Transaction&& other) noexcept : conn_(other.conn_), level_(other.level_) {
    other.conn_ = nullptr;
}

Transaction::~Transaction() {
    if (!conn_) return;
    try {
        end(false);
    } catch (const std::exception& e) {
        util::log(util::LogLevel::Error, "kiln::db: rolling back a transaction failed: %s", e.what());
        conn_->tx_depth = level_ - 1;
        conn_ = nullptr;
    }
}

void Transaction::commit() { end(true); }
void Transaction::rollback() { end(false); }

void Transaction::end(bool commit) {
    if (!conn_) detail::throw_kiln(ErrorKind::Misuse, "the transaction has already ended");
    conn_->check_thread();
    if (level_ != conn_->tx_depth) {
        detail::throw_kiln(ErrorKind::Misuse, "a transaction must end after the ones nested in it (ending level " +
                                                  std::to_string(level_) + " while level " +
                                                  std::to_string(conn_->tx_depth) + " is open)");
    }
    // Some errors (disk full, ...) make SQLite roll the whole transaction back on
    // its own; then there is nothing left to roll back.
    bool open = sqlite3_get_autocommit(conn_->db) == 0;
    if (level_ == 1) {
        if (commit || open) conn_->run(commit ? "COMMIT" : "ROLLBACK");
    } else if (open) {
        std::string name = savepoint(level_);
        if (!commit) conn_->run("ROLLBACK TO " + name);
        conn_->run("RELEASE " + name);
    }
    conn_->tx_depth = level_ - 1;
    conn_ = nullptr;
}

}  // namespace kiln::db
