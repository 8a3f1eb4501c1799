// The coroutine side of kiln::redis: arguments, replies, Command, Client and its
// typed calls, and the URL.
#include <kiln/redis.hpp>

#include <charconv>
#include <cstring>

#include "redis/hub.hpp"
#include "redis/op.hpp"
#include "redis/pool.hpp"

namespace kiln::redis {

// ------------------------------------------------------------------ Args

void Args::add(std::string_view v) {
    char len[24];
    auto [end, ec] = std::to_chars(len, len + sizeof len, v.size());
    body_ += '$';
    body_.append(len, end);
    body_ += "\r\n";
    body_.append(v);
    body_ += "\r\n";
    ++count_;
}

std::string_view Args::wire() {
    char head[kHead];
    head[0] = '*';
    auto [end, ec] = std::to_chars(head + 1, head + sizeof head - 2, count_);
    *end++ = '\r';
    *end++ = '\n';
    size_t n = static_cast<size_t>(end - head);
    std::memcpy(body_.data() + kHead - n, head, n);
    return std::string_view(body_).substr(kHead - n);
}

// ------------------------------------------------------------------ Reply

void Reply::mismatch(const char* wanted) const {
    static const char* const names[] = {"nil", "a string", "a status", "an integer", "an array", "an error"};
    throw Error(Error::Kind::Type, std::string("Redis replied with ") + names[static_cast<int>(type_)] +
                                       " where " + wanted + " was expected");
}

std::string_view Reply::str() const {
    if (type_ != Type::String && type_ != Type::Status && type_ != Type::Error) mismatch("a string");
    return str_;
}

int64_t Reply::integer() const {
    if (type_ != Type::Integer) mismatch("an integer");
    return integer_;
}

const std::vector<Reply>& Reply::elements() const {
    if (type_ != Type::Array) mismatch("an array");
    return elements_;
}

std::optional<std::string> Reply::optional_string() const {
    if (type_ == Type::Nil) return std::nullopt;
    if (type_ != Type::String) mismatch("a string or nil");
    return str_;
}

// ------------------------------------------------------------------ Command

Command::~Command() {
    if (op_) op_->abandon();
}

bool Command::await_ready() const noexcept { return op_->done; }

bool Command::await_suspend(std::coroutine_handle<> h) { return op_->suspend(h); }

Reply Command::await_resume() {
    op_->settle();
    return std::move(op_->reply);
}

// ------------------------------------------------------------------ Client

Client::Client(Options options) : pool_(std::make_unique<detail::Pool>(std::move(options))) {}

Client::~Client() = default;

Command Client::send(Args args) { return pool_->send(args); }  // its own copy: wire() writes into it

Task<std::optional<std::string>> Client::get(std::string key) {
    Reply r = co_await command("GET", key);
    co_return r.optional_string();
}

Task<> Client::set(std::string key, std::string value, std::chrono::seconds ttl) {
    if (ttl.count() > 0) co_await command("SET", key, value, "EX", static_cast<int64_t>(ttl.count()));
    else co_await command("SET", key, value);
}

Task<int64_t> Client::del(std::string key) {
    Reply r = co_await command("DEL", key);
    co_return r.integer();
}

Task<bool> Client::expire(std::string key, std::chrono::seconds ttl) {
    Reply r = co_await command("EXPIRE", key, static_cast<int64_t>(ttl.count()));
    co_return r.integer() == 1;
}

Task<int64_t> Client::incr(std::string key) {
    Reply r = co_await command("INCR", key);
    co_return r.integer();
}

Task<int64_t> Client::publish(std::string channel, std::string message) {
    Reply r = co_await command("PUBLISH", channel, message);
    co_return r.integer();
}

size_t Client::connected() const { return pool_->connected(); }

// ------------------------------------------------------------------ settings

Options options_from(const ServerOptions& server) {
    Options o;
    o.url = server.redis_url;
    o.pool = server.redis_pool;
    o.command_timeout = std::chrono::milliseconds(server.redis_command_timeout_ms);
    o.probe_channel = server.redis_prefix + "probe";  // among the app's channels, for an ACL
    return o;
}

}  // namespace kiln::redis
