#include "net/loop.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "net/mailbox.hpp"

namespace kiln::net {

class Loop::Waker final : public IoHandler {
public:
    explicit Waker(Loop& loop) : loop_(loop) {}
    void on_io(uint32_t) override {
        uint64_t n;
        while (::read(loop_.wake_fd_, &n, sizeof n) == sizeof n) {
        }
        for (auto& hook : loop_.wake_hooks_) hook();
        loop_.mailbox_->run();
    }
private:
    Loop& loop_;
};

namespace {
thread_local Loop* running = nullptr;

[[noreturn]] void fail(const char* what) {
    throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
}
}  // namespace

Loop::Loop() : owner_(std::this_thread::get_id()) {
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) fail("epoll_create1");
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) fail("eventfd");
    waker_ = std::make_unique<Waker>(*this);
    mailbox_ = std::make_shared<Mailbox>(this);
    add(wake_fd_, EPOLLIN | EPOLLET, waker_.get());
    update_clock();
}

Loop::~Loop() {
    mailbox_->close();  // other threads' late work is dropped from here on
    Loop* outer = std::exchange(running, this);  // what closes here may ask for its loop
    for (const Deferred& h : exit_hooks_) h.fn(h.arg);
    run_deferred();
    running = outer;
    bury();
    lists_.clear();
    if (wake_fd_ >= 0) ::close(wake_fd_);
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

void Loop::add(int fd, uint32_t events, IoHandler* handler) {
    assert(in_loop_thread());
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = handler;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) fail("epoll_ctl(ADD)");
}

void Loop::modify(int fd, uint32_t events, IoHandler* handler) {
    assert(in_loop_thread());
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = handler;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) != 0) fail("epoll_ctl(MOD)");
}

void Loop::remove(int fd) {
    assert(in_loop_thread());
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

TimerList& Loop::timers(uint32_t duration_ms) {
    assert(in_loop_thread());
    for (auto& l : lists_)
        if (l->duration_ms() == duration_ms) return *l;
    lists_.push_back(std::make_unique<TimerList>(duration_ms));
    return *lists_.back();
}

void Loop::update_clock() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    now_ms_ = static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1'000'000;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    wall_s_ = ts.tv_sec;
}

void Loop::wake() {
    uint64_t one = 1;
    ssize_t ignored = ::write(wake_fd_, &one, sizeof one);
    (void)ignored;
}

void Loop::stop() {
    stop_.store(true, std::memory_order_release);
    wake();
}

Loop* Loop::current() { return running; }

void Loop::run() {
    owner_ = std::this_thread::get_id();
    Loop* outer = std::exchange(running, this);
    while (!stop_.load(std::memory_order_acquire)) iterate(-1);
    run_deferred();
    bury();
    running = outer;
}

void Loop::run_once(int max_wait_ms) {
    owner_ = std::this_thread::get_id();
    Loop* outer = std::exchange(running, this);
    iterate(max_wait_ms);
    running = outer;
}

void Loop::iterate(int max_wait_ms) {
    constexpr int kMaxEvents = 256;
    epoll_event events[kMaxEvents];
    uint64_t next = deadlines_.next_deadline();
    for (auto& l : lists_) next = std::min(next, l->next_deadline());
    int timeout = -1;
    if (!deferred_.empty()) timeout = 0;
    else if (next != UINT64_MAX) timeout = next <= now_ms_ ? 0 : static_cast<int>(std::min<uint64_t>(next - now_ms_, 60'000));
    if (max_wait_ms >= 0 && (timeout < 0 || timeout > max_wait_ms)) timeout = max_wait_ms;
    int n = epoll_wait(epoll_fd_, events, kMaxEvents, timeout);
    if (n < 0 && errno != EINTR) fail("epoll_wait");
    update_clock();
    for (int i = 0; i < n; ++i) static_cast<IoHandler*>(events[i].data.ptr)->on_io(events[i].events);
    for (auto& l : lists_) l->expire(now_ms_);
    deadlines_.expire(now_ms_);
    run_deferred();
    bury();
}

void Loop::finish_deferred() {
    Loop* outer = std::exchange(running, this);  // the coroutines resumed here may ask for their loop
    for (int round = 0; round < 64 && !deferred_.empty(); ++round) run_deferred();
    running = outer;
}

void Loop::run_deferred() {
    // One batch: what these calls defer waits for the next iteration (epoll_wait
    // then does not block), so events are never starved.
    std::vector<Deferred> batch;
    batch.swap(deferred_);
    for (const Deferred& d : batch) d.fn(d.arg);
}

void Loop::bury() {
    while (!graveyard_.empty()) {
        std::vector<Grave> batch;
        batch.swap(graveyard_);
        for (Grave& g : batch) g.destroy(g.obj);
    }
}

}  // namespace kiln::net
