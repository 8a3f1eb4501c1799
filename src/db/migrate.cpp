// db::migrate: numbered SQL files applied once each, in order, each in its own
// transaction. Scripts run statement by statement (not sqlite3_exec) so a failure
// names the file and line of the statement that failed.
#include <algorithm>
#include <chrono>
#include <string>

#include <kiln/db.hpp>

#include "db/connection.hpp"
#include "db/error.hpp"
#include "db/migration_files.hpp"

namespace kiln::db {
namespace {

namespace fs = std::filesystem;
using detail::check_name;
using detail::fail;
using detail::list_files;
using detail::read_file;

int line_at(const std::string& text, const char* p) {
    return 1 + static_cast<int>(std::count(text.data(), p, '\n'));
}

// Denies BEGIN/COMMIT/ROLLBACK at prepare time: a script that ended kiln's
// transaction would leave a half-applied migration recorded or not at random.
int deny_transactions(void* denied, int action, const char*, const char*, const char*, const char*) {
    if (action != SQLITE_TRANSACTION) return SQLITE_OK;
    *static_cast<bool*>(denied) = true;
    return SQLITE_DENY;
}

void run_script(sqlite3* db, const fs::path& file, const std::string& text) {
    bool denied = false;
    sqlite3_set_authorizer(db, deny_transactions, &denied);
    struct Restore {
        sqlite3* db;
        ~Restore() { sqlite3_set_authorizer(db, nullptr, nullptr); }
    } restore{db};

    const char* p = text.data();
    const char* end = text.data() + text.size();
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
        sqlite3_stmt* st = nullptr;
        const char* tail = nullptr;
        if (sqlite3_prepare_v2(db, p, static_cast<int>(end - p), &st, &tail) != SQLITE_OK) {
            int offset = sqlite3_error_offset(db);
            std::string msg = denied ? "BEGIN, COMMIT and ROLLBACK are not allowed in a migration (each file "
                                       "already runs in its own transaction)"
                                     : sqlite3_errmsg(db);
            int line = line_at(text, offset >= 0 ? p + offset : p);
            fail(file, "line " + std::to_string(line) + ": " + msg, sqlite3_extended_errcode(db));
        }
        if (!st) break;  // only comments or whitespace left
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        }
        if (rc != SQLITE_DONE) {
            int code = sqlite3_extended_errcode(db);
            std::string msg = sqlite3_errmsg(db);
            std::string sql(p, tail);
            sqlite3_finalize(st);
            fail(file, "line " + std::to_string(line_at(text, p)) + ": " + msg, code, sql);
        }
        sqlite3_finalize(st);
        p = tail;
    }
}

}  // namespace

std::vector<Migration> migrate(Database& db, const fs::path& dir) {
    detail::Connection& conn = *db.conn_;
    conn.check_thread();
    std::vector<Migration> files = list_files(dir);
    db.exec(
        "CREATE TABLE IF NOT EXISTS kiln_migrations("
        "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");

    // Which name each applied version had; re-checked inside each transaction,
    // since another process may be migrating the same file at the same time.
    auto applied_as = [&](int64_t version) {
        return db.query_one<std::string>("SELECT name FROM kiln_migrations WHERE version = ?", version);
    };
    std::vector<Migration> applied;
    for (const Migration& m : files) {
        if (auto recorded = applied_as(m.version)) {
            check_name(m, *recorded);
            continue;
        }
        std::string text = read_file(m.file);
        Transaction tx = db.transaction();
        if (auto recorded = applied_as(m.version)) {
            check_name(m, *recorded);
            continue;
        }
        run_script(conn.db, m.file, text);
        db.exec("INSERT INTO kiln_migrations(version, name, applied_at) VALUES (?, ?, ?)", m.version, m.name,
                std::chrono::system_clock::now());
        tx.commit();
        applied.push_back(m);
    }
    return applied;
}

}  // namespace kiln::db
