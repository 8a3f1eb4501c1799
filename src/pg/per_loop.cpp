#include <kiln/pg.hpp>

#include "net/per_loop.hpp"

namespace kiln::pg {

struct PerLoop::State : net::PerLoopClients<Client, Options> {
    using net::PerLoopClients<Client, Options>::PerLoopClients;
};

PerLoop::PerLoop(Options options) : s_(std::make_unique<State>(std::move(options))) {}

PerLoop::~PerLoop() = default;

void PerLoop::configure(Options options) { s_->configure(std::move(options)); }

Client& PerLoop::local() { return s_->local("kiln::pg::PerLoop::local()"); }

Options options_from(const ServerOptions& server) {
    Options o;
    o.url = server.database_url;
    o.pool = server.database_pool;
    o.statement_timeout = std::chrono::milliseconds(server.database_statement_timeout_ms);
    o.reply_timeout = std::chrono::milliseconds(server.database_reply_timeout_ms);
    o.max_queued = server.database_max_queued;
    return o;
}

}  // namespace kiln::pg
