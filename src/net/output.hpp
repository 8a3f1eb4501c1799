// The bytes a connection still has to send, in order: pooled buffers for small
// pieces (response heads, small bodies), owned strings for large bodies, which
// are moved in rather than copied, and file ranges, sent with sendfile(2).
// write_to() sends as much as the socket takes: one writev for the memory pieces
// before a file, then sendfile. Knows nothing of HTTP. Belongs to one event loop.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "net/buffer.hpp"

namespace kiln::net {

class TlsStream;

class OutputQueue {
public:
    OutputQueue() = default;
    OutputQueue(const OutputQueue&) = delete;
    ~OutputQueue();  // REQUIRES: clear() was called

    // A buffer at the tail to serialize into directly (append-only).
    Buffer& tail(BufferPool& pool, size_t reserve);
    void append(std::string_view data, BufferPool& pool);
    void append_owned(std::string&& data);  // taken as is, no copy
    // `length` bytes of `fd` from `offset`; the queue owns fd and closes it when sent or cleared.
    void append_file(int fd, uint64_t offset, uint64_t length);
    void note_appended(size_t n) { bytes_ += n; }  // after writing into tail()

    size_t size() const { return bytes_; }
    bool empty() const { return bytes_ == 0; }
    // What the queue holds for backpressure: its bytes, and each file range at least
    // kFileWeight, for the descriptor it keeps open (pipelined one-byte ranges would
    // otherwise hold thousands per connection under max_pending_output).
    static constexpr size_t kFileWeight = 16 * 1024;
    size_t backlog() const { return bytes_ + files_ * kFileWeight; }

    // Yield: the socket would take more, but this call sent its share (kWriteShare):
    // call again once the loop's other connections had their turn. A fast reader of
    // a large file (loopback, a LAN) would otherwise hold the loop until it was done.
    enum class Status { Done, Blocked, Yield, Error };
    static constexpr size_t kWriteShare = size_t{2} << 20;
    // Writes until done, EAGAIN or its share is sent; *written gets the bytes sent (for
    // timers). Through `tls` when given: encrypted, file ranges read and sealed (no
    // sendfile), and Done only once the stream's encrypted bytes are all sent too.
    Status write_to(int fd, BufferPool& pool, size_t* written, TlsStream* tls = nullptr);
    void clear(BufferPool& pool);

private:
    enum class Kind : uint8_t { Pooled, Owned, File };
    struct Segment {
        Buffer buf;
        std::string owned;
        size_t off = 0;  // sent bytes of `owned`
        Kind kind = Kind::Pooled;
        int fd = -1;            // Kind::File
        uint64_t file_off = 0;  // next byte of the file to send
        uint64_t file_left = 0;
        size_t left() const;
    };
    Status send_file(int fd, Segment& s, size_t* written);
    Status send_file_tls(int fd, Segment& s, size_t* written, TlsStream& tls);
    void pop_front(BufferPool& pool);
    std::vector<Segment> segs_;
    size_t bytes_ = 0;
    size_t files_ = 0;  // file segments (each an open descriptor)
};

}  // namespace kiln::net
