#include "redis/connection.hpp"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <cassert>
#include <memory>

namespace kiln::redis::detail {
namespace {
char subscriber_tag;  // the privdata of subscription callbacks

Reply convert(const redisReply* r) {
    switch (r->type) {
    case REDIS_REPLY_STRING: return Reply::make(Reply::Type::String, std::string(r->str, r->len));
    case REDIS_REPLY_STATUS: return Reply::make(Reply::Type::Status, std::string(r->str, r->len));
    case REDIS_REPLY_ERROR: return Reply::make(Reply::Type::Error, std::string(r->str, r->len));
    case REDIS_REPLY_INTEGER: return Reply::make_integer(r->integer);
    case REDIS_REPLY_ARRAY: {
        std::vector<Reply> elements;
        elements.reserve(r->elements);
        for (size_t i = 0; i < r->elements; ++i) elements.push_back(convert(r->element[i]));
        return Reply::make_array(std::move(elements));
    }
    default: return Reply::nil();
    }
}

// An error answer's kind by its code, the first word: the codes by which Redis says
// it cannot serve now (and a client may try again soon) are Busy, the rest Server.
Error::Kind answer_kind(std::string_view message) {
    std::string_view code = message.substr(0, message.find(' '));
    for (std::string_view busy : {"LOADING", "BUSY", "MASTERDOWN", "READONLY", "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS"})
        if (code == busy) return Error::Kind::Busy;
    return Error::Kind::Server;
}

std::string bulk(std::string_view s) { return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n"; }
}  // namespace

std::exception_ptr io_error(const std::string& message) {
    return std::make_exception_ptr(Error(Error::Kind::Io, message));
}

Connection::Connection(net::Loop& loop, Owner& owner, const Endpoint& endpoint, const Options& options, Mode mode)
    : loop_(loop), owner_(owner), endpoint_(endpoint), options_(options), mode_(mode) {
    deadline_.owner = this;
    deadline_.fire = [](net::Deadline* d) { static_cast<Connection*>(d->owner)->timed_out(); };
    probe_.owner = this;
    probe_.fire = [](net::Deadline* d) { static_cast<Connection*>(d->owner)->probe(); };
}

Connection::~Connection() {
    closing_ = true;
    if (ticket_) ticket_->conn = nullptr;
    loop_.deadlines().disarm(deadline_);
    loop_.deadlines().disarm(probe_);
    if (ac_) close("the Redis client was closed");
    for (Sent& s : std::exchange(in_flight_, {})) {  // none left by hiredis, unless it never ran
        if (s.op) {
            s.op->fail(io_error("the Redis client was closed"));
            s.op->release();
        }
    }
}

void Connection::start() {
    assert(state_ == State::Idle);
    state_ = State::Connecting;
    ac_ = endpoint_.unix_path.empty() ? redisAsyncConnect(endpoint_.host.c_str(), endpoint_.port)
                                      : redisAsyncConnectUnix(endpoint_.unix_path.c_str());
    if (!ac_ || ac_->err) {
        std::string why = ac_ ? "cannot connect to Redis: " + std::string(ac_->errstr) : "out of memory";
        if (ac_) redisAsyncFree(ac_);  // no hooks yet: nothing calls back
        ac_ = nullptr;
        return die(why);
    }
    ac_->data = this;
    ac_->ev.data = this;
    ac_->ev.addRead = ev_add_read;
    ac_->ev.delRead = ev_del_read;
    ac_->ev.addWrite = ev_add_write;
    ac_->ev.delWrite = ev_del_write;
    ac_->ev.cleanup = ev_cleanup;
    redisAsyncSetConnectCallback(ac_, on_connect);  // the end is learned from ev_cleanup
    fd_ = ac_->c.fd;
    events_ = EPOLLOUT;  // connect(2) completes when the socket turns writable
    loop_.add(fd_, events_, this);
    if (!endpoint_.password.empty()) {
        std::string auth = endpoint_.user.empty() ? "*2\r\n" + bulk("AUTH") + bulk(endpoint_.password)
                                                  : "*3\r\n" + bulk("AUTH") + bulk(endpoint_.user) + bulk(endpoint_.password);
        send_internal(auth);
    }
    if (endpoint_.db != 0) send_internal("*2\r\n" + bulk("SELECT") + bulk(std::to_string(endpoint_.db)));
    if (mode_ == Mode::Commands) send_internal("*1\r\n" + bulk("PING"));  // up once it answers
    uint64_t timeout = static_cast<uint64_t>(std::max<int64_t>(options_.connect_timeout.count(), 1));
    loop_.deadlines().arm(deadline_, loop_.now_ms() + timeout);
}

void Connection::send_internal(const std::string& wire) {
    ++setup_left_;
    in_flight_.push_back({nullptr, loop_.now_ms()});
    redisAsyncFormattedCommand(ac_, on_reply, nullptr, wire.data(), wire.size());
}

void Connection::submit(Op* op, std::string_view wire) {
    assert(!dead() && mode_ == Mode::Commands);
    op->hold();
    bool was_idle = in_flight_.empty();
    in_flight_.push_back({op, loop_.now_ms()});
    if (redisAsyncFormattedCommand(ac_, on_reply, op, wire.data(), wire.size()) != REDIS_OK) {
        in_flight_.pop_back();
        op->release();
        op->fail(io_error("the Redis connection is closing"));
        return;
    }
    if (was_idle && state_ == State::Ready) arm_timeout();
}

void Connection::subscription(const char* verb, const std::string& channel) {
    assert(!dead() && mode_ == Mode::Subscriber);
    std::string wire = "*2\r\n" + bulk(verb) + bulk(channel);
    redisAsyncFormattedCommand(ac_, on_reply, &subscriber_tag, wire.data(), wire.size());
}

// ------------------------------------------------------------------ hiredis's callbacks

void Connection::on_connect(const redisAsyncContext* ac, int status) {
    auto* self = static_cast<Connection*>(ac->data);
    if (status != REDIS_OK) return;  // hiredis frees the context next: ev_cleanup reports it
    self->state_ = State::Ready;
    self->update_watch();  // EPOLLOUT only if hiredis still has bytes to send
    // Commands: the connect deadline stays until the set-up is answered (answered()).
    if (self->mode_ == Mode::Commands) return;
    self->loop_.deadlines().disarm(self->deadline_);
    if (self->options_.command_timeout.count() > 0) {
        self->subscription("SUBSCRIBE", self->options_.probe_channel);  // for good: the connection never leaves pub/sub mode
        self->heard_ = true;
        self->loop_.deadlines().arm(self->probe_, self->loop_.now_ms() +
                                                      static_cast<uint64_t>(self->options_.command_timeout.count()));
    } else {
        self->answered();  // nothing to wait for an answer to
    }
}

void Connection::on_reply(redisAsyncContext* ac, void* reply, void* privdata) {
    auto* self = static_cast<Connection*>(ac->data);
    auto* r = static_cast<redisReply*>(reply);
    if (privdata == &subscriber_tag) {  // a confirmation (the probe's too) or a message
        self->heard_ = true;
        if (!r) return;
        self->answered();
        self->deliver_message(r);
        return;
    }
    self->reply(r, privdata);
}

void Connection::answered() {
    if (answered_) return;
    answered_ = true;
    if (mode_ == Mode::Commands) {  // from the connect deadline to the commands' own
        loop_.deadlines().disarm(deadline_);
        arm_timeout();
    }
    owner_.up(*this);
}

void Connection::reply(redisReply* r, void* privdata) {
    // Replies come in the order of their commands. One that does not (a command that
    // changed the connection's protocol: Pool::send refuses those) ends the connection.
    if (in_flight_.empty() || in_flight_.front().op != privdata) {
        error_ = "a Redis reply out of order";
        auto it = std::find_if(in_flight_.begin(), in_flight_.end(), [&](const Sent& x) { return x.op == privdata; });
        if (privdata && it != in_flight_.end()) {  // its callback is spent: fail it here
            Op* op = it->op;
            in_flight_.erase(it);
            op->fail(io_error(error_));
            op->release();
        }
        close_soon();
        return;
    }
    Sent s = in_flight_.front();
    in_flight_.pop_front();
    if (!s.op) {  // AUTH, SELECT or the set-up PING
        --setup_left_;
        if (r && r->type == REDIS_REPLY_ERROR) {
            error_ = "Redis refused the connection's set-up: " + std::string(r->str, r->len);
            close_soon();
        } else if (r && setup_left_ == 0 && error_.empty()) {  // all of it taken
            answered();
        }
        return;
    }
    if (!r) {
        s.op->fail(io_error("connection to Redis lost: " + hiredis_error()));
    } else if (r->type == REDIS_REPLY_ERROR) {
        std::string message(r->str, r->len);
        Error::Kind kind = answer_kind(message);
        s.op->fail(std::make_exception_ptr(Error(kind, std::move(message))));
    } else {
        s.op->succeed(convert(r));
    }
    s.op->release();
}

void Connection::deliver_message(redisReply* r) {
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 3) return;
    const redisReply* kind = r->element[0];
    const redisReply* channel = r->element[1];
    if (kind->type != REDIS_REPLY_STRING || channel->type != REDIS_REPLY_STRING) return;
    std::string_view k(kind->str, kind->len);
    std::string ch(channel->str, channel->len);
    if (k == "message" && r->element[2]->type == REDIS_REPLY_STRING) {
        owner_.message(*this, std::move(ch), std::string(r->element[2]->str, r->element[2]->len));
    } else if (k == "subscribe") {
        owner_.subscribed(*this, ch);
    }
}

// ------------------------------------------------------------------ the event library

void Connection::ev_add_read(void* self) {
    auto* c = static_cast<Connection*>(self);
    c->want_read_ = true;
    c->update_watch();
}

void Connection::ev_del_read(void* self) {
    auto* c = static_cast<Connection*>(self);
    c->want_read_ = false;
    c->update_watch();
}

void Connection::ev_add_write(void* self) {
    auto* c = static_cast<Connection*>(self);
    // Commands made while up are written at the end of this loop iteration, all in
    // one write; only a full send buffer (an addWrite during that write) waits for
    // EPOLLOUT.
    if (c->state_ == State::Ready && !c->flushing_) return c->flush_soon();
    c->want_write_ = true;
    c->update_watch();
}

void Connection::ev_del_write(void* self) {
    auto* c = static_cast<Connection*>(self);
    c->want_write_ = false;
    c->update_watch();
}

void Connection::ev_cleanup(void* self) {
    auto* c = static_cast<Connection*>(self);
    std::string why = !c->error_.empty() ? c->error_ : c->hiredis_error();
    if (c->fd_ >= 0) c->loop_.remove(c->fd_);  // before hiredis closes it
    c->fd_ = -1;
    c->ac_ = nullptr;
    c->die(why);
}

std::string Connection::hiredis_error() const {
    if (!error_.empty()) return error_;
    if (ac_ && ac_->err) return ac_->errstr;
    return "the connection was closed";
}

void Connection::update_watch() {
    if (fd_ < 0) return;
    uint32_t events = (want_read_ ? EPOLLIN : 0u) | (want_write_ || state_ == State::Connecting ? EPOLLOUT : 0u);
    if (events == events_) return;
    events_ = events;
    loop_.modify(fd_, events_, this);
}

void Connection::on_io(uint32_t events) {
    if (!ac_) return;
    if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) {
        if (state_ == State::Connecting || want_write_) redisAsyncHandleWrite(ac_);  // may free the context
        if (!ac_) return;
    }
    if (events & EPOLLIN) heard_ = true;  // anything at all: the server is alive
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) redisAsyncHandleRead(ac_);
}

Connection::Ticket& Connection::ticket() {
    if (ticket_) return *ticket_;
    ticket_ = new Ticket{this};
    loop_.defer(
        [](void* arg) {
            std::unique_ptr<Ticket> t(static_cast<Ticket*>(arg));
            Connection* c = t->conn;
            if (!c) return;  // destroyed meanwhile
            c->ticket_ = nullptr;
            if (!c->ac_) return;
            if (t->close) return c->close(c->error_);
            if (t->flush && c->state_ == State::Ready) {
                c->flushing_ = true;
                redisAsyncHandleWrite(c->ac_);  // may free the context (a write error)
                c->flushing_ = false;
            }
        },
        ticket_);
    return *ticket_;
}

void Connection::flush_soon() { ticket().flush = true; }

void Connection::close_soon() { ticket().close = true; }

void Connection::close(const std::string& why) {
    if (error_.empty()) error_ = why;
    redisAsyncFree(ac_);  // fails what it carries, then ev_cleanup
}

// ------------------------------------------------------------------ time-outs and the end

void Connection::arm_timeout() {
    if (options_.command_timeout.count() <= 0 || in_flight_.empty()) return;
    uint64_t at = in_flight_.front().at_ms + static_cast<uint64_t>(options_.command_timeout.count());
    loop_.deadlines().arm(deadline_, at);
}

void Connection::timed_out() {
    if (!ac_) return;
    if (state_ == State::Connecting) {
        return close("connect to Redis timed out after " + std::to_string(options_.connect_timeout.count()) + " ms");
    }
    if (!answered_) {  // connected, but the set-up got no answer (a stopped server accepts)
        return close("Redis did not answer within " + std::to_string(options_.connect_timeout.count()) +
                     " ms of the connect");
    }
    if (in_flight_.empty()) return;
    uint64_t limit = static_cast<uint64_t>(options_.command_timeout.count());
    if (loop_.now_ms() - in_flight_.front().at_ms >= limit)
        return close("no reply from Redis in " + std::to_string(limit) + " ms");
    arm_timeout();  // the oldest was answered meanwhile: watch the one now oldest
}

void Connection::probe() {
    if (!ac_ || state_ != State::Ready) return;
    uint64_t limit = static_cast<uint64_t>(options_.command_timeout.count());
    if (pinged_ms_ && !heard_) return close("no reply from Redis in " + std::to_string(limit) + " ms");
    heard_ = false;
    pinged_ms_ = loop_.now_ms();
    loop_.deadlines().arm(probe_, pinged_ms_ + limit);
    subscription("SUBSCRIBE", options_.probe_channel);  // again: Redis confirms it, which is all we need
}

void Connection::die(const std::string& why) {
    if (state_ == State::Dead) return;
    state_ = State::Dead;
    loop_.deadlines().disarm(deadline_);
    loop_.deadlines().disarm(probe_);
    for (Sent& s : std::exchange(in_flight_, {})) {
        if (s.op) {
            s.op->fail(io_error("connection to Redis lost: " + why));
            s.op->release();
        }
    }
    if (!closing_) owner_.down(*this, why);
}

}  // namespace kiln::redis::detail
