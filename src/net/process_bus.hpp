// A datagram channel between the worker processes of one node: each binds an
// abstract unix-domain address named by the node and its slot, and a datagram sent
// to the others reaches every process bound at that moment. No file to clean up,
// nothing outside the node can reach it (abstract names live in the network
// namespace, and a datagram from another user's process is ignored).
//
// Best effort by design: a datagram to a process whose queue is full is dropped
// (counted in dropped()), so a stuck worker never stalls the others. A datagram is
// at most max_datagram() bytes (the kernel's socket buffer limit).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

namespace kiln::net {

class ProcessBus {
public:
    // Binds slot `index` of `slots` for node `node`; nullptr and *err if it cannot.
    static std::unique_ptr<ProcessBus> open(uint64_t node, unsigned index, unsigned slots, std::string* err);
    ~ProcessBus();
    ProcessBus(const ProcessBus&) = delete;
    ProcessBus& operator=(const ProcessBus&) = delete;

    // To every other slot that is bound; false if the datagram is too large.
    bool send_others(std::string_view datagram);
    // Receives on a thread of its own, calling fn for each datagram, until the bus goes.
    void start(std::function<void(std::string_view)> fn);
    size_t max_datagram() const { return max_datagram_; }
    uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

private:
    ProcessBus(int fd, int stop_fd, uint64_t node, unsigned index, unsigned slots, size_t max_datagram);
    void receive_loop(std::function<void(std::string_view)> fn);

    int fd_;
    int stop_fd_;  // an eventfd: the receiving thread's way out
    uint64_t node_;
    unsigned index_;
    unsigned slots_;
    size_t max_datagram_;
    unsigned uid_;  // datagrams from other users are ignored
    std::atomic<uint64_t> dropped_{0};
    std::thread thread_;
};

}  // namespace kiln::net
