// Work handed to an event loop from other threads: post() runs fn on the loop's own
// thread soon after (woken through its eventfd). Shared (std::shared_ptr) between
// the loop and whoever may post, so a thread finishing late posts safely: once the
// loop is gone, what is posted is dropped on the poster's thread, never run.
#pragma once
#include <functional>
#include <mutex>
#include <vector>

namespace kiln::net {

class Loop;

class Mailbox {
public:
    explicit Mailbox(Loop* loop) : loop_(loop) {}
    Mailbox(const Mailbox&) = delete;
    Mailbox& operator=(const Mailbox&) = delete;

    void post(std::function<void()> fn);  // any thread
    void run();    // the loop's thread: runs what was posted, in order
    void close();  // the loop's thread, as the loop goes: drops what is queued

private:
    std::mutex mu_;
    Loop* loop_;  // null once closed (guarded by mu_)
    std::vector<std::function<void()>> items_;
};

}  // namespace kiln::net
