#include "http/exchange.hpp"

namespace kiln::http {

void CompletionQueue::push(Exchange* ex) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (loop_) {
            done_.push_back(ex);
            loop_->wake();
            return;
        }
    }
    // The loop is gone: nobody will return the buffer to its pool.
    ex->buffer.discard();
    delete ex;
}

std::vector<Exchange*> CompletionQueue::take() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Exchange*> out;
    out.swap(done_);
    return out;
}

std::vector<Exchange*> CompletionQueue::close() {
    std::lock_guard<std::mutex> lock(mu_);
    loop_ = nullptr;
    std::vector<Exchange*> out;
    out.swap(done_);
    return out;
}

}  // namespace kiln::http
