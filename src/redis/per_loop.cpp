#include <kiln/redis.hpp>

#include "net/per_loop.hpp"

namespace kiln::redis {

struct PerLoop::State : net::PerLoopClients<Client, Options> {
    using net::PerLoopClients<Client, Options>::PerLoopClients;
};

PerLoop::PerLoop(Options options) : s_(std::make_unique<State>(std::move(options))) {}

PerLoop::~PerLoop() = default;

void PerLoop::configure(Options options) {
    parse_url(options.url);  // a bad URL is refused here, at start, not at the first command
    s_->configure(std::move(options));
}

Client& PerLoop::local() { return s_->local("kiln::redis::PerLoop::local()"); }

}  // namespace kiln::redis
