#include "pg/connection.hpp"

#include <sys/epoll.h>

#include <algorithm>
#include <cassert>
#include <utility>
#include <vector>

#include "pg/errors.hpp"
#include "util/log.hpp"

namespace kiln::pg::detail {
namespace {
// The server's notices (NOTICE, WARNING: "... does not exist, skipping", a RAISE in a
// function) go to kiln's error log, one line each, instead of libpq's default: stderr.
void log_notice(void*, const PGresult* r) {
    const char* severity = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
    std::string_view level = severity ? severity : "NOTICE";
    std::string text = one_line(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY));
    for (char& c : text)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    util::log(level == "WARNING" ? util::LogLevel::Warn : util::LogLevel::Info, "PostgreSQL %.*s: %s",
              static_cast<int>(level.size()), level.data(), text.c_str());
}

constexpr uint32_t kRead = EPOLLIN | EPOLLRDHUP;

// Whether sql is a SELECT (its first word, any case): what may share a Sync.
bool is_select(std::string_view sql) {
    size_t i = sql.find_first_not_of(" \t\r\n");
    if (i == sql.npos || sql.size() - i < 6) return false;
    for (size_t k = 0; k < 6; ++k)
        if ((sql[i + k] | 0x20) != "select"[k]) return false;
    if (sql.size() == i + 6) return true;
    char next = sql[i + 6];
    return !((next | 0x20) >= 'a' && (next | 0x20) <= 'z') && !(next >= '0' && next <= '9') && next != '_';
}

bool ok_status(const PGresult* r) {
    ExecStatusType st = PQresultStatus(r);
    return st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK || st == PGRES_EMPTY_QUERY;
}
}  // namespace

Connection::Connection(net::Loop& loop, Owner& owner, const ConnectSpec& spec, Mode mode)
    : loop_(loop), owner_(owner), spec_(spec), mode_(mode) {
    connect_deadline_.owner = this;
    connect_deadline_.fire = [](net::Deadline* d) {
        auto* c = static_cast<Connection*>(d->owner);
        c->die("no answer within " + std::to_string(c->spec_.timeout_ms) + " ms");
    };
    reply_deadline_.owner = this;
    reply_deadline_.fire = [](net::Deadline* d) { static_cast<Connection*>(d->owner)->reply_deadline(); };
}

Connection::~Connection() {
    if (deferred_) deferred_->conn = nullptr;
    if (state_ == State::Dead) return;  // die() let go of everything already
    unwatch();
    loop_.deadlines().disarm(connect_deadline_);
    loop_.deadlines().disarm(reply_deadline_);
    fail_all("the PostgreSQL client was closed");
    if (conn_) PQfinish(conn_);
}

void Connection::start() {
    assert(state_ == State::Idle);
    state_ = State::Connecting;
    std::vector<const char*> keys, values;
    for (size_t i = 0; i < spec_.keys.size(); ++i) {
        keys.push_back(spec_.keys[i].c_str());
        values.push_back(spec_.values[i].c_str());
    }
    keys.push_back(nullptr);
    values.push_back(nullptr);
    conn_ = PQconnectStartParams(keys.data(), values.data(), /*expand_dbname=*/1);
    if (!conn_) return die("out of memory");
    if (PQstatus(conn_) == CONNECTION_BAD) return die(one_line(PQerrorMessage(conn_)));
    if (PQsetnonblocking(conn_, 1) != 0) return die(one_line(PQerrorMessage(conn_)));
    PQsetNoticeReceiver(conn_, log_notice, nullptr);
    loop_.deadlines().arm(connect_deadline_, loop_.now_ms() + spec_.timeout_ms);
    watch(EPOLLOUT);  // PQconnectStart's first wish: the socket becoming writable
}

void Connection::poll_connect() {
    // Registered again at every step: after a refusal libpq closes its socket (which
    // leaves epoll) and tries the next host or address on a new one, which nearly
    // always gets the same number; watch() would take it for the one it knows.
    switch (PQconnectPoll(conn_)) {
        case PGRES_POLLING_READING: return watch(EPOLLIN, true);
        case PGRES_POLLING_WRITING: return watch(EPOLLOUT, true);
        case PGRES_POLLING_FAILED: return die(one_line(PQerrorMessage(conn_)));
        case PGRES_POLLING_OK: break;
        default: return;  // PGRES_POLLING_ACTIVE: obsolete
    }
    loop_.deadlines().disarm(connect_deadline_);
    if (PQenterPipelineMode(conn_) != 1) return die("cannot enter pipeline mode: " + one_line(PQerrorMessage(conn_)));
    state_ = State::Ready;
    watch(kRead);
    ask_to_notice_a_gone_client();  // ahead of the queued queries
    std::vector<Queued> queued = std::exchange(queued_, {});
    for (Queued& q : queued) {
        if (state_ == State::Dead) {  // a send failed: the rest fail with it
            q.op->fail(io_error("connection to PostgreSQL lost", q.stmt->sql));
            q.op->release();
            continue;
        }
        --queries_;  // send() counts it again
        send(q.op, q.stmt, q.prepare);
        q.op->release();  // send() holds its own reference
    }
    if (state_ == State::Dead) return;
    flush();
    if (state_ == State::Ready) owner_.up(*this);
}

void Connection::ask_to_notice_a_gone_client() {
    // A connection kiln leaves (a reply timeout, a worker's end) would otherwise leave
    // its query running on the server until the query next writes. Its answer (or
    // error: a server that refuses the setting) goes nowhere.
    if (spec_.check_interval_ms == 0 || PQserverVersion(conn_) < 140000) return;
    bool prepare;
    std::shared_ptr<Statement> stmt =
        statement("SET client_connection_check_interval = " + std::to_string(spec_.check_interval_ms), &prepare);
    Op* op = new Op(loop_);
    send(op, stmt, prepare);  // holds it until answered
    op->abandon();
}

std::shared_ptr<Connection::Statement> Connection::statement(std::string_view sql, bool* prepare, bool may_forget) {
    auto it = statements_.find(sql);
    *prepare = it == statements_.end();
    if (*prepare) {
        if (may_forget && state_ == State::Ready && statements_.size() >= std::max<size_t>(spec_.statement_cache, 1))
            forget_statements();
        auto stmt = std::make_shared<Statement>(Statement{std::string(sql), "k" + std::to_string(++names_), {},
                                                          mode_ == Mode::Batched && is_select(sql)});
        it = statements_.emplace(stmt->sql, std::move(stmt)).first;
    }
    it->second->used = ++uses_;
    return it->second;
}

void Connection::forget_statements() {
    // Down to three quarters of the bound (so that each DEALLOCATE's Sync, which also
    // closes an open SELECT group, comes once per many new texts, not once per text),
    // the least recently used first, among those no query in flight names (the map's
    // reference is the only one): a Prepare, a use or a group's re-run still to come
    // keeps its statement, so a burst of new texts in flight goes past the bound until
    // the next new one. Only when it is full.
    std::vector<decltype(statements_)::iterator> idle;
    for (auto it = statements_.begin(); it != statements_.end(); ++it)
        if (it->second.use_count() == 1) idle.push_back(it);
    const size_t bound = std::max<size_t>(spec_.statement_cache, 1);
    const size_t keep = std::min(bound - bound / 4, bound - 1);
    size_t excess = statements_.size() > keep ? statements_.size() - keep : 0;
    size_t n = std::min(excess, idle.size());
    std::partial_sort(idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(n), idle.end(),
                      [](const auto& a, const auto& b) { return a->second->used < b->second->used; });
    std::vector<std::shared_ptr<Statement>> drop = std::exchange(undropped_, {});
    for (size_t i = 0; i < n; ++i) {
        drop.push_back(std::move(idle[i]->second));
        statements_.erase(idle[i]);
    }
    for (auto& stmt : drop)
        if (state_ == State::Ready) deallocate(std::move(stmt));
}

void Connection::deallocate(std::shared_ptr<Statement> stmt) {
    auto drop = std::make_shared<Statement>(Statement{"DEALLOCATE " + stmt->name, "", {}, false, true});
    drop->forgets = std::move(stmt);
    Op* op = new Op(loop_);
    send(op, drop, false);  // after every earlier use, in the pipeline's order
    op->abandon();          // its answer goes nowhere (a refusal: see not_forgotten())
}

void Connection::not_forgotten(const std::shared_ptr<Statement>& stmt) {
    // Refused inside a transaction an earlier error aborted (25P02): the server still
    // has it. Back in the cache, where its use still works (its text not prepared
    // again meanwhile), or dropped again with the next ones forgotten.
    auto [it, inserted] = statements_.try_emplace(stmt->sql, stmt);
    if (!inserted && it->second != stmt) undropped_.push_back(stmt);
}

void Connection::submit(Op* op, std::string_view sql, bool keep) {
    assert(state_ == State::Connecting || state_ == State::Ready);
    bool prepare = false;
    std::shared_ptr<Statement> stmt = keep ? statement(sql, &prepare, /*may_forget=*/true)
                                           : std::make_shared<Statement>(Statement{std::string(sql), "", {}, false, true});
    if (state_ == State::Dead) {  // the DEALLOCATE of a statement forgotten found it lost
        op->fail(io_error(lost_, std::string(sql)));
        return;
    }
    if (state_ != State::Ready) {
        op->hold();
        queued_.push_back({op, std::move(stmt), prepare});
        ++queries_;
        return;
    }
    send(op, stmt, prepare);
    if (state_ == State::Ready) flush_soon();
}

void Connection::send(Op* op, const std::shared_ptr<Statement>& stmt, bool prepare, bool alone) {
    // Entries first: if libpq refuses, die() fails them, this op included.
    op->hold();
    ++queries_;
    if (sent_.empty()) awaiting_reply();
    bool grouped = stmt->select && !alone;
    if (!grouped && group_open_) {  // the open group's Sync goes first: order is kept
        close_group();
        if (state_ != State::Ready) {  // die() failed the rest; this op has no entry yet
            op->fail(io_error(lost_, stmt->sql));
            op->release();
            return;
        }
    }
    // No Sync between a Prepare and its first use: if the Prepare fails, the use is
    // aborted and reports the Prepare's error (its SQL's real mistake).
    if (prepare) sent_.push_back({Pending::Prepare, nullptr, stmt, nullptr, grouped});
    sent_.push_back({Pending::Query, op, stmt, nullptr, grouped});
    if (!grouped) sent_.push_back({Pending::Sync});
    if (prepare && !PQsendPrepare(conn_, stmt->name.c_str(), stmt->sql.c_str(), 0, nullptr))
        return die(one_line(PQerrorMessage(conn_)));
    op->param_values(values_);
    int sent = stmt->once ? PQsendQueryParams(conn_, stmt->sql.c_str(), static_cast<int>(values_.size()), nullptr,
                                              values_.data(), nullptr, nullptr, 0)
                          : PQsendQueryPrepared(conn_, stmt->name.c_str(), static_cast<int>(values_.size()),
                                                values_.data(), nullptr, nullptr, 0);
    if (!sent) return die(one_line(PQerrorMessage(conn_)));
    if (grouped) {
        group_open_ = true;  // its values stay: it may have to be sent again alone
        return;
    }
    // libpq copied the values into its buffer. A shared connection's statement keeps
    // them until answered: it may be sent again (a stale plan, see replan()).
    if (mode_ == Mode::Isolated) op->params = Params();
    if (!PQpipelineSync(conn_)) return die(one_line(PQerrorMessage(conn_)));
}

void Connection::close_group() {
    group_open_ = false;
    sent_.push_back({Pending::Sync});
    if (!PQpipelineSync(conn_)) die(one_line(PQerrorMessage(conn_)));
}

void Connection::flush() {
    if (group_open_) {
        close_group();  // flushes, too
        if (state_ != State::Ready) return;
    }
    int r = PQflush(conn_);
    if (r < 0) return die(one_line(PQerrorMessage(conn_)));
    watch(r == 1 ? kRead | EPOLLOUT : kRead);
}

void Connection::flush_soon() { defer(/*drain=*/false); }

void Connection::drain_soon() { defer(/*drain=*/true); }

void Connection::defer(bool drain) {
    if (!deferred_) {
        deferred_ = new Deferred{this};
        loop_.defer(
            [](void* arg) {
                std::unique_ptr<Deferred> work(static_cast<Deferred*>(arg));
                Connection* c = work->conn;
                if (!c) return;  // destroyed meanwhile
                c->deferred_ = nullptr;
                if (work->drain && c->state_ == State::Ready) {
                    if (!c->take_answers()) return;
                    if (!c->ending_.empty()) return c->die(c->ending_);
                }
                if (work->flush && c->state_ == State::Ready) c->flush();
            },
            deferred_);
    }
    (drain ? deferred_->drain : deferred_->flush) = true;
}

void Connection::on_io(uint32_t events) {
    if (state_ == State::Connecting) return poll_connect();
    if (state_ != State::Ready) return;
    if (events & EPOLLOUT) {
        flush();
        if (state_ != State::Ready) return;
    }
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        heard_ms_ = loop_.now_ms();
        bool ok = PQconsumeInput(conn_) == 1;
        if (!take_answers()) return;  // what arrived before a failure still goes to its queries
        if (!ok) return die(one_line(PQerrorMessage(conn_)));
    }
    if (!ending_.empty()) return die(ending_);
    if (PQstatus(conn_) == CONNECTION_BAD) return die(one_line(PQerrorMessage(conn_)));
}

bool Connection::take_answers() {
    drain();
    if (state_ == State::Ready) deliver_notifications();
    return state_ == State::Ready;
}

void Connection::drain() {
    // Bounded, so that one connection's answers do not hold the loop for long. Each
    // place in the pipeline takes at most three results (a statement's own and its
    // null; a Sync's error at commit, its null and its own), but what is left is not
    // left behind: libpq holds it already read, and the socket will not say so again.
    size_t budget = 3 * sent_.size() + 8;
    int nulls = 0;
    while (!sent_.empty()) {
        if (PQisBusy(conn_)) return;  // the rest has not arrived
        if (budget-- == 0) return drain_soon();
        PGresult* r = PQgetResult(conn_);
        Pending& p = sent_.front();
        if (!r) {
            // A command's results end with a null; a Sync's result does not.
            if (p.kind != Pending::Sync && p.got) {
                Pending done = std::move(p);
                sent_.pop_front();
                nulls = 0;
                if (done.grouped) grouped_done(done);
                else if (done.kind == Pending::Query) held_.push_back(std::move(done));  // see the Sync below
                else prepared(done);
                if (state_ != State::Ready) return;
                continue;
            }
            if (++nulls > 1) return;  // nothing more to read now
            continue;
        }
        nulls = 0;
        if (p.kind == Pending::Sync) {
            // Answers wait for their Sync: the implicit transaction it ends may still
            // fail to commit (a deferred constraint, a serialization failure), and then
            // the server answers the Sync with that error instead, every statement it
            // closed undone.
            ExecStatusType st = PQresultStatus(r);
            if (st == PGRES_FATAL_ERROR) {
                commit_failed(r);
                PQclear(r);
                continue;  // the Sync's own result follows
            }
            PQclear(r);
            if (st != PGRES_PIPELINE_SYNC) return die("unexpected answer in the pipeline (" + std::string(PQresStatus(st)) + ")");
            sent_.pop_front();
            settle_group();
            if (state_ != State::Ready) return;
            continue;
        }
        if (p.got) PQclear(p.got);  // one statement, one result: keep the last
        p.got = r;
    }
}

void Connection::deliver_notifications() {
    while (PGnotify* n = PQnotifies(conn_)) {
        owner_.notified(*this, n->relname, n->extra ? n->extra : "", n->be_pid);
        PQfreemem(n);
        if (state_ != State::Ready) return;
    }
}

void Connection::grouped_done(Pending& p) {
    if (!ok_status(p.got)) {
        group_failed_ = true;
        note_ending(p.got);
    }
    if (p.kind == Pending::Prepare) {
        // One that went through is prepared on the server whatever becomes of the
        // group (a rollback does not undo a Parse): it stays in the cache, to be used
        // or dropped. One that failed, or was skipped, is forgotten.
        if (!ok_status(p.got)) group_prepared_.push_back(p.stmt);
        PQclear(p.got);
        return;
    }
    held_.push_back(std::move(p));
}

void Connection::settle_group() {
    if (held_.empty() && group_prepared_.empty()) return;  // the Sync of a statement alone
    std::vector<Pending> held = std::exchange(held_, {});
    std::vector<std::shared_ptr<Statement>> prepared = std::exchange(group_prepared_, {});
    if (!std::exchange(group_failed_, false)) {
        for (Pending& p : held) answer(p);
        return;
    }
    // Rolled back. Its Prepares that did not go through are forgotten (prepared again
    // under a fresh name), and each member goes again alone, in order.
    for (const auto& stmt : prepared) {
        auto it = statements_.find(stmt->sql);
        if (it != statements_.end() && it->second == stmt) statements_.erase(it);
    }
    for (Pending& p : held) {
        PQclear(p.got);
        p.got = nullptr;
        --queries_;  // send() counts it again, or fail_all() forgets it
        if (state_ == State::Ready) {
            bool prepare;
            std::shared_ptr<Statement> stmt = statement(p.stmt->sql, &prepare);
            send(p.op, stmt, prepare, /*alone=*/true);
        } else {
            p.op->fail(io_error("connection to PostgreSQL lost", p.stmt->sql));
        }
        p.op->release();  // send() holds its own reference
    }
    if (state_ == State::Ready) flush_soon();
}

void Connection::commit_failed(const PGresult* r) {
    // Whatever the statements' own results said, they were rolled back: each fails
    // with the commit's error (a group is not sent again: its statements did run).
    group_failed_ = false;
    group_prepared_.clear();
    for (Pending& p : std::exchange(held_, {})) {
        --queries_;
        PQclear(p.got);
        p.op->fail(result_error(r, p.stmt->sql));
        p.op->release();
    }
    note_ending(r);
}

void Connection::note_ending(const PGresult* r) {
    if (PQresultStatus(r) != PGRES_FATAL_ERROR) return;
    const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    if (state && !ends_connection(state)) return;
    const char* primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    ending_ = primary ? primary : one_line(PQresultErrorMessage(r));
    if (ending_.empty()) ending_ = "the server ended the session";
}

void Connection::prepared(Pending& p) {
    if (PQresultStatus(p.got) != PGRES_COMMAND_OK) {
        p.stmt->error = result_error(p.got, p.stmt->sql);
        // Forget it, so a later use prepares again (the table may exist by then).
        auto it = statements_.find(p.stmt->sql);
        if (it != statements_.end() && it->second == p.stmt) statements_.erase(it);
    }
    PQclear(p.got);
}

void Connection::answer(Pending& p) {
    --queries_;
    Op* op = p.op;
    switch (PQresultStatus(p.got)) {
        case PGRES_TUPLES_OK:
        case PGRES_COMMAND_OK:
        case PGRES_EMPTY_QUERY:
            op->succeed(p.got);
            op->release();
            return;
        case PGRES_FATAL_ERROR: {
            const char* state = PQresultErrorField(p.got, PG_DIAG_SQLSTATE);
            std::string_view sqlstate = state ? state : "";
            if (p.stmt->forgets && sqlstate == "25P02") not_forgotten(p.stmt->forgets);  // (else it may be gone)
            if (sqlstate == "0A000" && !p.stmt->once && replan(p)) return;
            if (p.stmt->error && sqlstate == "26000") op->fail(p.stmt->error);  // its Prepare failed
            else op->fail(result_error(p.got, p.stmt->sql));
            note_ending(p.got);  // the server may be closing the session
            break;
        }
        case PGRES_PIPELINE_ABORTED:
            if (p.stmt->forgets) not_forgotten(p.stmt->forgets);
            op->fail(p.stmt->error ? p.stmt->error
                                   : make_error("", "aborted by an earlier error in the pipeline", p.stmt->sql));
            break;
        default:  // COPY and the like: not in pipeline mode
            op->fail(std::make_exception_ptr(db::Error(db::ErrorKind::Misuse, 0,
                                                       std::string("unsupported result: ") + PQresStatus(PQresultStatus(p.got)),
                                                       p.stmt->sql)));
            break;
    }
    PQclear(p.got);
    op->release();
}

bool Connection::replan(Pending& p) {
    // 0A000 on a prepared statement is, in practice, "cached plan must not change
    // result type": the table changed under it (ALTER TABLE, a column added under a
    // SELECT *). Its text may be fine: it is forgotten, so that its next use prepares
    // it again. On a shared connection the statement failed alone, in its own implicit
    // transaction (nothing of it stays), so it goes again now, once; inside a
    // transaction the transaction has failed, and the error is the caller's.
    auto it = statements_.find(p.stmt->sql);
    if (it != statements_.end() && it->second == p.stmt) statements_.erase(it);
    if (mode_ != Mode::Batched || p.op->replanned || state_ != State::Ready) return false;
    p.op->replanned = true;
    PQclear(p.got);
    p.got = nullptr;
    bool prepare;
    std::shared_ptr<Statement> stmt = statement(p.stmt->sql, &prepare);
    send(p.op, stmt, prepare, /*alone=*/true);  // counts it again (answer() uncounted it)
    if (state_ == State::Ready) flush_soon();
    p.op->release();  // send() holds its own reference
    return true;
}

void Connection::die(const std::string& why) {
    if (state_ == State::Dead) return;
    bool was_up = state_ == State::Ready;
    state_ = State::Dead;
    unwatch();
    loop_.deadlines().disarm(connect_deadline_);
    loop_.deadlines().disarm(reply_deadline_);
    std::string where;
    if (conn_ && PQhost(conn_)) where = std::string(" at ") + PQhost(conn_) + ":" + (PQport(conn_) ? PQport(conn_) : "");
    std::string message = was_up ? "connection to PostgreSQL lost: " + why : "cannot connect to PostgreSQL" + where + ": " + why;
    lost_ = message;
    fail_all(message);
    if (conn_) PQfinish(conn_);
    conn_ = nullptr;
    owner_.down(*this, message);
}

void Connection::fail_all(const std::string& message) {
    std::deque<Pending> sent = std::exchange(sent_, {});
    std::vector<Queued> queued = std::exchange(queued_, {});
    std::vector<Pending> held = std::exchange(held_, {});
    group_prepared_.clear();
    group_open_ = group_failed_ = false;
    queries_ = 0;
    for (Pending& p : held) {  // answered, but their group never settled
        PQclear(p.got);
        p.op->fail(io_error(message, p.stmt->sql));
        p.op->release();
    }
    for (Pending& p : sent) {
        if (p.got) PQclear(p.got);
        if (p.kind != Pending::Query) continue;
        p.op->fail(io_error(message, p.stmt->sql));
        p.op->release();
    }
    for (Queued& q : queued) {
        q.op->fail(io_error(message, q.stmt->sql));
        q.op->release();
    }
}

void Connection::watch(uint32_t events, bool again) {
    int fd = PQsocket(conn_);
    if (fd == fd_ && events == events_ && !again) return;
    // remove + add: a changed fd (libpq may open a new socket while connecting) or
    // a changed interest; rare (connect steps, a full send buffer).
    if (fd_ >= 0) loop_.remove(fd_);
    fd_ = fd;
    events_ = events;
    if (fd_ >= 0) loop_.add(fd_, events_, this);
}

void Connection::unwatch() {
    if (fd_ >= 0) loop_.remove(fd_);
    fd_ = -1;
    events_ = 0;
}

// The clock is not re-armed on every read (a heap operation per answer): the deadline
// fires at the first moment the session could be overdue and looks at when the server
// was last heard from.
void Connection::awaiting_reply() {
    heard_ms_ = loop_.now_ms();
    if (spec_.reply_timeout_ms && !reply_deadline_.armed())
        loop_.deadlines().arm(reply_deadline_, heard_ms_ + spec_.reply_timeout_ms);
}

void Connection::reply_deadline() {
    if (state_ != State::Ready || sent_.empty()) return;  // nothing is owed: the clock stops
    uint64_t due = heard_ms_ + spec_.reply_timeout_ms;
    if (loop_.now_ms() < due) return loop_.deadlines().arm(reply_deadline_, due);
    die("no answer from PostgreSQL in " + std::to_string(spec_.reply_timeout_ms) + " ms");
}

}  // namespace kiln::pg::detail
