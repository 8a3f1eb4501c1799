#include "app/file_cache.hpp"

#include <utility>

namespace kiln::app {

FileStamp stamp_of(const struct stat& st) {
    return FileStamp{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                     static_cast<uint64_t>(st.st_size),
                     static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                     static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec};
}

FileCache::FileCache(size_t max_file, size_t max_total) : max_file_(max_file), max_total_(max_total) {}

std::shared_ptr<const CachedFile> FileCache::find(std::string_view key) {
    std::lock_guard lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);  // iterators stay valid
    return it->second->second;
}

void FileCache::drop(Lru::iterator it) {
    bytes_ -= it->second->body.size();
    index_.erase(std::string_view(it->first));
    lru_.erase(it);
}

void FileCache::insert(std::string_view key, std::shared_ptr<const CachedFile> file) {
    if (!file || !admits(file->body.size())) return;
    std::lock_guard lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) drop(it->second);
    bytes_ += file->body.size();
    lru_.emplace_front(std::string(key), std::move(file));
    index_.emplace(std::string_view(lru_.front().first), lru_.begin());
    while (bytes_ > max_total_ && lru_.size() > 1) drop(std::prev(lru_.end()));
}

void FileCache::erase(std::string_view key, const CachedFile* stale) {
    std::lock_guard lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end() && it->second->second.get() == stale) drop(it->second);
}

size_t FileCache::bytes() const {
    std::lock_guard lock(mu_);
    return bytes_;
}

size_t FileCache::entries() const {
    std::lock_guard lock(mu_);
    return lru_.size();
}

}  // namespace kiln::app
