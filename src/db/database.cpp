#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <system_error>

#include <kiln/db.hpp>

#include "db/connection.hpp"
#include "db/error.hpp"

namespace kiln::db {
namespace detail {
namespace {

// Runs a pragma and returns its first result column as text ("" if none).
std::string pragma(sqlite3* db, const char* sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) throw_sqlite(db, sql);
    int rc = sqlite3_step(st);
    std::string out;
    if (rc == SQLITE_ROW) {
        const unsigned char* t = sqlite3_column_text(st, 0);
        if (t) out = reinterpret_cast<const char*>(t);
    } else if (rc != SQLITE_DONE) {
        int code = sqlite3_extended_errcode(db);
        std::string msg = sqlite3_errmsg(db);
        sqlite3_finalize(st);
        throw_error(code, msg, sql);
    }
    sqlite3_finalize(st);
    return out;
}

}  // namespace

Connection::Connection(const std::filesystem::path& p, const Options& options)
    : path(p), cache(options.statement_cache), owner(std::this_thread::get_id()) {
    bool memory = path == ":memory:";
    if (!memory && path.has_parent_path()) {
        std::error_code ec;
        std::filesystem::create_directories(path.parent_path(), ec);
        if (ec) {
            throw_kiln(ErrorKind::Io, "cannot create the directory " + path.parent_path().string() +
                                          " for database " + path.string() + ": " + ec.message());
        }
    }
    // A new database is its owner's only (SQLite would make it 0644 less the umask):
    // it holds the app's users, their emails and password hashes. Its -wal and -shm
    // files take its mode. An existing file keeps the mode it has.
    if (!memory && !path.string().starts_with("file:")) {  // (a URI is SQLite's to read)
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0) ::close(fd);  // empty: SQLite makes it a database
    }
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
    int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
    try {
        if (rc != SQLITE_OK) {
            int code = db ? sqlite3_extended_errcode(db) : rc;
            throw_error(code, "cannot open database " + path.string() + ": " +
                                  (db ? sqlite3_errmsg(db) : "out of memory"), {});
        }
        sqlite3_extended_result_codes(db, 1);
        // Before any pragma: switching to WAL needs a lock another process may hold.
        sqlite3_busy_timeout(db, static_cast<int>(options.busy_timeout.count()));
        if (!memory) {
            std::string mode = pragma(db, "PRAGMA journal_mode=WAL");
            if (mode != "wal") {
                throw_kiln(ErrorKind::Io, "database " + path.string() +
                                              " could not switch to WAL mode (journal_mode is '" + mode + "')");
            }
        }
        pragma(db, "PRAGMA foreign_keys=ON");
        pragma(db, "PRAGMA synchronous=NORMAL");
    } catch (...) {
        sqlite3_close_v2(db);
        throw;
    }
}

Connection::~Connection() {
    // close_v2: statements the cache still holds are finalized by its destructor,
    // which runs after this body; SQLite closes for real then.
    sqlite3_close_v2(db);
}

void Connection::check_thread() const {
    if (std::this_thread::get_id() == owner) return;
    std::fprintf(stderr,
                 "kiln::db: database %s used from a thread that did not open it; "
                 "give each thread its own connection (db::PerThread)\n",
                 path.c_str());
    std::abort();
}

void Connection::check_transaction() const {
    if (tx_depth > 0 && sqlite3_get_autocommit(db) != 0) throw_rolled_back();
}

void Connection::throw_rolled_back() {
    throw_kiln(ErrorKind::Misuse,
               "SQLite rolled the transaction back after an error (ON CONFLICT ROLLBACK, RAISE(ROLLBACK), a full "
               "disk): nothing of it was kept, and no statement runs until it ends");
}

void Connection::run(std::string_view sql) {
    Stmt* s = cache.acquire(db, sql);
    int rc;
    while ((rc = sqlite3_step(s->handle)) == SQLITE_ROW) {
    }
    if (rc == SQLITE_DONE) {
        StatementCache::release(s);
        return;
    }
    int code = sqlite3_extended_errcode(db);
    std::string msg = sqlite3_errmsg(db);
    StatementCache::release(s);
    throw_error(code, std::move(msg), sql);
}

}  // namespace detail

Database::Database(const std::filesystem::path& path, Options options)
    : conn_(std::make_unique<detail::Connection>(path, options)) {}

Database::~Database() {
    if (!conn_) return;
    if (conn_->cache.in_use() > 0 || conn_->tx_depth > 0) {
        std::fprintf(stderr, "kiln::db: database %s closed while a Result or Transaction still uses it\n",
                     conn_->path.c_str());
        std::abort();
    }
}

Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;

Result Database::prepare(Sql sql, int param_count) {
    conn_->check_thread();
    conn_->check_transaction();
    Result r(conn_->cache.acquire(conn_->db, sql.text()));
    int expected = sqlite3_bind_parameter_count(r.s_->handle);
    if (expected != param_count) {
        detail::throw_kiln(ErrorKind::Misuse, "the SQL has " + std::to_string(expected) + " parameter(s) but " +
                                                  std::to_string(param_count) + " value(s) were given",
                           sql.text());
    }
    return r;
}

void Database::no_rows(Sql sql) { detail::throw_kiln(ErrorKind::NoRows, "the query returned no rows", sql.text()); }

int64_t Database::last_insert_id() const {
    conn_->check_thread();
    return sqlite3_last_insert_rowid(conn_->db);
}

int64_t Database::changes() const {
    conn_->check_thread();
    return sqlite3_changes64(conn_->db);
}

CacheStats Database::cache_stats() const { return conn_->cache.stats(); }

const std::filesystem::path& Database::path() const { return conn_->path; }

}  // namespace kiln::db
