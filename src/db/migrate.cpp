// db::migrate: numbered SQL files applied once each, in order, each in its own
// transaction. Scripts run statement by statement (not sqlite3_exec) so a failure
// names the file and line of the statement that failed.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <kiln/db.hpp>

#include "db/connection.hpp"
#include "db/error.hpp"

namespace kiln::db {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& file, std::string message, int code = 0, std::string sql = {}) {
    throw MigrationError(ErrorKind::Migration, code, "migration " + file.string() + ": " + message, std::move(sql),
                         file);
}

bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// "001_create_posts.sql" → {1, "create_posts"}; false for anything else.
bool parse_name(const std::string& file, int64_t* version, std::string* name) {
    size_t digits = 0;
    while (digits < file.size() && file[digits] >= '0' && file[digits] <= '9') ++digits;
    if (digits == 0 || digits > 18 || digits >= file.size() || file[digits] != '_') return false;
    std::string rest = file.substr(digits + 1, file.size() - digits - 1 - 4);  // without ".sql"
    if (rest.empty() || !std::all_of(rest.begin(), rest.end(), name_char)) return false;
    *version = std::stoll(file.substr(0, digits));
    *name = rest;
    return true;
}

std::vector<Migration> list_files(const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) fail(dir, "no such directory");
    std::vector<Migration> out;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        std::string file = entry.path().filename().string();
        if (file.starts_with(".") || entry.path().extension() != ".sql") continue;
        if (!entry.is_regular_file(ec)) continue;
        Migration m{0, {}, entry.path()};
        if (!parse_name(file, &m.version, &m.name)) {
            fail(entry.path(), "bad file name: expected NNN_name.sql (digits, '_', then letters, digits, '_' or '-')");
        }
        out.push_back(std::move(m));
    }
    if (ec) fail(dir, "cannot list the directory: " + ec.message());
    std::sort(out.begin(), out.end(), [](const Migration& a, const Migration& b) {
        return a.version != b.version ? a.version < b.version : a.file < b.file;
    });
    for (size_t i = 1; i < out.size(); ++i) {
        if (out[i].version == out[i - 1].version) {
            fail(out[i].file, "duplicate migration number " + std::to_string(out[i].version) + " (also " +
                                  out[i - 1].file.string() + ")");
        }
    }
    return out;
}

std::string read_file(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) fail(file, "cannot read the file");
    return ss.str();
}

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
    auto check_name = [](const Migration& m, const std::string& recorded) {
        if (recorded != m.name) {
            fail(m.file, "version " + std::to_string(m.version) + " was applied as '" + recorded +
                             "'; a migration's number and name must not change once applied");
        }
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
