#include "net/output.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>

namespace kiln::net {
namespace {
constexpr size_t kMaxIov = 64;
constexpr size_t kMaxKeptSegments = 4;  // capacity kept after a flush (idle memory)
}  // namespace

OutputQueue::~OutputQueue() { assert(segs_.empty()); }

Buffer& OutputQueue::tail(BufferPool& pool, size_t reserve) {
    if (segs_.empty() || segs_.back().is_owned) segs_.emplace_back();
    Buffer& b = segs_.back().buf;
    b.ensure_writable(reserve, pool);
    return b;
}

void OutputQueue::append(std::string_view data, BufferPool& pool) {
    if (data.empty()) return;
    tail(pool, data.size()).append(data, pool);
    bytes_ += data.size();
}

void OutputQueue::append_owned(std::string&& data) {
    if (data.empty()) return;
    bytes_ += data.size();
    Segment& s = segs_.emplace_back();
    s.owned = std::move(data);
    s.is_owned = true;
}

void OutputQueue::pop_front(BufferPool& pool) {
    segs_.front().buf.consume(segs_.front().buf.size());
    segs_.front().buf.release(pool);
    segs_.erase(segs_.begin());
}

OutputQueue::Status OutputQueue::write_to(int fd, BufferPool& pool, size_t* written) {
    *written = 0;
    while (bytes_ > 0) {
        iovec iov[kMaxIov];
        size_t n = 0;
        for (size_t i = 0; i < segs_.size() && n < kMaxIov; ++i) {
            Segment& s = segs_[i];
            if (s.is_owned) iov[n] = {s.owned.data() + s.off, s.owned.size() - s.off};
            else iov[n] = {s.buf.readable_data(), s.buf.size()};
            if (iov[n].iov_len) ++n;
        }
        ssize_t w = n == 1 ? ::write(fd, iov[0].iov_base, iov[0].iov_len) : ::writev(fd, iov, static_cast<int>(n));
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::Blocked;
            return Status::Error;
        }
        size_t left = static_cast<size_t>(w);
        *written += left;
        bytes_ -= left;
        while (left > 0) {
            Segment& s = segs_.front();
            size_t have = s.is_owned ? s.owned.size() - s.off : s.buf.size();
            if (left < have) {
                if (s.is_owned) s.off += left;
                else s.buf.consume(left);
                break;
            }
            left -= have;
            pop_front(pool);
        }
    }
    clear(pool);
    return Status::Done;
}

void OutputQueue::clear(BufferPool& pool) {
    while (!segs_.empty()) pop_front(pool);
    if (segs_.capacity() > kMaxKeptSegments) std::vector<Segment>().swap(segs_);
    bytes_ = 0;
}

}  // namespace kiln::net
