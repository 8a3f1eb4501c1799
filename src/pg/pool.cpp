#include "pg/pool.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "pg/errors.hpp"
#include "pg/refused.hpp"

namespace kiln::pg::detail {

ConnectSpec connect_spec(const Options& options) {
    ConnectSpec spec;
    spec.timeout_ms = static_cast<uint64_t>(std::max<int64_t>(options.connect_timeout.count(), 1));
    spec.reply_timeout_ms = static_cast<uint64_t>(std::max<int64_t>(options.reply_timeout.count(), 0));
    spec.statement_cache = options.statement_cache;
    spec.keys = {"dbname", "fallback_application_name"};
    spec.values = {options.url, "kiln"};
    std::string opts;  // the URL's own options=
    char* err = nullptr;
    if (PQconninfoOption* parsed = PQconninfoParse(options.url.c_str(), &err)) {
        for (PQconninfoOption* o = parsed; o->keyword; ++o)
            if (std::string_view(o->keyword) == "options" && o->val) opts = o->val;
        PQconninfoFree(parsed);
    }
    if (err) PQfreemem(err);  // a bad URL: the connect attempt reports it
    // A URL without options: libpq would use PGOPTIONS from the environment, but the
    // options kiln adds below would replace it, so they are added to it instead.
    if (opts.empty())
        if (const char* env = std::getenv("PGOPTIONS")) opts = env;
    if (opts.find("client_connection_check_interval") == std::string::npos) spec.check_interval_ms = 1000;
    if (options.statement_timeout.count() > 0) {
        if (!opts.empty()) opts += ' ';
        opts += "-c statement_timeout=" + std::to_string(options.statement_timeout.count());
        spec.keys.push_back("options");
        spec.values.push_back(std::move(opts));
    }
    return spec;
}

Pool::Pool(Options options) : options_(std::move(options)), spec_(connect_spec(options_)) {
    if (options_.pool == 0) options_.pool = 1;
}

Pool::~Pool() {
    hub_.reset();
    if (loop_) loop_->deadlines().disarm(lease_retry_.retry);
    for (auto& s : slots_) {
        loop_->deadlines().disarm(s->retry);
        s->conn.reset();  // fails what it carries
    }
    for (Op* op : std::exchange(lease_line_, {})) {
        op->fail(io_error("the PostgreSQL client was closed"));
        op->release();
    }
    leases_.clear();  // their connections fail what they carry
}

void Pool::bind() {
    net::Loop* here = net::Loop::current();
    if (!here) throw std::logic_error("kiln: a pg::Client query outside an event loop thread");
    if (loop_) {
        if (loop_ != here) throw std::logic_error("kiln: a pg::Client used from a loop thread other than its own");
        return;
    }
    loop_ = here;
    lease_retry_.retry.fire = [](net::Deadline*) {};  // the back-off is over: nothing to do
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
    s.conn = std::make_unique<Connection>(*loop_, *this, spec_, Connection::Mode::Batched);
    s.conn->start();  // may report down() at once, which arms the retry
}

Pool::Slot* Pool::slot_of(Connection& c) {
    for (auto& s : slots_)
        if (s->conn.get() == &c) return s.get();
    return nullptr;
}

void Pool::up(Connection& c) {
    if (Lease* l = lease_of(c)) {
        l->up = true;
        loop_->deadlines().disarm(lease_retry_.retry);
        lease_retry_.recovered(*loop_);
        return grant();
    }
    if (Slot* s = slot_of(c)) s->recovered(*loop_);
}

void Pool::down(Connection& c, const std::string& message) {
    if (Lease* l = lease_of(c)) {
        if (!l->up) lease_retry_.lost(*loop_, message, options_.reconnect_min, options_.reconnect_max);
        // Its queries failed already; a transaction holding it fails its next ones.
        loop_->destroy_later(l->conn.release());
        if (!l->held) drop(l);
        // Nothing else on its way to the ops in line: they fail now, not later.
        bool coming = std::any_of(leases_.begin(), leases_.end(), [](const auto& x) { return x->held || x->conn; });
        if (!coming) {
            for (Op* op : std::exchange(lease_line_, {})) {
                op->fail(io_error("no connection to PostgreSQL for a transaction (" + message + ")"));
                op->release();
            }
        }
        return;
    }
    Slot* s = slot_of(c);
    if (!s) return;
    // Reported from inside the connection's own calls: it goes at the end of this
    // loop iteration (it holds nothing by then: die() failed its queries).
    loop_->destroy_later(s->conn.release());
    s->lost(*loop_, message, options_.reconnect_min, options_.reconnect_max);
}

Connection* Pool::pick() {
    Connection* best = nullptr;
    for (auto& s : slots_) {
        Connection* c = s->conn.get();
        if (!c || c->dead()) continue;
        // After a loss, an attempt under way is no better than none: on a stopped
        // server it takes its whole connect_timeout. Fail at once instead, as while
        // waiting to retry (the first connect of all is waited for).
        if (!c->ready() && s->backoff_ms > 0) continue;
        // Ready beats connecting; then the lighter load.
        if (!best || (c->ready() && !best->ready()) || (c->ready() == best->ready() && c->load() < best->load()))
            best = c;
    }
    return best;
}

std::exception_ptr Pool::unavailable(db::Sql sql) const {
    std::string why;
    uint64_t retry = UINT64_MAX;
    for (const auto& s : slots_) {
        if (why.empty()) why = s->last_error;
        if (s->retry.armed()) retry = std::min(retry, s->retry.at_ms);
    }
    std::string message = "no connection to PostgreSQL";
    if (!why.empty()) message += " (last: " + why + ")";
    if (retry != UINT64_MAX)
        message += "; retrying in " + std::to_string(retry > loop_->now_ms() ? retry - loop_->now_ms() : 0) + " ms";
    return io_error(std::move(message), std::string(sql.text()));
}

Query Pool::send(db::Sql sql, Params params) {
    bind();
    Op* op = new Op(*loop_);
    Query q(op);  // owns op from here, also if submit throws
    if (std::string why = refusal(sql.text()); !why.empty()) {
        op->fail(std::make_exception_ptr(db::Error(db::ErrorKind::Misuse, 0, why, std::string(sql.text()))));
    } else if (Connection* c = pick()) {
        // pick()'s connection, the least busy of the ready ones, is full (one still
        // connecting may be empty: pick() prefers a ready one).
        if (options_.max_queued > 0 && c->load() >= options_.max_queued) {
            op->fail(std::make_exception_ptr(db::BusyError(
                db::ErrorKind::Busy, 0,
                "PostgreSQL is behind: " + std::to_string(c->load()) + " queries wait on the least busy of this "
                "loop's connections (pg::Options::max_queued)", std::string(sql.text()))));
            return q;
        }
        op->params = std::move(params);
        c->submit(op, sql.text());
    } else {
        op->fail(unavailable(sql));  // at once: the await throws it
    }
    return q;
}

Query Pool::send(Lease& lease, db::Sql sql, Params params) {
    Op* op = new Op(*loop_);
    Query q(op);
    if (lease.conn && !lease.conn->dead()) {
        if (changes_session(sql.text())) lease.session_changed = true;
        op->params = std::move(params);
        lease.conn->submit(op, sql.text());
    } else {
        op->fail(io_error("connection to PostgreSQL lost during the transaction", std::string(sql.text())));
    }
    return q;
}

// ------------------------------------------------------------------ leases

Lease* Pool::lease_of(Connection& c) {
    for (auto& l : leases_)
        if (l->conn.get() == &c) return l.get();
    return nullptr;
}

void Pool::drop(Lease* l) {
    auto it = std::find_if(leases_.begin(), leases_.end(), [&](const auto& x) { return x.get() == l; });
    if (it != leases_.end()) leases_.erase(it);
}

bool Pool::free_lease_ready() const {
    return std::any_of(leases_.begin(), leases_.end(), [](const auto& l) { return !l->held && l->conn && l->conn->ready(); });
}

bool Pool::shared_down() const {
    return std::all_of(slots_.begin(), slots_.end(),
                       [](const auto& s) { return (!s->conn || !s->conn->ready()) && s->backoff_ms > 0; });
}

Op* Pool::lease() {
    bind();
    Op* op = new Op(*loop_);
    if (!free_lease_ready()) {
        // The database is known to be away: fail now, as a query would, instead of
        // opening (and perhaps waiting connect_timeout on) a connection per begin().
        if (lease_retry_.retry.armed()) {
            op->fail(io_error(lease_retry_.unavailable(*loop_, "no connection to PostgreSQL for a transaction"), "BEGIN"));
            return op;
        }
        if (shared_down()) {
            op->fail(unavailable("BEGIN"));
            return op;
        }
    }
    op->hold();  // the line's reference
    lease_line_.push_back(op);
    grant();
    open_leases();
    return op;
}

void Pool::grant() {
    for (auto& l : leases_) {
        if (lease_line_.empty()) return;
        if (l->held || !l->conn || !l->conn->ready()) continue;
        while (!lease_line_.empty()) {
            Op* op = lease_line_.front();
            lease_line_.pop_front();
            bool abandoned = op->refs == 1;  // its coroutine is gone
            if (!abandoned) {
                l->held = true;
                op->grant(l.get());
            }
            op->release();
            if (!abandoned) break;
        }
    }
}

void Pool::open_leases() {
    size_t coming = 0;  // free or connecting
    for (auto& l : leases_) coming += !l->held && l->conn;
    size_t limit = std::max<size_t>(options_.transactions, 1);
    while (lease_line_.size() > coming && leases_.size() < limit) {
        auto l = std::make_unique<Lease>();
        l->conn = std::make_unique<Connection>(*loop_, *this, spec_);
        Connection* c = l->conn.get();
        leases_.push_back(std::move(l));
        ++coming;
        c->start();  // may report down() at once, which fails the line
    }
}

void Pool::release(Lease* l) {
    l->held = false;
    if (!l->conn || l->conn->dead()) {
        drop(l);
        open_leases();
        return;
    }
    if (l->session_changed) {
        // A SET ROLE, a temporary table, a session setting or lock would carry over to
        // the next transaction: its connection is closed instead, and another opened.
        // (Destroyed later: this may run inside the connection's own calls.)
        loop_->destroy_later(l->conn.release());
        drop(l);
        open_leases();
        return;
    }
    if (l->dirty) {  // pipelined ahead of whatever the next holder sends
        l->dirty = false;
        Op* op = new Op(*loop_);
        l->conn->submit(op, "ROLLBACK");  // l is gone if this finds the connection dead
        op->release();  // the answer is not awaited
    }
    grant();
}

Hub& Pool::hub() {
    bind();
    if (!hub_) hub_ = std::make_unique<Hub>(*loop_, spec_, options_);
    return *hub_;
}

size_t Pool::connected() const {
    size_t n = 0;
    for (const auto& s : slots_) n += s->conn && s->conn->ready();
    return n;
}

}  // namespace kiln::pg::detail
