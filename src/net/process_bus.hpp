// A datagram channel between the worker processes of one node: each binds a socket
// named by its slot in the node's bus directory, and a datagram sent to the others
// reaches every process bound at that moment. The supervisor makes the directory
// (ProcessBusDir): mode 0700, so no other user of the machine can take a slot's name
// before its worker binds it, nor send to one (a datagram from another user's process
// would be ignored all the same).
//
// A peer whose queue was found full (EAGAIN) gets a socket connected to its address,
// whose room is waited for (POLLOUT, on the bus's thread) and which carries what it
// is sent from then on, in order: a burst larger than the kernel's datagram queue (net.unix.max_dgram_qlen, 10 by
// default) arrives whole and in order. What waits for one peer is bounded
// (kMaxPendingBytes): past it, a stuck worker's datagrams are dropped (counted in
// dropped(), and said in the error log once a minute), so it never stalls the
// others. A datagram is at most max_datagram() bytes (the socket buffer's limit).
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace kiln::net {

class ProcessBus {
public:
    static constexpr size_t kMaxPendingBytes = 16u << 20;  // per peer

    // Binds slot `index` of `slots` in the bus directory `dir` (a file a dead process
    // left there is replaced); nullptr and *err if it cannot, or if `dir` is not a
    // directory of this user's that only it may use.
    static std::unique_ptr<ProcessBus> open(const std::string& dir, unsigned index, unsigned slots, std::string* err);
    ~ProcessBus();
    ProcessBus(const ProcessBus&) = delete;
    ProcessBus& operator=(const ProcessBus&) = delete;

    // To every other slot that is bound; false if the datagram is too large. Any
    // thread; never blocks (what a peer cannot take yet waits on the bus's thread).
    bool send_others(std::string_view datagram);
    // Receives on a thread of its own, calling fn for each datagram, until the bus
    // goes; the same thread sends what waited for a peer. Without start(), waiting
    // datagrams wait for good.
    void start(std::function<void(std::string_view)> fn);
    size_t max_datagram() const { return max_datagram_; }
    uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

private:
    struct Peer {
        int fd = -1;  // connected to the peer's address; -1: not yet, or it went
        std::deque<std::string> waiting;
        size_t waiting_bytes = 0;
    };

    ProcessBus(int fd, int stop_fd, int wake_fd, std::string dir, unsigned index, unsigned slots, size_t max_datagram);
    void receive_loop(std::function<void(std::string_view)> fn);
    // REQUIRES: mu_ held. Sends to peer i now, or queues it behind what waits.
    void send_to(unsigned i, std::string_view datagram);
    bool connect_peer(unsigned i);  // REQUIRES: mu_ held
    void flush_waiting(unsigned i);  // REQUIRES: mu_ held; on POLLOUT
    void drop(unsigned i, size_t count);  // REQUIRES: mu_ held

    int fd_;
    int stop_fd_;  // an eventfd: the receiving thread's way out
    int wake_fd_;  // an eventfd: a datagram waits for a peer (poll it for POLLOUT)
    std::string dir_;
    unsigned index_;
    unsigned slots_;
    size_t max_datagram_;
    unsigned uid_;  // datagrams from other users are ignored
    std::mutex mu_;
    std::vector<Peer> peers_;
    int64_t drop_logged_s_ = 0;
    std::string to_log_;  // a line drop() has to say, once the lock is let go
    std::atomic<uint64_t> dropped_{0};
    std::thread thread_;
};

// The node's bus directory: made by the supervisor with mode 0700 in the service's
// runtime directory ($RUNTIME_DIRECTORY), else $TMPDIR, else /tmp (the first whose
// path no other user may change), and removed, with the sockets in it, when this goes.
// What a supervisor killed with SIGKILL left there is removed by a later one that
// makes its own there (a minute after it was last changed).
class ProcessBusDir {
public:
    static std::unique_ptr<ProcessBusDir> create(std::string* err);  // nullptr and *err if it cannot
    ~ProcessBusDir();
    ProcessBusDir(const ProcessBusDir&) = delete;
    ProcessBusDir& operator=(const ProcessBusDir&) = delete;
    const std::string& path() const { return path_; }

private:
    explicit ProcessBusDir(std::string path) : path_(std::move(path)) {}
    bool keep_in_use();  // false: its socket could not be bound
    std::string path_;
    int keeper_ = -1;
};

}  // namespace kiln::net
