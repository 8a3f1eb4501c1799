// Byte buffers for connections, and the per-loop pool that recycles their memory.
// A Buffer holds [start, end) readable bytes in one malloc'd block; it owns no
// memory while empty-and-released, which is how an idle keep-alive connection
// stays small. Growing or compacting moves the bytes: views into a buffer are
// invalid after ensure_writable(). Not thread-safe: a buffer and its pool belong
// to one event loop.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace kiln::net {

class BufferPool {
public:
    static constexpr size_t kBlockSize = 16 * 1024;
    explicit BufferPool(size_t max_free_blocks = 256) : max_free_(max_free_blocks) {}
    ~BufferPool();
    BufferPool(const BufferPool&) = delete;
    BufferPool& operator=(const BufferPool&) = delete;

    char* acquire();            // a kBlockSize block
    void release(char* block);  // block must come from acquire()

private:
    std::vector<char*> free_;
    size_t max_free_;
};

class Buffer {
public:
    Buffer() = default;
    ~Buffer();  // REQUIRES: release() was called (the pool is not known here)
    Buffer(Buffer&& o) noexcept;
    Buffer& operator=(Buffer&& o) noexcept;  // REQUIRES: this buffer holds no memory
    Buffer(const Buffer&) = delete;

    std::string_view readable() const { return {mem_ + start_, end_ - start_}; }
    char* readable_data() { return mem_ + start_; }
    size_t size() const { return end_ - start_; }
    bool empty() const { return start_ == end_; }
    size_t capacity() const { return cap_; }

    char* write_ptr() { return mem_ + end_; }
    size_t writable() const { return cap_ - end_; }
    void commit(size_t n) { end_ += n; }
    void consume(size_t n);
    // Removes n readable bytes starting `offset` bytes in (the later ones move down).
    void erase(size_t offset, size_t n);

    // Makes room for at least n more bytes (compacting or growing).
    void ensure_writable(size_t n, BufferPool& pool);
    void append(std::string_view data, BufferPool& pool);
    // Returns the memory to the pool (or frees it); the buffer must be empty.
    void release(BufferPool& pool);
    // Frees the memory and its bytes without a pool (pool blocks are plain malloc).
    void discard();

private:
    char* mem_ = nullptr;
    size_t cap_ = 0;
    size_t start_ = 0;
    size_t end_ = 0;
};

}  // namespace kiln::net
