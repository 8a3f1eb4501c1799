// kiln::pg: PostgreSQL on kiln's event loop (libpq, pipeline mode). The same one
// primitive as SQLite, in coroutine form:
//
//   kiln::pg::Client db({.url = "postgresql://app@127.0.0.1/app", .pool = 1});
//   kiln::pg::Result r = co_await db.exec("SELECT id, name FROM users WHERE id = $1", id);
//   for (const kiln::pg::Row& row : r) use(row.get<long>(0), row.get<std::string_view>(1));
//   long n = co_await db.scalar<long>("SELECT count(*) FROM users");
//
// SQL is a kiln::db::Sql (a string literal, or visibly trusted_sql) with $1..$n
// placeholders; every value is bound, never spliced into the text: injection cannot
// happen by construction, and a statement is known by its text, so each distinct SQL
// text is prepared once per connection, the first time it is used. Many queries from
// many coroutines travel on one connection at once (pipelined); each gets its own
// answer, and a query's error reaches only the coroutine that sent it, as the
// db::Error family with PostgreSQL's SQLSTATE (db::Error::sqlstate()).
//
// A Client belongs to the event loop thread that first uses it (checked: another
// thread gets std::logic_error); its queries resume their coroutines on that thread.
// It keeps `pool` connections up by itself: a lost connection fails the queries it
// carried (Error kind Io, "connection to PostgreSQL lost: ..."), then reconnects with
// back-off; while no connection is up a query fails at once instead of waiting.
#pragma once
#include <charconv>
#include <chrono>
#include <concepts>
#include <functional>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <kiln/db.hpp>
#include <kiln/server.hpp>
#include <kiln/task.hpp>

struct pg_result;  // libpq's PGresult; libpq-fe.h stays out of kiln's public headers

namespace kiln::pg {

namespace detail {
struct Op;  // one query in flight (src/pg/op.hpp)
class Pool;
struct Lease;  // a connection held by one transaction (src/pg/pool.hpp)
struct ListenerState;  // a Listener's queue (src/pg/hub.hpp)
class Hub;
}  // namespace detail

// ------------------------------------------------------------------ values

// A query's parameters, encoded for the wire as they are added (text format: the
// value is copied, so nothing given to exec() needs to outlive the call).
class Params {
public:
    void text(std::string_view v);  // throws db::Error(Type) if v holds a NUL byte
    void null();
    int size() const { return static_cast<int>(slots_.size()); }

private:
    friend struct detail::Op;
    struct Slot {
        uint32_t offset;  // into data_, NUL-terminated there
        bool null;
    };
    std::string data_;
    std::vector<Slot> slots_;
};

// One column of one row, as PostgreSQL sent it (text format).
class Field {
public:
    bool is_null() const;
    std::string_view text() const;  // valid while the Result lives; empty for NULL
    std::string_view name() const;
    uint32_t type_oid() const;  // PostgreSQL's type OID of the column
    // Throws db::Error(Type) naming the column, its text and `wanted` (e.g. "an integer").
    [[noreturn]] void mismatch(std::string_view wanted) const;

private:
    friend class Row;
    Field(const pg_result* r, int row, int column) : r_(r), row_(row), column_(column) {}
    const pg_result* r_;
    int row_;
    int column_;
};

// How a C++ type is sent and read: static void write(Params&, const T&) and static T
// read(const Field&). Specialise it for your own types. Built in: integers, bool,
// enums, floating point, std::string, std::string_view, const char*, std::optional<T>
// (NULL <-> nullopt) and std::nullopt / nullptr (NULL). Reading NULL into a
// non-optional type is a db::Error(Type).
template <class T>
struct Codec;

namespace detail {
[[noreturn]] void null_read(const Field& f, std::string_view wanted);
double parse_double(const Field& f);
void write_double(Params& p, double v);
}  // namespace detail

template <std::integral T>
struct Codec<T> {
    static void write(Params& p, T v) {
        char buf[24];
        auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
        p.text(std::string_view(buf, static_cast<size_t>(end - buf)));
    }
    static T read(const Field& f) {
        if (f.is_null()) detail::null_read(f, "an integer");
        std::string_view s = f.text();
        T v{};
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc::result_out_of_range) f.mismatch("an integer in the range of the C++ type");
        if (ec != std::errc() || end != s.data() + s.size()) f.mismatch("an integer");
        return v;
    }
};

template <>
struct Codec<bool> {
    static void write(Params& p, bool v) { p.text(v ? "t" : "f"); }
    static bool read(const Field& f) {
        if (f.is_null()) detail::null_read(f, "a boolean");
        std::string_view s = f.text();
        if (s == "t") return true;
        if (s == "f") return false;
        f.mismatch("a boolean (t or f)");
    }
};

template <class T>
    requires std::is_enum_v<T>
struct Codec<T> {
    using U = std::underlying_type_t<T>;
    static void write(Params& p, T v) { Codec<U>::write(p, static_cast<U>(v)); }
    static T read(const Field& f) { return static_cast<T>(Codec<U>::read(f)); }
};

template <std::floating_point T>
struct Codec<T> {
    static void write(Params& p, T v) { detail::write_double(p, static_cast<double>(v)); }
    static T read(const Field& f) {
        double d = detail::parse_double(f);
        // A finite value past T's range (1e39 into a float) has no T: converting it is
        // undefined. Infinities and NaN carry over.
        if (d == d && d - d == 0 && (d > static_cast<double>(std::numeric_limits<T>::max()) ||
                                     d < static_cast<double>(std::numeric_limits<T>::lowest())))
            f.mismatch("a number in the range of the C++ type");
        return static_cast<T>(d);
    }
};

template <>
struct Codec<std::string_view> {
    static void write(Params& p, std::string_view v) { p.text(v); }
    static std::string_view read(const Field& f) {  // valid while the Result lives
        if (f.is_null()) detail::null_read(f, "text");
        return f.text();
    }
};

template <>
struct Codec<std::string> {
    static void write(Params& p, const std::string& v) { p.text(v); }
    static std::string read(const Field& f) { return std::string(Codec<std::string_view>::read(f)); }
};

template <>
struct Codec<const char*> {  // nullptr sends NULL
    static void write(Params& p, const char* v) { v ? p.text(v) : p.null(); }
};

template <>
struct Codec<char*> : Codec<const char*> {};

template <size_t N>
struct Codec<char[N]> {
    static void write(Params& p, const char (&v)[N]) { p.text(v); }
};

template <>
struct Codec<std::nullopt_t> {
    static void write(Params& p, std::nullopt_t) { p.null(); }
};

template <>
struct Codec<std::nullptr_t> {
    static void write(Params& p, std::nullptr_t) { p.null(); }
};

template <class T>
struct Codec<std::optional<T>> {
    static void write(Params& p, const std::optional<T>& v) { v ? Codec<T>::write(p, *v) : p.null(); }
    static std::optional<T> read(const Field& f) {
        if (f.is_null()) return std::nullopt;
        return Codec<T>::read(f);
    }
};

class Result;

namespace detail {
// A Result owning r (libpq's own, or one built with PQmakeEmptyPGresult, as the fuzz
// target for the value decoding does).
Result adopt_result(pg_result* r);
// Appends v to a PostgreSQL array literal as a quoted element ("a\"b").
void array_element(std::string& out, std::string_view v);
}  // namespace detail

// A std::vector of numbers or strings goes as a PostgreSQL array ({1,2,3}), for
// statements such as "UPDATE t SET n = v.n FROM (SELECT unnest($1::int[]) AS id,
// unnest($2::int[]) AS n) AS v WHERE t.id = v.id": many rows, one statement.
template <class T>
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) || std::is_convertible_v<const T&, std::string_view>
struct Codec<std::vector<T>> {
    static void write(Params& p, const std::vector<T>& values) {
        std::string out = "{";
        for (const T& v : values) {
            if (out.size() > 1) out += ',';
            if constexpr (std::is_pointer_v<T>) {  // a null const char* is a NULL element
                if (v) detail::array_element(out, v);
                else out += "NULL";
            } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
                detail::array_element(out, v);
            } else if constexpr (std::is_integral_v<T>) {
                char buf[24];
                auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
                out.append(buf, end);
            } else {
                char buf[32];
                auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<double>(v));
                out.append(buf, end);
            }
        }
        out += '}';
        p.text(out);
    }
};

// ------------------------------------------------------------------ results

// One row of a Result: a view, valid while the Result lives.
class Row {
public:
    int size() const;                           // columns
    Field field(int index) const;               // throws db::Error(Misuse) if out of range
    Field field(std::string_view name) const;   // throws db::Error(Misuse) if no such column
    template <class T>
    T get(int index) const { return Codec<T>::read(field(index)); }
    template <class T>
    T get(std::string_view name) const { return Codec<T>::read(field(name)); }
    // Columns 0..N-1 as a tuple.
    template <class... T>
    std::tuple<T...> as() const { return as_impl<T...>(std::index_sequence_for<T...>{}); }

private:
    friend class Result;
    Row(const pg_result* r, int row) : r_(r), row_(row) {}
    template <class... T, size_t... I>
    std::tuple<T...> as_impl(std::index_sequence<I...>) const {
        return std::tuple<T...>(get<T>(static_cast<int>(I))...);
    }
    const pg_result* r_;
    int row_;
};

// Every row of one query, read in full before the coroutine resumes. Owns them.
class Result {
public:
    Result(Result&& other) noexcept : r_(std::exchange(other.r_, nullptr)) {}
    Result& operator=(Result&& other) noexcept;
    Result(const Result&) = delete;
    Result& operator=(const Result&) = delete;
    ~Result();

    size_t size() const;  // rows
    bool empty() const { return size() == 0; }
    int columns() const;
    Row operator[](size_t i) const { return Row(r_, static_cast<int>(i)); }  // REQUIRES: i < size()
    Row at(size_t i) const;  // throws db::Error(Misuse) if i >= size()
    // Rows an INSERT/UPDATE/DELETE (or SELECT) touched, from the command tag; 0 if none.
    int64_t affected() const;
    // The command tag's verb: "SELECT", "INSERT", "UPDATE", "COMMIT", "ROLLBACK", ...
    std::string_view command() const;

    class iterator {
    public:
        using value_type = Row;
        using difference_type = std::ptrdiff_t;
        iterator() = default;
        Row operator*() const { return Row(r_, i_); }
        iterator& operator++() { ++i_; return *this; }
        iterator operator++(int) { iterator t = *this; ++i_; return t; }
        bool operator==(const iterator& o) const { return i_ == o.i_; }

    private:
        friend class Result;
        iterator(const pg_result* r, int i) : r_(r), i_(i) {}
        const pg_result* r_ = nullptr;
        int i_ = 0;
    };
    iterator begin() const { return iterator(r_, 0); }
    iterator end() const { return iterator(r_, static_cast<int>(size())); }

private:
    friend class Query;
    friend Result detail::adopt_result(pg_result* r);
    explicit Result(pg_result* r) : r_(r) {}
    pg_result* r_;
};

// ------------------------------------------------------------------ client

struct Options {
    std::string url;  // libpq connection string or URI: "postgresql://user@host:port/db"
    size_t pool = 1;  // connections kept up (each pipelines any number of queries)
    // Sent at connect as options=-c statement_timeout=..., after the URL's own options
    // (or PGOPTIONS when it has none); 0 keeps the server's.
    // A query that runs longer fails with db::BusyError, sqlstate "57014".
    std::chrono::milliseconds statement_timeout{0};
    std::chrono::milliseconds connect_timeout{5000};  // one connection attempt
    // A connection whose queries get no answer for this long (its server stopped,
    // its host gone without a word) is closed: what it carried fails with
    // db::Error(Io), and the client connects again. 0: wait for ever. The server
    // sends nothing while it runs a query, nor before the end of SELECTs sent
    // together (they share a Sync), so this must exceed what they may take. A query
    // the client gave up on stops on the server within a second on PostgreSQL 14 and
    // later (each session is set client_connection_check_interval = 1000, unless the
    // URL's options or PGOPTIONS set it); older servers go on with it until
    // statement_timeout (set it below this one) or until it next writes. A LISTEN
    // session, which owes nothing while it waits, is sent a SELECT 1 this often, so its
    // silence is noticed too (within twice this).
    std::chrono::milliseconds reply_timeout{30000};
    // Prepared statements kept per connection, by SQL text; when it is full, the least
    // recently used not in flight are dropped (DEALLOCATE) down to three quarters.
    // Each also holds memory in its server session, so SQL built at run time (an
    // ORDER BY per user choice) must not grow them without bound.
    size_t statement_cache = 256;
    // The back-off after a loss: doubling from min to max, each wait a random half to
    // all of it (so that the connections a server restart cut come back spread out).
    std::chrono::milliseconds reconnect_min{50};
    std::chrono::milliseconds reconnect_max{5000};
    // Connections for transactions, opened when first needed, each carrying one
    // transaction at a time (the shared ones above never do: a transaction's
    // statements must not interleave with other coroutines' queries). A transaction
    // begun while all are busy waits for one.
    size_t transactions = 4;
    // Queries one shared connection may carry at once (sent or waiting to be), past
    // which a query fails at once with db::BusyError (a 503 if it escapes a handler):
    // a server that falls behind gets a bounded line, not one that grows as long as
    // requests come, each waiting longer than the last. 0: no limit.
    size_t max_queued = 10000;
};

// What co_await client.exec(...) awaits. The query is sent when exec() is called, so
// several exec()s made before their co_awaits share one round trip. Await it once.
// Dropping it unawaited is fine (its answer is dropped when it comes).
class [[nodiscard]] Query {
public:
    Query(Query&& other) noexcept : op_(std::exchange(other.op_, nullptr)) {}
    Query& operator=(Query&&) = delete;
    ~Query();

    bool await_ready() const noexcept;
    bool await_suspend(std::coroutine_handle<> h);
    // The rows, or the query's db::Error; kiln::Cancelled if the request was cancelled.
    Result await_resume();

private:
    friend class detail::Pool;
    friend class detail::Hub;
    explicit Query(detail::Op* op) : op_(op) {}
    detail::Op* op_;
};

namespace detail {
[[noreturn]] void no_rows(db::Sql sql);

// The values of exec(sql, args...), encoded in order.
template <class... Args>
Params params_of(const Args&... args) {
    Params p;
    (Codec<std::remove_cvref_t<Args>>::write(p, args), ...);
    return p;
}

template <class T>
Task<T> first_value(Query q, db::Sql sql) {
    static_assert(!db::detail::borrows<T>,
                  "scalar<T>: a string_view or span would point into a result freed when scalar returns: "
                  "read std::string or std::vector<std::byte>");
    Result r = co_await q;
    if (r.empty()) {
        if constexpr (db::detail::is_optional<T>) co_return T();
        else no_rows(sql);
    }
    co_return r[0].template get<T>(0);
}
}  // namespace detail

// A transaction: its statements run in order on one connection that no other
// coroutine uses meanwhile, and take effect together at commit(). Pipelined like
// any query (several exec()s before their co_awaits share a round trip). After an
// error inside it, PostgreSQL refuses every statement until rollback() (SQLSTATE
// 25P02). Dropped while still open (an exception, a cancelled request), it sends
// ROLLBACK without waiting and hands its connection back. REQUIRES: it does not
// outlive its Client, and is used on the Client's loop thread.
class Transaction {
public:
    Transaction(Transaction&& other) noexcept
        : pool_(std::exchange(other.pool_, nullptr)), lease_(std::exchange(other.lease_, nullptr)) {}
    Transaction& operator=(Transaction&&) = delete;
    ~Transaction();

    template <class... Args>
    Query exec(db::Sql sql, const Args&... args) {
        return send(sql, detail::params_of(args...));
    }
    template <class T, class... Args>
    Task<T> scalar(db::Sql sql, const Args&... args) {
        return detail::first_value<T>(exec(sql, args...), sql);
    }
    // Ends it; throws the db::Error if COMMIT failed (e.g. a serialization failure,
    // sqlstate 40001: run the whole transaction again). A transaction that had an
    // error is rolled back by COMMIT, which then throws db::Error(Misuse).
    Task<> commit();
    Task<> rollback();
    bool open() const { return lease_ != nullptr; }  // not yet committed or rolled back

private:
    friend class Client;
    Transaction(detail::Pool* pool, detail::Lease* lease) : pool_(pool), lease_(lease) {}
    Query send(db::Sql sql, Params params);
    Task<> finish(db::Sql sql);
    detail::Pool* pool_;
    detail::Lease* lease_;
};

// ------------------------------------------------------------------ LISTEN/NOTIFY

struct Notification {
    std::string channel;
    std::string payload;
    int sender = 0;  // the PostgreSQL backend (PID) whose NOTIFY it was
};

// What co_await listener.next() awaits: the next notification, waiting for one.
class [[nodiscard]] NextNotification {
public:
    NextNotification(NextNotification&& other) noexcept
        : s_(other.s_), op_(std::exchange(other.op_, nullptr)) {}
    NextNotification& operator=(NextNotification&&) = delete;
    ~NextNotification();
    bool await_ready() const noexcept;
    bool await_suspend(std::coroutine_handle<> h);
    Notification await_resume();

private:
    friend class Listener;
    explicit NextNotification(detail::ListenerState* s) : s_(s) {}
    detail::ListenerState* s_;
    detail::Op* op_ = nullptr;
};

// A subscription to one channel (Client::listen), as a stream:
//   kiln::pg::Listener news = co_await db.listen("news");
//   for (;;) { kiln::pg::Notification n = co_await news.next(); push(n.payload); }
// Notifications are queued from the moment listen() returns until read (at most
// 65,536, and 64 MiB; past that the oldest go, and next() throws db::Error(Other) saying how
// many). If the session carrying the subscription is lost, next() throws
// db::Error(Io) once: what was sent until it is back is missed; it reconnects and
// listens again by itself, and next() goes on after that. One next() at a time.
// REQUIRES: used on its Client's loop thread; it may outlive the Client (then
// next() throws db::Error(Io)).
class Listener {
public:
    Listener(Listener&& other) noexcept;
    Listener& operator=(Listener&&) = delete;
    ~Listener();  // UNLISTEN when it was its channel's last Listener

    NextNotification next();
    const std::string& channel() const;
    size_t pending() const;  // notifications queued, not yet read

private:
    friend class Client;
    explicit Listener(std::unique_ptr<detail::ListenerState> s);
    std::unique_ptr<detail::ListenerState> s_;
};

class Client {
public:
    // Connects nothing yet: the first exec() binds the client to its loop thread and
    // opens the pool (that first query waits for its connection).
    explicit Client(Options options);
    // REQUIRES: on its loop thread, while that loop object lives. Queries still in
    // flight fail with db::Error(Io).
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // Sends one statement with its $1..$n parameters bound in order. Only on an event
    // loop thread (else std::logic_error). Every coroutine of the loop shares the
    // connection, so what would change it for all fails with db::Error(Misuse):
    // transaction control (BEGIN, COMMIT...: use begin()), COPY, LISTEN (use listen()),
    // SET, RESET, DISCARD, DEALLOCATE (use the URL's options, SET LOCAL in begin()).
    template <class... Args>
    Query exec(db::Sql sql, const Args&... args) {
        return send(sql, detail::params_of(args...));
    }

    // The first column of the first row. No row: nullopt if T is an optional, else
    // db::Error(NoRows). Sent at once, like exec().
    template <class T, class... Args>
    Task<T> scalar(db::Sql sql, const Args&... args) {
        return detail::first_value<T>(exec(sql, args...), sql);
    }

    // A transaction on a connection of its own (waits for one of options.transactions
    // if all are busy), BEGIN sent. Commit it, or it rolls back when dropped.
    Task<Transaction> begin();

    // Runs fn(tx) in a transaction: committed when fn's task returns, rolled back
    // (and the exception rethrown) when it throws. Returns what fn's task returns.
    //   co_await db.transaction([&](kiln::pg::Transaction& tx) -> kiln::Task<> {
    //       co_await tx.exec("UPDATE accounts SET balance = balance - $1 WHERE id = $2", n, from);
    //       co_await tx.exec("UPDATE accounts SET balance = balance + $1 WHERE id = $2", n, to);
    //   });
    template <class F>
        requires kiln::detail::IsTask<std::invoke_result_t<F&, Transaction&>>::value
    std::invoke_result_t<F&, Transaction&> transaction(F fn);

    // Subscribes to `channel` (LISTEN, on a session kept for notifications) and
    // resumes once the subscription took effect: a NOTIFY sent after this returned
    // is delivered. A channel name is 1 to 63 bytes (PostgreSQL's identifier limit),
    // else db::Error(Misuse).
    Task<Listener> listen(std::string channel);
    // NOTIFY channel, payload (pg_notify): delivered to listeners when the sending
    // transaction commits (at once outside one). Payloads are at most 7999 bytes.
    Query notify(std::string_view channel, std::string_view payload) {
        return exec("SELECT pg_notify($1, $2)", channel, payload);
    }

    size_t connected() const;  // connections up now

private:
    Query send(db::Sql sql, Params params);
    std::unique_ptr<detail::Pool> pool_;
};

namespace detail {
// Client::transaction's body, with fn's type erased: a coroutine frame holding the
// caller's lambda type would draw GCC's -Wsubobject-linkage from every user's file.
template <class R>
Task<R> run_transaction(Task<Transaction> begun, std::function<Task<R>(Transaction&)> fn) {
    Transaction tx = co_await std::move(begun);
    std::exception_ptr error;
    std::optional<std::conditional_t<std::is_void_v<R>, bool, R>> out;
    try {
        if constexpr (std::is_void_v<R>) {
            co_await fn(tx);
            out.emplace(true);
        } else {
            out.emplace(co_await fn(tx));
        }
    } catch (...) {
        error = std::current_exception();
    }
    if (error) {
        if (tx.open()) {
            try {
                co_await tx.rollback();
            } catch (...) {  // the first error is the one to report
            }
        }
        std::rethrow_exception(error);
    }
    if (tx.open()) co_await tx.commit();
    if constexpr (!std::is_void_v<R>) co_return std::move(*out);
}
}  // namespace detail

template <class F>
    requires kiln::detail::IsTask<std::invoke_result_t<F&, Transaction&>>::value
std::invoke_result_t<F&, Transaction&> Client::transaction(F fn) {
    using R = decltype(std::declval<std::invoke_result_t<F&, Transaction&>&>().await_resume());
    return detail::run_transaction<R>(begin(), std::function<Task<R>(Transaction&)>(std::move(fn)));
}

// One Client per event loop thread, each made on that thread's first local() with
// the same options, and closed when its loop goes away. What a server's handlers use:
//
//   kiln::pg::PerLoop db;
//   app.on_worker_start([&](const kiln::ServerOptions& o) { db.configure(kiln::pg::options_from(o)); });
//   ... co_await db.local().exec("SELECT ...");
//
// configure() before serving; it must outlive the loops (a variable of main()).
class PerLoop {
public:
    explicit PerLoop(Options options = {});
    ~PerLoop();
    PerLoop(const PerLoop&) = delete;
    PerLoop& operator=(const PerLoop&) = delete;

    void configure(Options options);
    // This loop thread's client. Only on an event loop thread (else std::logic_error).
    Client& local();

private:
    struct State;
    std::unique_ptr<State> s_;
};

// db::migrate's numbered files (NNN_name.sql in dir), applied to PostgreSQL: each
// file not yet recorded in kiln_migrations runs once, in version order, in its own
// transaction. Blocking: call it at start (App::on_node_start), not in a handler.
// Safe from several nodes at once (an advisory lock serialises them). Returns the
// files applied; throws db::MigrationError naming the file (and the line PostgreSQL
// pointed at) when one fails, or db::Error(Io) when the server cannot be reached.
std::vector<db::Migration> migrate(const Options& options, const std::filesystem::path& dir);

// What is wrong with a connection string or URI, as libpq parses it ("" if nothing):
// a setting is checked at start, not at the first query.
std::string url_error(std::string_view url);

// The database.* settings (database.url, database.pool, database.statement_timeout_ms;
// --database-url, KILN_DATABASE_URL, [database] url) as client options.
Options options_from(const ServerOptions& server);

}  // namespace kiln::pg
