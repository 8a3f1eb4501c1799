#include "net/mailbox.hpp"

#include "net/loop.hpp"

namespace kiln::net {

void Mailbox::post(std::function<void()> fn) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!loop_) {
        lock.unlock();
        return;  // fn is destroyed here, on the poster's thread
    }
    bool first = items_.empty();
    items_.push_back(std::move(fn));
    if (first) loop_->wake();  // under the lock: close() cannot have let the loop go
}

void Mailbox::run() {
    std::vector<std::function<void()>> items;
    {
        std::lock_guard<std::mutex> lock(mu_);
        items.swap(items_);
    }
    for (auto& fn : items) fn();
}

void Mailbox::close() {
    std::vector<std::function<void()>> items;
    {
        std::lock_guard<std::mutex> lock(mu_);
        loop_ = nullptr;
        items.swap(items_);
    }
}

}  // namespace kiln::net
