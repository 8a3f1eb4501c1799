// kiln::redis: Redis on kiln's event loop (hiredis's async context, driven by the
// loop itself: no extra thread). Commands from every coroutine of a loop share its
// connections, pipelined; each awaits its own reply.
//
//   kiln::redis::Client redis({.url = "redis://127.0.0.1:6379/0"});
//   co_await redis.set("greeting", "hello", std::chrono::seconds(60));
//   std::optional<std::string> g = co_await redis.get("greeting");
//   kiln::redis::Reply r = co_await redis.command("HINCRBY", "visits", path, 1);
//
// Every argument is sent as one bulk string, never spliced into a command line:
// a value holding spaces, quotes or CRLF is just bytes. Integers and floating point
// are written in decimal; a std::vector of them (or of strings) is one argument each.
//
// A Client belongs to the event loop thread that first uses it (another thread gets
// std::logic_error); its commands resume their coroutines on that thread. It keeps
// `pool` connections up by itself: a lost connection fails the commands it carried
// (Error::Kind::Io), then reconnects with back-off; while none is up a command fails
// at once with the last reason, instead of waiting. A reply slower than
// `command_timeout` closes its connection (the server is stuck or gone), failing
// what it carried; the connection of subscriptions, which waits without owing a
// reply, is probed that often (it subscribes again to a channel of its own,
// Options::probe_channel) and is closed when the next probe finds nothing heard since.
#pragma once
#include <charconv>
#include <chrono>
#include <concepts>
#include <coroutine>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <kiln/server.hpp>
#include <kiln/session.hpp>
#include <kiln/task.hpp>
#include <kiln/unavailable.hpp>

namespace kiln::redis {

namespace detail {
struct Op;  // one command in flight (src/redis/op.hpp)
class Pool;
class Hub;
struct SubscriptionState;
}  // namespace detail

// Kinds Io and Busy are transient (<kiln/unavailable.hpp>): a handler that lets one
// escape answers 503 with Retry-After, not 500.
class Error : public std::runtime_error, public TransientError {
public:
    enum class Kind : uint8_t {
        Io,      // no connection, or it was lost with the command in flight
        Server,  // Redis answered with an error (-ERR, -WRONGTYPE, ...)
        Busy,    // Redis answered that it cannot serve this now: -LOADING (reading its
                 // data at start), -BUSY (a script runs), -MASTERDOWN, -READONLY (a
                 // replica, as after a fail-over), -TRYAGAIN, -CLUSTERDOWN, -NOREPLICAS
        Type,    // the reply is not of the type the call reads
        Misuse,  // a call kiln refuses (an empty command name, a bad URL)
    };
    Error(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    Kind kind() const { return kind_; }
    bool transient() const noexcept override { return kind_ == Kind::Io || kind_ == Kind::Busy; }

private:
    Kind kind_;
};

// ------------------------------------------------------------------ arguments

// A command's arguments, encoded for the wire as they are added (copied: nothing
// given to command() needs to outlive the call).
class Args {
public:
    Args() : body_(kHead, ' ') {}
    void add(std::string_view v);
    int size() const { return count_; }
    // The command in RESP: *N then each argument as a bulk string. Written in place
    // (the count goes into room kept ahead of the arguments): valid while the Args lives.
    std::string_view wire();

private:
    static constexpr size_t kHead = 16;  // room for "*N\r\n"
    std::string body_;
    int count_ = 0;
};

// How a C++ type becomes arguments: static void write(Args&, const T&).
template <class T>
struct Arg;

template <class T>
    requires std::is_convertible_v<const T&, std::string_view>
struct Arg<T> {
    static void write(Args& a, const T& v) { a.add(std::string_view(v)); }
};

template <std::integral T>
    requires(!std::is_same_v<T, bool>)
struct Arg<T> {
    static void write(Args& a, T v) {
        char buf[24];
        auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
        a.add(std::string_view(buf, static_cast<size_t>(end - buf)));
    }
};

template <std::floating_point T>
struct Arg<T> {
    static void write(Args& a, T v) {
        char buf[32];
        auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<double>(v));
        a.add(std::string_view(buf, static_cast<size_t>(end - buf)));
    }
};

template <class T>
struct Arg<std::vector<T>> {
    static void write(Args& a, const std::vector<T>& values) {
        for (const T& v : values) Arg<T>::write(a, v);
    }
};

namespace detail {
template <class... A>
Args args_of(std::string_view name, const A&... args) {
    Args out;
    out.add(name);
    (Arg<std::remove_cvref_t<A>>::write(out, args), ...);
    return out;
}
}  // namespace detail

// ------------------------------------------------------------------ replies

// One reply, copied out of hiredis (it owns its bytes).
class Reply {
public:
    enum class Type : uint8_t { Nil, String, Status, Integer, Array, Error };

    Reply() = default;
    Type type() const { return type_; }
    bool is_nil() const { return type_ == Type::Nil; }
    // String, Status or Error text; throws Error(Type) for the others.
    std::string_view str() const;
    int64_t integer() const;                      // Integer; throws Error(Type) otherwise
    const std::vector<Reply>& elements() const;   // Array; throws Error(Type) otherwise
    // A String as is, Nil as nullopt.
    std::optional<std::string> optional_string() const;

    // Built by the client from hiredis's replies (and by tests).
    static Reply nil() { return Reply(); }
    static Reply make(Type type, std::string text) {
        Reply r;
        r.type_ = type;
        r.str_ = std::move(text);
        return r;
    }
    static Reply make_integer(int64_t v) {
        Reply r;
        r.type_ = Type::Integer;
        r.integer_ = v;
        return r;
    }
    static Reply make_array(std::vector<Reply> elements) {
        Reply r;
        r.type_ = Type::Array;
        r.elements_ = std::move(elements);
        return r;
    }

private:
    [[noreturn]] void mismatch(const char* wanted) const;
    Type type_ = Type::Nil;
    int64_t integer_ = 0;
    std::string str_;
    std::vector<Reply> elements_;
};

// What co_await client.command(...) awaits. The command is sent when command() is
// called, so several commands made before their co_awaits share one write and one
// round trip. Await it once; dropping it unawaited is fine (its reply is dropped).
class [[nodiscard]] Command {
public:
    Command(Command&& other) noexcept : op_(std::exchange(other.op_, nullptr)) {}
    Command& operator=(Command&&) = delete;
    ~Command();

    bool await_ready() const noexcept;
    bool await_suspend(std::coroutine_handle<> h);
    // The reply; Error(Server) for an error reply, Error(Io) if the connection was
    // lost or there is none; kiln::Cancelled if the request was cancelled.
    Reply await_resume();

private:
    friend class detail::Pool;
    friend class detail::Hub;
    explicit Command(detail::Op* op) : op_(op) {}
    detail::Op* op_;
};

// ------------------------------------------------------------------ pub/sub

struct Message {
    std::string channel;
    std::string payload;
};

// What co_await subscription.next() awaits.
class [[nodiscard]] NextMessage {
public:
    NextMessage(NextMessage&& other) noexcept : s_(other.s_), op_(std::exchange(other.op_, nullptr)) {}
    NextMessage& operator=(NextMessage&&) = delete;
    ~NextMessage();
    bool await_ready() const noexcept;
    bool await_suspend(std::coroutine_handle<> h);
    Message await_resume();

private:
    friend class Subscription;
    explicit NextMessage(detail::SubscriptionState* s) : s_(s) {}
    detail::SubscriptionState* s_;
    detail::Op* op_ = nullptr;
};

// A subscription to one channel (Client::subscribe), as a stream:
//   kiln::redis::Subscription news = co_await redis.subscribe("news");
//   for (;;) { kiln::redis::Message m = co_await news.next(); push(m.payload); }
// Messages are queued from the moment subscribe() returns until read (at most
// 65,536 and 64 MiB; past that the oldest go and next() throws Error(Io) saying how
// many). If the connection carrying it is lost, next() throws Error(Io) once, after
// the messages that came before the loss: what was published until it is back is
// missed (Redis pub/sub keeps nothing); it reconnects
// and subscribes again by itself. One next() at a time. REQUIRES: used on its
// Client's loop thread; it may outlive the Client (next() then throws Error(Io)).
class Subscription {
public:
    Subscription(Subscription&& other) noexcept;
    Subscription& operator=(Subscription&&) = delete;
    ~Subscription();  // UNSUBSCRIBE when it was its channel's last Subscription

    NextMessage next();
    const std::string& channel() const;
    size_t pending() const;

private:
    friend class Client;
    explicit Subscription(std::unique_ptr<detail::SubscriptionState> s);
    std::unique_ptr<detail::SubscriptionState> s_;
};

// ------------------------------------------------------------------ client

struct Options {
    // redis://[[user]:password@]host[:port][/db]  (host an address: hiredis resolves
    // names with a blocking lookup), or unix:///path/to/redis.sock[?db=N].
    std::string url = "redis://127.0.0.1:6379";
    size_t pool = 1;  // connections kept up per loop (each pipelines any number of commands)
    std::chrono::milliseconds connect_timeout{2000};
    // The oldest reply awaited longer than this closes the connection; 0: never.
    std::chrono::milliseconds command_timeout{5000};
    // The back-off after a loss: doubling from min to max, each wait a random half to
    // all of it (so that the connections a server restart cut come back spread out).
    std::chrono::milliseconds reconnect_min{50};
    std::chrono::milliseconds reconnect_max{2000};
    // The channel the connection of subscriptions stays subscribed to and probes on
    // (nothing is published there). Under an ACL that limits a user's channels (Redis
    // 7's default for a new user), one it may subscribe to: options_from() gives
    // <redis.prefix>probe.
    std::string probe_channel = "kiln:probe";
};

// Where a URL leads; throws Error(Misuse) naming what is wrong with it.
struct Endpoint {
    std::string host;  // empty for a unix socket
    int port = 6379;
    std::string unix_path;
    std::string user, password;
    int db = 0;
};
Endpoint parse_url(std::string_view url);

class Client {
public:
    // Connects nothing yet (the URL is checked: Error(Misuse)); the first command
    // binds the client to its loop thread and opens the pool.
    explicit Client(Options options);
    // REQUIRES: on its loop thread, while that loop lives. Commands in flight fail
    // with Error(Io).
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // Any command, its arguments bound: command("HSET", key, field, value). Those
    // that would change or hold the connection every coroutine of the loop shares
    // fail with Error(Misuse): pub/sub verbs (use subscribe()), MULTI/EXEC/WATCH (use
    // EVAL), SELECT, AUTH, HELLO, RESET, QUIT, MONITOR, CLIENT REPLY/TRACKING, and
    // blocking reads (BLPOP and its kin, WAIT, XREAD with BLOCK).
    template <class... A>
    Command command(std::string_view name, const A&... args) {
        return send(detail::args_of(name, args...));
    }
    Command send(Args args);

    Task<std::optional<std::string>> get(std::string key);
    // SET key value, with an expiry when ttl > 0.
    Task<> set(std::string key, std::string value, std::chrono::seconds ttl = std::chrono::seconds(0));
    Task<int64_t> del(std::string key);                          // keys removed (0 or 1)
    Task<bool> expire(std::string key, std::chrono::seconds ttl);  // false: no such key
    Task<int64_t> incr(std::string key);
    Task<int64_t> publish(std::string channel, std::string message);  // subscribers reached

    // SUBSCRIBE channel on a connection kept for subscriptions; resumes once it took
    // effect (a message published after this returned is delivered).
    Task<Subscription> subscribe(std::string channel);

    size_t connected() const;  // connections up now

private:
    std::unique_ptr<detail::Pool> pool_;
};

// One Client per event loop thread, made on that thread's first local() with the
// same options and closed when its loop goes away (as pg::PerLoop):
//   kiln::redis::PerLoop redis;
//   app.on_worker_start([&](const kiln::ServerOptions& o) { redis.configure(kiln::redis::options_from(o)); });
//   ... co_await redis.local().get("k");
class PerLoop {
public:
    explicit PerLoop(Options options = {});
    ~PerLoop();
    PerLoop(const PerLoop&) = delete;
    PerLoop& operator=(const PerLoop&) = delete;

    void configure(Options options);
    Client& local();  // only on an event loop thread (else std::logic_error)

private:
    struct State;
    std::unique_ptr<State> s_;
};

// A read-through cache on Redis:
//   kiln::redis::Cache cache(redis, "page:");
//   std::string html = co_await cache.get_or_set("index", 30s, [&]() -> kiln::Task<std::string> { ... });
// A hit returns the stored value; a miss runs fn, stores what it returns with the
// ttl and returns it. Redis unreachable, loading, or refusing the write (maxmemory,
// a replica): fn runs and its value is returned, unstored (a cache outage slows
// pages, it does not fail them); a ttl of 0 or less stores nothing. What fn throws
// reaches the caller; nothing is stored.
// Misses of one key on one event loop run fn once: the requests that miss while it
// runs wait for its value, or get what it threw (an expiry under load costs one
// computation per loop, not one per request). If the request running fn is cancelled,
// one of those waiting runs it again. invalidate() detaches this loop's computation of
// the key: later misses compute anew, and its value is not stored (other loops and
// processes may still store a value computed before; keep the ttl short). fn must not
// get_or_set its own key.
class Cache {
public:
    explicit Cache(PerLoop& redis, std::string prefix = "kiln:cache:");

    Task<std::string> get_or_set(std::string key, std::chrono::seconds ttl, std::function<Task<std::string>()> fn);
    Task<> invalidate(std::string key);

private:
    PerLoop& redis_;
    std::string prefix_;
};

// Sessions in Redis (`session.store = "redis"`; App::session_store): every node
// reads and writes the same sessions. One key per session, <prefix>session:<id in
// hex>, holding its creation time and its data; its TTL is the idle timeout,
// refreshed by every load (GETEX), and a session past its absolute age is refused
// on read and deleted. An update writes only if the key still exists and a rename
// (Session::regenerate) moves the data and TTL in one step (both a Lua script, so
// atomic): a session destroyed by one node's request stays destroyed.
struct SessionStoreOptions {
    std::string prefix = "kiln:";
    int64_t idle_timeout_s = 30 * 60;
    int64_t max_age_s = 24 * 60 * 60;
    size_t max_bytes = 1024;  // one session's serialized data
};
std::shared_ptr<AsyncSessionStore> session_store(Options client, SessionStoreOptions options);

// The redis.* settings (redis.url, redis.pool, redis.command_timeout_ms;
// --redis-url, KILN_REDIS_URL) as client options.
Options options_from(const ServerOptions& server);

}  // namespace kiln::redis
