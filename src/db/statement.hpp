// Prepared statements and their per-connection cache. The cache is an LRU keyed by
// the SQL text, bounded by Options::statement_cache; a statement in use by a live
// Result is never evicted, and a second exec() of the same text while the first
// Result lives gets a fresh uncached statement (finalized on release). Belongs to
// its connection's thread, like the connection.
#pragma once
#include <sqlite3.h>

#include <cstddef>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>

#include <kiln/db.hpp>

namespace kiln::db::detail {

class StatementCache;

struct Stmt {
    sqlite3_stmt* handle = nullptr;
    StatementCache* cache = nullptr;
    std::string sql;      // the cache key points here
    bool in_use = false;
    bool cached = true;   // false: a one-off, deleted on release
};

class StatementCache {
public:
    explicit StatementCache(size_t capacity) : capacity_(capacity) {}
    ~StatementCache();
    StatementCache(const StatementCache&) = delete;
    StatementCache& operator=(const StatementCache&) = delete;

    // A statement for `sql`, marked in use. Throws Error if it does not compile, or
    // if the text holds more than one statement.
    Stmt* acquire(sqlite3* db, std::string_view sql);
    // Resets the statement and makes it available again (frees a one-off).
    static void release(Stmt* s) noexcept;
    CacheStats stats() const;
    size_t in_use() const { return in_use_; }

private:
    static sqlite3_stmt* compile(sqlite3* db, std::string_view sql, bool persistent);
    void evict_to_fit();

    size_t capacity_;
    size_t in_use_ = 0;
    std::list<Stmt> lru_;  // front: most recently acquired; nodes never move in memory
    std::unordered_map<std::string_view, std::list<Stmt>::iterator> index_;
    CacheStats stats_;
};

}  // namespace kiln::db::detail
