// One client TCP connection: a non-blocking socket registered in its loop's epoll
// (level-triggered; EPOLLOUT only while a connect or a write is pending), one read
// buffer that lives as long as the object (kept across reconnects), and a gathered
// write that resumes where a short write stopped. No HTTP here. Owned by one
// session, used only on that session's loop thread.
#pragma once
#include <netinet/in.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace kiln::bench {

inline constexpr size_t kReadBufferBytes = 64 * 1024;

class Connection {
public:
    enum class Io : uint8_t { Done, Blocked, Error };

    Connection();
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    // Opens a socket and starts connecting; `tag` is the epoll user pointer.
    // Done: connected; Blocked: in progress (wait for writable); Error: see error().
    Io open(const sockaddr_in& addr, int epfd, void* tag);
    // After a writable event while connecting: Done or Error.
    Io finish_connect();
    bool is_open() const { return fd_ >= 0; }
    bool connecting() const { return connecting_; }
    void close();

    // Starts sending the pieces (copied; the bytes they point to must stay put).
    Io write(const iovec* iov, int count);
    // Continues a write that returned Blocked.
    Io write_more();
    bool writing() const { return iov_left_ > 0; }

    // Reads once into the free space. >0 bytes, 0 at EOF, -1 nothing now (EAGAIN),
    // -2 error (see error()). Compacts the unread bytes to the front first if needed.
    long read();
    char* data() { return buf_.get() + begin_; }
    size_t size() const { return end_ - begin_; }
    size_t space() const { return kReadBufferBytes - end_; }
    void consume(size_t n);
    void discard() { begin_ = end_ = 0; }
    int error() const { return error_; }

private:
    void set_events(bool want_write);
    int fd_ = -1;
    int epfd_ = -1;
    void* tag_ = nullptr;
    bool connecting_ = false;
    bool want_write_ = false;
    int error_ = 0;
    std::unique_ptr<char[]> buf_;
    size_t begin_ = 0, end_ = 0;
    iovec iov_[5];
    int iov_index_ = 0, iov_count_ = 0;
    size_t iov_left_ = 0;
};

}  // namespace kiln::bench
