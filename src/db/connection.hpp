// One open SQLite connection: the handle, its statement cache, the thread that owns
// it and the depth of open transactions. Database, Transaction, Result and migrate()
// share it; all run on the owning thread (check_thread() aborts otherwise, because
// two threads on one connection would corrupt the cache and transaction state).
#pragma once
#include <sqlite3.h>

#include <filesystem>
#include <string_view>
#include <thread>

#include <kiln/db.hpp>

#include "db/statement.hpp"

namespace kiln::db::detail {

struct Connection {
    Connection(const std::filesystem::path& path, const Options& options);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    void check_thread() const;
    // Throws Error(Misuse) when a Transaction is open here but SQLite rolled it back
    // on its own: a statement now would run outside it.
    void check_transaction() const;
    [[noreturn]] static void throw_rolled_back();
    // Runs a statement kiln wrote itself (no parameters, no rows wanted).
    void run(std::string_view sql);

    sqlite3* db = nullptr;
    std::filesystem::path path;
    StatementCache cache;
    std::thread::id owner;
    int tx_depth = 0;
    uint64_t tx_serial = 0;  // bumped at each BEGIN and when a transaction is abandoned
};

}  // namespace kiln::db::detail
