#include "net/buffer.hpp"

#include <cassert>
#include <cstdlib>
#include <cstring>
#include <new>

namespace kiln::net {

BufferPool::~BufferPool() {
    for (char* b : free_) std::free(b);
}

char* BufferPool::acquire() {
    if (!free_.empty()) {
        char* b = free_.back();
        free_.pop_back();
        return b;
    }
    char* b = static_cast<char*>(std::malloc(kBlockSize));
    if (!b) throw std::bad_alloc();
    return b;
}

void BufferPool::release(char* block) {
    if (free_.size() < max_free_) free_.push_back(block);
    else std::free(block);
}

Buffer::~Buffer() { assert(mem_ == nullptr && "Buffer destroyed without release()"); }

Buffer::Buffer(Buffer&& o) noexcept : mem_(o.mem_), cap_(o.cap_), start_(o.start_), end_(o.end_) {
    o.mem_ = nullptr;
    o.cap_ = o.start_ = o.end_ = 0;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
    assert(mem_ == nullptr);
    mem_ = o.mem_;
    cap_ = o.cap_;
    start_ = o.start_;
    end_ = o.end_;
    o.mem_ = nullptr;
    o.cap_ = o.start_ = o.end_ = 0;
    return *this;
}

void Buffer::consume(size_t n) {
    assert(n <= size());
    start_ += n;
    if (start_ == end_) start_ = end_ = 0;
}

void Buffer::erase(size_t offset, size_t n) {
    assert(offset + n <= size());
    if (n == 0) return;
    char* at = mem_ + start_ + offset;
    std::memmove(at, at + n, size() - offset - n);
    end_ -= n;
    if (start_ == end_) start_ = end_ = 0;
}

void Buffer::ensure_writable(size_t n, BufferPool& pool) {
    if (cap_ - end_ >= n) return;
    size_t used = size();
    if (mem_ && cap_ - used >= n && start_ > 0) {  // enough room once compacted
        std::memmove(mem_, mem_ + start_, used);
        start_ = 0;
        end_ = used;
        return;
    }
    size_t want = used + n;
    char* fresh;
    size_t cap;
    if (want <= BufferPool::kBlockSize) {
        fresh = pool.acquire();
        cap = BufferPool::kBlockSize;
    } else {
        cap = cap_ * 2 > want ? cap_ * 2 : want;
        fresh = static_cast<char*>(std::malloc(cap));
        if (!fresh) throw std::bad_alloc();
    }
    if (used) std::memcpy(fresh, mem_ + start_, used);
    start_ = end_ = 0;  // the bytes live in `fresh` now
    release(pool);
    mem_ = fresh;
    cap_ = cap;
    end_ = used;
}

void Buffer::append(std::string_view data, BufferPool& pool) {
    ensure_writable(data.size(), pool);
    std::memcpy(mem_ + end_, data.data(), data.size());
    end_ += data.size();
}

void Buffer::discard() {
    std::free(mem_);
    mem_ = nullptr;
    cap_ = start_ = end_ = 0;
}

void Buffer::release(BufferPool& pool) {
    if (!mem_) return;
    assert(empty());
    if (cap_ == BufferPool::kBlockSize) pool.release(mem_);
    else std::free(mem_);
    mem_ = nullptr;
    cap_ = start_ = end_ = 0;
}

}  // namespace kiln::net
