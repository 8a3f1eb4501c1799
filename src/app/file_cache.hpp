// kiln::app::FileCache: the contents of small static files, kept in memory per
// process, keyed by path relative to the served root. Bounded by a total byte
// budget with least-recently-used eviction. Entries are immutable and handed out
// as shared_ptr, so a reader keeps its bytes even if the entry is replaced or
// evicted meanwhile. Thread-safe: one mutex guards the index and the LRU list,
// held only for the look-up itself, never while copying a body or calling the OS.
// Whether an entry is still current is the caller's question (FileStamp).
#pragma once
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kiln::app {

// What identifies one version of a file on disk. A change of any field means the
// cached bytes may be stale; ctime also moves on chmod/chown, so a file made
// unreadable stops being served from memory too.
struct FileStamp {
    uint64_t dev = 0;
    uint64_t ino = 0;
    uint64_t size = 0;
    int64_t mtime_ns = 0;
    int64_t ctime_ns = 0;
    bool operator==(const FileStamp&) const = default;
};
FileStamp stamp_of(const struct stat& st);

struct CachedFile {
    FileStamp stamp;
    std::string body;
};

class FileCache {
public:
    // Files up to max_file bytes are admitted; their bodies total at most max_total.
    FileCache(size_t max_file, size_t max_total);

    bool admits(uint64_t size) const { return size <= max_file_ && size <= max_total_ && max_total_ > 0; }

    // The entry for `key` (marked most recently used), or null.
    std::shared_ptr<const CachedFile> find(std::string_view key);

    // Adds or replaces the entry for `key`, then evicts least recently used entries
    // until the total fits. An entry that admits() refuses is not stored.
    void insert(std::string_view key, std::shared_ptr<const CachedFile> file);

    // Removes `key` if its entry is still `stale` (a newer insert from another
    // thread is kept).
    void erase(std::string_view key, const CachedFile* stale);

    size_t bytes() const;
    size_t entries() const;

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    using Lru = std::list<std::pair<std::string, std::shared_ptr<const CachedFile>>>;
    void drop(Lru::iterator it);  // REQUIRES: mu_ held

    const size_t max_file_;
    const size_t max_total_;
    mutable std::mutex mu_;
    Lru lru_;  // front: most recently used; guarded by mu_
    // Keys view the strings in lru_. Guarded by mu_.
    std::unordered_map<std::string_view, Lru::iterator, Hash, std::equal_to<>> index_;
    size_t bytes_ = 0;  // guarded by mu_
};

}  // namespace kiln::app
