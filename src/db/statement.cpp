#include "db/statement.hpp"

#include "db/error.hpp"

namespace kiln::db::detail {
namespace {

bool only_separators(const char* p, const char* end) {
    for (; p < end; ++p) {
        char c = *p;
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != ';') return false;
    }
    return true;
}

}  // namespace

StatementCache::~StatementCache() {
    for (Stmt& s : lru_) sqlite3_finalize(s.handle);
}

sqlite3_stmt* StatementCache::compile(sqlite3* db, std::string_view sql, bool persistent) {
    sqlite3_stmt* h = nullptr;
    const char* tail = nullptr;
    int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                persistent ? SQLITE_PREPARE_PERSISTENT : 0, &h, &tail);
    if (rc != SQLITE_OK) throw_sqlite(db, sql);
    if (!h) throw_kiln(ErrorKind::Misuse, "the SQL text holds no statement", sql);
    // One statement per exec(): a second one would be silently ignored by SQLite,
    // and stacked statements are what an injected "; DROP ..." relies on.
    if (!only_separators(tail, sql.data() + sql.size())) {
        sqlite3_finalize(h);
        throw_kiln(ErrorKind::Misuse, "exec() runs one statement; the SQL text holds more", sql);
    }
    return h;
}

Stmt* StatementCache::acquire(sqlite3* db, std::string_view sql) {
    auto it = index_.find(sql);
    if (it != index_.end() && !it->second->in_use) {
        lru_.splice(lru_.begin(), lru_, it->second);
        Stmt& s = lru_.front();
        s.in_use = true;
        ++in_use_;
        ++stats_.hits;
        return &s;
    }
    sqlite3_stmt* h = compile(db, sql, it == index_.end() && capacity_ > 0);
    ++stats_.prepares;
    ++in_use_;
    if (it != index_.end() || capacity_ == 0) {  // the cached one is busy in a live Result
        return new Stmt{h, this, std::string(sql), true, false};
    }
    lru_.push_front(Stmt{h, this, std::string(sql), true, true});
    index_.emplace(lru_.front().sql, lru_.begin());
    evict_to_fit();
    return &lru_.front();
}

void StatementCache::evict_to_fit() {
    auto it = lru_.end();
    while (lru_.size() > capacity_ && it != lru_.begin()) {
        --it;
        if (it->in_use) continue;
        index_.erase(it->sql);
        sqlite3_finalize(it->handle);
        it = lru_.erase(it);
        ++stats_.evictions;
    }
}

void StatementCache::release(Stmt* s) noexcept {
    sqlite3_reset(s->handle);  // its error, if any, was reported by the step that failed
    StatementCache* cache = s->cache;
    --cache->in_use_;
    if (!s->cached) {
        sqlite3_finalize(s->handle);
        delete s;
        return;
    }
    s->in_use = false;
    if (cache->lru_.size() > cache->capacity_) cache->evict_to_fit();
}

CacheStats StatementCache::stats() const {
    CacheStats out = stats_;
    out.cached = lru_.size();
    return out;
}

}  // namespace kiln::db::detail
