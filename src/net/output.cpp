#include "net/output.hpp"

#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cassert>
#include <algorithm>
#include <cerrno>

#include "net/tls.hpp"

namespace kiln::net {
namespace {
constexpr size_t kMaxIov = 64;
constexpr size_t kMaxKeptSegments = 4;  // capacity kept after a flush (idle memory)
}  // namespace

OutputQueue::~OutputQueue() { assert(segs_.empty()); }

size_t OutputQueue::Segment::left() const {
    switch (kind) {
        case Kind::Pooled: return buf.size();
        case Kind::Owned: return owned.size() - off;
        case Kind::File: return static_cast<size_t>(file_left);
    }
    return 0;
}

Buffer& OutputQueue::tail(BufferPool& pool, size_t reserve) {
    if (segs_.empty() || segs_.back().kind != Kind::Pooled) segs_.emplace_back();
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
    s.kind = Kind::Owned;
}

void OutputQueue::append_file(int fd, uint64_t offset, uint64_t length) {
    if (length == 0) {
        ::close(fd);
        return;
    }
    bytes_ += length;
    ++files_;
    Segment& s = segs_.emplace_back();
    s.kind = Kind::File;
    s.fd = fd;
    s.file_off = offset;
    s.file_left = length;
}

void OutputQueue::pop_front(BufferPool& pool) {
    Segment& s = segs_.front();
    s.buf.consume(s.buf.size());
    s.buf.release(pool);
    if (s.fd >= 0) {
        ::close(s.fd);
        --files_;
    }
    segs_.erase(segs_.begin());
}

OutputQueue::Status OutputQueue::send_file(int fd, Segment& s, size_t* written) {
    while (s.file_left > 0) {
        if (*written >= kWriteShare) return Status::Yield;
        off_t off = static_cast<off_t>(s.file_off);
        size_t want = static_cast<size_t>(std::min<uint64_t>(s.file_left, kWriteShare - *written));
        ssize_t w = ::sendfile(fd, s.fd, &off, want);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::Blocked;
            return Status::Error;
        }
        if (w == 0) return Status::Error;  // the file shrank under us: the framing promised more
        s.file_off += static_cast<uint64_t>(w);
        s.file_left -= static_cast<uint64_t>(w);
        bytes_ -= static_cast<size_t>(w);
        *written += static_cast<size_t>(w);
    }
    return Status::Done;
}

OutputQueue::Status OutputQueue::send_file_tls(int fd, Segment& s, size_t* written, TlsStream& tls) {
    char chunk[16 * 1024];
    while (s.file_left > 0) {
        if (*written >= kWriteShare) return Status::Yield;
        size_t want = static_cast<size_t>(std::min<uint64_t>(s.file_left, sizeof chunk));
        ssize_t r = ::pread(s.fd, chunk, want, static_cast<off_t>(s.file_off));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return Status::Error;  // unreadable, or shrank under us
        iovec iov{chunk, static_cast<size_t>(r)};
        ssize_t w = tls.writev(fd, &iov, 1);  // takes all of it, or nothing
        if (w < 0) return errno == EAGAIN ? Status::Blocked : Status::Error;
        s.file_off += static_cast<uint64_t>(w);
        s.file_left -= static_cast<uint64_t>(w);
        bytes_ -= static_cast<size_t>(w);
        *written += static_cast<size_t>(w);
    }
    return Status::Done;
}

OutputQueue::Status OutputQueue::write_to(int fd, BufferPool& pool, size_t* written, TlsStream* tls) {
    *written = 0;
    if (tls) {
        int f = tls->flush(fd);
        if (f < 0) return Status::Error;
        if (f == 0) return Status::Blocked;
    }
    while (bytes_ > 0) {
        if (*written >= kWriteShare) return Status::Yield;
        while (segs_.front().kind != Kind::File && segs_.front().left() == 0) pop_front(pool);
        if (segs_.front().kind == Kind::File) {
            Status st = tls ? send_file_tls(fd, segs_.front(), written, *tls) : send_file(fd, segs_.front(), written);
            if (st != Status::Done) return st;
            pop_front(pool);
            continue;
        }
        iovec iov[kMaxIov];
        size_t n = 0;
        for (size_t i = 0; i < segs_.size() && n < kMaxIov; ++i) {
            Segment& s = segs_[i];
            if (s.kind == Kind::File) break;
            if (s.kind == Kind::Owned) iov[n] = {s.owned.data() + s.off, s.owned.size() - s.off};
            else iov[n] = {s.buf.readable_data(), s.buf.size()};
            if (iov[n].iov_len) ++n;
        }
        ssize_t w = tls ? tls->writev(fd, iov, static_cast<int>(n))
                    : n == 1 ? ::write(fd, iov[0].iov_base, iov[0].iov_len) : ::writev(fd, iov, static_cast<int>(n));
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
            size_t have = s.left();
            if (left < have) {
                if (s.kind == Kind::Owned) s.off += left;
                else s.buf.consume(left);
                break;
            }
            left -= have;
            pop_front(pool);
        }
    }
    clear(pool);
    if (tls && tls->has_output()) {  // sealed, not all on the wire yet
        int f = tls->flush(fd);
        if (f < 0) return Status::Error;
        if (f == 0) return Status::Blocked;
    }
    return Status::Done;
}

void OutputQueue::clear(BufferPool& pool) {
    while (!segs_.empty()) pop_front(pool);
    if (segs_.capacity() > kMaxKeptSegments) std::vector<Segment>().swap(segs_);
    bytes_ = 0;
}

}  // namespace kiln::net
