// db::migrate: numbered SQL files applied once each, in order, each in its own
// transaction. Scripts run statement by statement (not sqlite3_exec) so a failure
// names the file and line of the statement that failed. Foreign keys are off while
// a file runs (SQLite's way for schema changes: rebuilding a table drops the old one,
// which would otherwise delete, by ON DELETE CASCADE, the rows that point at it), and
// checked before its commit: a file that leaves a row pointing nowhere fails.
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
    // SQLite stops reading SQL at a NUL: the rest of the file would be skipped, and the
    // file recorded as applied.
    if (size_t nul = text.find('\0'); nul != text.npos)
        fail(file, "line " + std::to_string(line_at(text, text.data() + nul)) + ": a NUL byte (not SQL text)");
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

// Rows whose foreign key refers to no row.
int64_t dangling_rows(Database& db) { return db.scalar<int64_t>("SELECT count(*) FROM pragma_foreign_key_check"); }

// Fails the migration when it left more such rows than there were before it (a file
// that rebuilt or emptied a table others refer to), naming one. Returns how many
// there are now.
int64_t check_foreign_keys(Database& db, const fs::path& file, int64_t before) {
    const int64_t now = dangling_rows(db);
    if (now <= before) return now;
    auto row = db.query_one<std::string, int64_t, std::string>(
        "SELECT \"table\", coalesce(rowid, 0), parent FROM pragma_foreign_key_check");
    auto& [table, rowid, parent] = *row;
    fail(file, "leaves rows whose foreign key refers to no row, such as " + table + " rowid " +
                   std::to_string(rowid) + " (a reference to " + parent + ")");
}

// Foreign keys off for the life of this object (not inside a transaction: SQLite
// ignores the pragma there), then as they were.
class ForeignKeysOff {
public:
    explicit ForeignKeysOff(Database& db) : db_(db), was_(db.scalar<int64_t>("PRAGMA foreign_keys") != 0) {
        if (was_) db_.exec("PRAGMA foreign_keys = OFF");
    }
    ~ForeignKeysOff() {
        if (!was_) return;
        try {
            db_.exec("PRAGMA foreign_keys = ON");
        } catch (const std::exception&) {  // only inside a transaction, which migrate() never leaves open
        }
    }
    ForeignKeysOff(const ForeignKeysOff&) = delete;
    ForeignKeysOff& operator=(const ForeignKeysOff&) = delete;

private:
    Database& db_;
    bool was_;
};

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
    // After a file this run applied, its count is the next file's before: each check
    // scans every table with a foreign key, once per file rather than twice.
    int64_t dangling = -1;  // not counted yet
    for (const Migration& m : files) {
        if (auto recorded = applied_as(m.version)) {
            check_name(m, *recorded);
            dangling = -1;  // (another process may have applied it since our count)
            continue;
        }
        std::string text = read_file(m.file);
        ForeignKeysOff fk_off(db);
        Transaction tx = db.transaction();
        if (auto recorded = applied_as(m.version)) {  // another process applied it meanwhile
            check_name(m, *recorded);
            dangling = -1;
            continue;
        }
        if (dangling < 0) dangling = dangling_rows(db);
        run_script(conn.db, m.file, text);
        const int64_t after = check_foreign_keys(db, m.file, dangling);
        db.exec("INSERT INTO kiln_migrations(version, name, applied_at) VALUES (?, ?, ?)", m.version, m.name,
                std::chrono::system_clock::now());
        tx.commit();
        dangling = after;
        applied.push_back(m);
    }
    return applied;
}

}  // namespace kiln::db
