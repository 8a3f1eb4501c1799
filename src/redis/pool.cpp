#include "redis/pool.hpp"

#include <algorithm>
#include <stdexcept>

#include "redis/hub.hpp"
#include "redis/refused.hpp"

namespace kiln::redis::detail {

Pool::Pool(Options options) : options_(std::move(options)), endpoint_(parse_url(options_.url)) {
    if (options_.pool == 0) options_.pool = 1;
}

Pool::~Pool() {
    hub_.reset();
    for (auto& s : slots_) {
        loop_->deadlines().disarm(s->retry);
        s->conn.reset();  // fails what it carries
    }
}

void Pool::bind() {
    net::Loop* here = net::Loop::current();
    if (!here) throw std::logic_error("kiln: a redis::Client command outside an event loop thread");
    if (loop_) {
        if (loop_ != here) throw std::logic_error("kiln: a redis::Client used from a loop thread other than its own");
        return;
    }
    loop_ = here;
    for (size_t i = 0; i < options_.pool; ++i) {
        auto s = std::make_unique<Slot>();
        s->pool = this;
        s->retry.owner = s.get();
        s->retry.fire = [](net::Deadline* d) {
            Slot* slot = static_cast<Slot*>(d->owner);
            slot->pool->open(*slot);
        };
        slots_.push_back(std::move(s));
    }
    for (auto& s : slots_) open(*s);
}

void Pool::open(Slot& s) {
    s.conn = std::make_unique<Connection>(*loop_, *this, endpoint_, options_);
    s.conn->start();  // may report down() at once, which arms the retry
}

Pool::Slot* Pool::slot_of(Connection& c) {
    for (auto& s : slots_)
        if (s->conn.get() == &c) return s.get();
    return nullptr;
}

void Pool::up(Connection& c) {
    if (Slot* s = slot_of(c)) s->recovered(*loop_);
}

void Pool::down(Connection& c, const std::string& message) {
    if (Slot* s = slot_of(c)) s->lost(*loop_, options_, message);
}

Connection* Pool::pick(bool ordered) {
    Connection* best = nullptr;
    for (auto& s : slots_) {
        Connection* c = s->conn.get();
        if (!c || c->dead()) continue;
        // After a loss, a connection Redis has not answered yet is no better than none:
        // a stopped server accepts connections, and a command there would wait its
        // whole command_timeout. Fail at once instead, as while waiting to retry.
        if (!c->ready() && s->backoff_ms > 0) continue;
        if (ordered) return c;
        // Ready beats connecting; then the lighter load.
        if (!best || (c->ready() && !best->ready()) || (c->ready() == best->ready() && c->load() < best->load()))
            best = c;
    }
    return best;
}

Command Pool::send(Args& args) {
    bind();
    Op* op = new Op(*loop_);
    Command cmd(op);  // owns op from here
    std::string_view wire = args.wire();
    std::string refused;
    if (args.size() == 0) {
        op->fail(std::make_exception_ptr(Error(Error::Kind::Misuse, "a Redis command needs a name")));
    } else if (refused = refusal(wire); !refused.empty()) {
        op->fail(std::make_exception_ptr(Error(Error::Kind::Misuse, refused)));
    } else if (Connection* c = pick(keeps_order(wire))) {
        c->submit(op, wire);
    } else {
        std::string why = slots_.front()->unavailable(*loop_);
        op->fail(io_error(why));  // at once: the await throws it
    }
    return cmd;
}

Hub& Pool::hub() {
    bind();
    if (!hub_) hub_ = std::make_unique<Hub>(*loop_, endpoint_, options_);
    return *hub_;
}

size_t Pool::connected() const {
    size_t n = 0;
    for (const auto& s : slots_) n += s->conn && s->conn->ready();
    return n;
}

}  // namespace kiln::redis::detail
