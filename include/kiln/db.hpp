// kiln::db: the embedded SQLite data layer. One primitive, db.exec(sql, params...):
// the SQL is a string literal (or visibly marked trusted_sql) and every value is a
// bound parameter, never spliced into the text — so injection cannot happen by
// construction, statements are cached by their text, and logged SQL holds no user data.
// A Database is one connection owned by the thread that opened it (checked; misuse
// aborts); handlers on several threads use PerThread, and WAL mode does the locking
// between threads and processes. Errors are db::Error exceptions: calls come from
// handlers, and App maps one that escapes to a 500, logging its what().
#pragma once
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <kiln/unavailable.hpp>

namespace kiln::db {

// ------------------------------------------------------------------ errors

enum class ErrorKind : uint8_t {
    Constraint,   // UNIQUE, PRIMARY KEY, FOREIGN KEY, NOT NULL, CHECK
    Busy,         // SQLITE_BUSY / SQLITE_LOCKED after the busy timeout ran out
    NoSuchTable,  // the SQL names a table that does not exist
    Sql,          // other errors in the SQL text (syntax, no such column, ...)
    Type,         // a value read or bound as a type it does not have (NULL included)
    NoRows,       // scalar() on a query that returned nothing
    Misuse,       // API misuse: parameter count, transaction order, bad order_by
    Migration,    // bad migration file name, duplicate number, unreadable file
    Io,           // cannot open, disk full, I/O error, corrupt file
    Other,
};

enum class Constraint : uint8_t { None, Unique, PrimaryKey, ForeignKey, NotNull, Check, Other };

// what() = message, SQLite's code name (or PostgreSQL's SQLSTATE) and the SQL text.
// Values are never part of it (they are bound), so it is safe to log.
// Io and Busy are transient (<kiln/unavailable.hpp>): a handler that lets one escape
// answers 503 with Retry-After, not 500.
class Error : public std::runtime_error, public TransientError {
public:
    Error(ErrorKind kind, int code, std::string message, std::string sql, std::string sqlstate = {});
    ErrorKind kind() const { return kind_; }
    bool transient() const noexcept override { return kind_ == ErrorKind::Io || kind_ == ErrorKind::Busy; }
    int code() const { return code_; }  // SQLite's extended result code; 0 if kiln raised it
    const std::string& message() const { return message_; }  // without the SQL
    const std::string& sql() const { return sql_; }          // may be empty
    // PostgreSQL's five-character SQLSTATE ("23505"); empty for SQLite and kiln's own.
    const std::string& sqlstate() const { return sqlstate_; }

private:
    ErrorKind kind_;
    int code_;
    std::string message_;
    std::string sql_;
    std::string sqlstate_;
};

class ConstraintViolation : public Error {
public:
    ConstraintViolation(Constraint which, int code, std::string message, std::string sql,
                        std::string sqlstate = {});
    Constraint constraint() const { return constraint_; }

private:
    Constraint constraint_;
};

class BusyError : public Error {
public:
    using Error::Error;
};

class SqlError : public Error {  // kinds NoSuchTable and Sql
public:
    using Error::Error;
};

class MigrationError : public Error {
public:
    MigrationError(ErrorKind kind, int code, std::string message, std::string sql,
                   std::filesystem::path file);
    const std::filesystem::path& file() const { return file_; }

private:
    std::filesystem::path file_;
};

// ------------------------------------------------------------------ SQL text

// SQL text for exec(). Built implicitly from a string literal only (consteval), so
// a runtime string cannot become SQL by accident.
class Sql {
public:
    consteval Sql(const char* literal) : text_(literal) {}
    consteval Sql(std::string_view literal) : text_(literal) {}
    std::string_view text() const { return text_; }

private:
    friend Sql trusted_sql(std::string_view text) noexcept;
    struct Trusted {};
    constexpr Sql(Trusted, std::string_view text) : text_(text) {}
    std::string_view text_;
};

// The visible marker for SQL composed at run time. REQUIRES: `text` is built only
// from the program's own constants (e.g. names checked against a list), never from
// input; values still go in as ? parameters. `text` must outlive the exec() call.
inline Sql trusted_sql(std::string_view text) noexcept { return Sql(Sql::Trusted{}, text); }

// ------------------------------------------------------------------ values

namespace detail {
struct Stmt;        // one prepared statement (src/db/statement.hpp)
struct Connection;  // one sqlite3 connection (src/db/connection.hpp)
}  // namespace detail

enum class Type : uint8_t { Integer, Real, Text, Blob, Null };  // SQLite storage classes

// One positional parameter being bound (index from 1). Text and blobs are copied.
class Param {
public:
    void null();
    void integer(int64_t v);
    void real(double v);
    void text(std::string_view v);
    void blob(std::span<const std::byte> v);
    [[noreturn]] void fail(std::string_view why) const;  // throws Error(Type)

private:
    friend class Result;
    Param(detail::Stmt* s, int index) : s_(s), index_(index) {}
    detail::Stmt* s_;
    int index_;
};

// One column of the current row. text() and blob() view SQLite's memory: valid
// until the row moves on.
class Column {
public:
    Type type() const;
    bool is_null() const { return type() == Type::Null; }
    int64_t integer() const;
    double real() const;
    std::string_view text() const;
    std::span<const std::byte> blob() const;
    std::string_view name() const;
    // Throws Error(Type) naming the column, what it holds and `wanted` (e.g. "TEXT").
    [[noreturn]] void mismatch(std::string_view wanted) const;

private:
    friend class Row;
    Column(detail::Stmt* s, int index) : s_(s), index_(index) {}
    detail::Stmt* s_;
    int index_;
};

// How a C++ type is bound and read: static void bind(Param, const T&) and static T
// read(const Column&). Specialise it for your own types. Built in: integers, bool,
// enums, floating point, std::string, std::string_view, const char*, blobs
// (std::vector<std::byte>, std::span<const std::byte>), std::optional<T> (NULL <->
// nullopt), std::nullopt / nullptr (NULL) and system_clock time points, stored as
// INTEGER unix seconds (sortable, compact, what unixepoch() returns; sub-second
// precision is dropped). Reading NULL into a non-optional type is an Error(Type).
// std::string_view and std::span point into the row, valid until it moves on: read
// them from a Row in place; query_one, scalar and models refuse them at compile time.
template <class T>
struct Codec;

template <std::integral T>
struct Codec<T> {
    static void bind(Param p, T v) {
        if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t)) {
            if (v > static_cast<T>(std::numeric_limits<int64_t>::max()))
                p.fail("unsigned value does not fit in a 64-bit signed INTEGER");
        }
        p.integer(static_cast<int64_t>(v));
    }
    static T read(const Column& c) {
        if (c.type() != Type::Integer) c.mismatch("INTEGER");
        int64_t v = c.integer();
        if constexpr (!std::is_same_v<T, int64_t>) {
            if (!std::in_range<T>(v)) c.mismatch("an INTEGER in the range of the C++ type");
        }
        return static_cast<T>(v);
    }
};

template <>
struct Codec<bool> {
    static void bind(Param p, bool v) { p.integer(v ? 1 : 0); }
    static bool read(const Column& c) {
        if (c.type() != Type::Integer) c.mismatch("INTEGER (bool)");
        return c.integer() != 0;
    }
};

template <class T>
    requires std::is_enum_v<T>
struct Codec<T> {
    using U = std::underlying_type_t<T>;
    static void bind(Param p, T v) { Codec<U>::bind(p, static_cast<U>(v)); }
    static T read(const Column& c) { return static_cast<T>(Codec<U>::read(c)); }
};

template <std::floating_point T>
struct Codec<T> {
    static void bind(Param p, T v) { p.real(static_cast<double>(v)); }
    static T read(const Column& c) {
        Type t = c.type();
        if (t == Type::Real) return static_cast<T>(c.real());
        if (t == Type::Integer) return static_cast<T>(c.integer());
        c.mismatch("REAL");
    }
};

template <>
struct Codec<std::string_view> {
    static void bind(Param p, std::string_view v) { p.text(v); }
    static std::string_view read(const Column& c) {  // valid until the row moves on
        if (c.type() != Type::Text) c.mismatch("TEXT");
        return c.text();
    }
};

template <>
struct Codec<std::string> {
    static void bind(Param p, const std::string& v) { p.text(v); }
    static std::string read(const Column& c) { return std::string(Codec<std::string_view>::read(c)); }
};

template <>
struct Codec<const char*> {  // nullptr binds NULL
    static void bind(Param p, const char* v) { v ? p.text(v) : p.null(); }
};

template <>
struct Codec<char*> : Codec<const char*> {};

template <>
struct Codec<std::span<const std::byte>> {
    static void bind(Param p, std::span<const std::byte> v) { p.blob(v); }
    static std::span<const std::byte> read(const Column& c) {  // valid until the row moves on
        if (c.type() != Type::Blob) c.mismatch("BLOB");
        return c.blob();
    }
};

template <>
struct Codec<std::vector<std::byte>> {
    static void bind(Param p, const std::vector<std::byte>& v) { p.blob(v); }
    static std::vector<std::byte> read(const Column& c) {
        auto b = Codec<std::span<const std::byte>>::read(c);
        return {b.begin(), b.end()};
    }
};

template <>
struct Codec<std::nullopt_t> {
    static void bind(Param p, std::nullopt_t) { p.null(); }
};

template <>
struct Codec<std::nullptr_t> {
    static void bind(Param p, std::nullptr_t) { p.null(); }
};

template <class T>
struct Codec<std::optional<T>> {
    static void bind(Param p, const std::optional<T>& v) { v ? Codec<T>::bind(p, *v) : p.null(); }
    static std::optional<T> read(const Column& c) {
        if (c.is_null()) return std::nullopt;
        return Codec<T>::read(c);
    }
};

template <class D>
struct Codec<std::chrono::time_point<std::chrono::system_clock, D>> {
    using TP = std::chrono::time_point<std::chrono::system_clock, D>;
    static void bind(Param p, TP v) {
        p.integer(std::chrono::floor<std::chrono::seconds>(v).time_since_epoch().count());
    }
    static TP read(const Column& c) {
        if (c.type() != Type::Integer) c.mismatch("INTEGER (unix seconds)");
        int64_t s = c.integer();
        if constexpr (std::ratio_less_v<typename D::period, std::ratio<1>>) {
            // Seconds past what D holds (nanoseconds: the year 2262) would overflow.
            constexpr auto per_second = D::period::den / D::period::num;
            constexpr auto most = std::numeric_limits<typename D::rep>::max() / per_second;
            if (s > most || s < -most) c.mismatch("INTEGER (unix seconds) within the time point's range");
        }
        return std::chrono::floor<D>(std::chrono::sys_seconds(std::chrono::seconds(s)));
    }
};

// ------------------------------------------------------------------ rows

// The current row of a Result: a view, valid until the Result moves on.
class Row {
public:
    int size() const;
    Column column(int index) const;             // throws Error(Misuse) if out of range
    Column column(std::string_view name) const;  // throws Error(Misuse) if no such column
    template <class T>
    T get(int index) const { return Codec<T>::read(column(index)); }
    template <class T>
    T get(std::string_view name) const { return Codec<T>::read(column(name)); }
    // Columns 0..N-1 as a tuple.
    template <class... T>
    std::tuple<T...> as() const { return as_impl<T...>(std::index_sequence_for<T...>{}); }

private:
    friend class Result;
    template <class... T, size_t... I>
    std::tuple<T...> as_impl(std::index_sequence<I...>) const {
        return std::tuple<T...>(get<T>(static_cast<int>(I))...);
    }
    detail::Stmt* s_ = nullptr;
};

// The rows of one exec(), stepped lazily: an input range, read once. exec() runs
// the first step, so a statement without rows (INSERT, ...) is done when exec()
// returns. The statement goes back to the cache when the rows run out or the
// Result dies. REQUIRES: the Database outlives its Results.
class Result {
public:
    Result(Result&& other) noexcept;
    Result& operator=(Result&& other) noexcept;
    Result(const Result&) = delete;
    Result& operator=(const Result&) = delete;
    ~Result();

    bool has_row() const { return has_row_; }
    const Row& row() const { return row_; }  // REQUIRES: has_row()
    bool next();                             // false (and done) after the last row

    class iterator {
    public:
        using value_type = Row;
        using difference_type = std::ptrdiff_t;
        const Row& operator*() const { return r_->row_; }
        const Row* operator->() const { return &r_->row_; }
        iterator& operator++() { r_->next(); return *this; }
        void operator++(int) { r_->next(); }
        bool operator==(std::default_sentinel_t) const { return !r_->has_row_; }

    private:
        friend class Result;
        explicit iterator(Result* r) : r_(r) {}
        Result* r_;
    };
    iterator begin() { return iterator(this); }
    std::default_sentinel_t end() const { return {}; }

private:
    friend class Database;
    explicit Result(detail::Stmt* s);
    Param param(int index) { return Param(s_, index); }
    void release() noexcept;
    detail::Stmt* s_ = nullptr;
    Row row_;
    bool has_row_ = false;
};

// ------------------------------------------------------------------ database

struct Options {
    std::chrono::milliseconds busy_timeout{5000};  // how long a write waits for the lock
    size_t statement_cache = 64;                   // prepared statements kept (LRU)
};

struct CacheStats {
    uint64_t hits = 0;       // exec() found its statement prepared
    uint64_t prepares = 0;   // statements compiled (misses and statements busy in a live Result)
    uint64_t evictions = 0;  // dropped to stay within Options::statement_cache
    size_t cached = 0;       // statements held now
};

// Immediate takes the write lock at BEGIN (waiting up to busy_timeout), so a
// transaction never fails half-way for want of the lock; Deferred is for reads.
enum class TxMode : uint8_t { Immediate, Deferred };

class Transaction;
struct Migration;

namespace detail {
template <class T>
inline constexpr bool is_optional = false;
template <class T>
inline constexpr bool is_optional<std::optional<T>> = true;

// A type that points into the statement's row (valid until the row moves on), so it
// cannot outlive the Result: std::string_view, std::span<const std::byte>, optionals of them.
template <class T>
inline constexpr bool borrows = false;
template <>
inline constexpr bool borrows<std::string_view> = true;
template <>
inline constexpr bool borrows<std::span<const std::byte>> = true;
template <class T>
inline constexpr bool borrows<std::optional<T>> = borrows<T>;
}  // namespace detail

class Database {
public:
    // Opens (creating the file and its parent directory) in WAL mode, foreign keys
    // on, synchronous=NORMAL. ":memory:" opens a private in-memory database (no WAL).
    // Throws Error(Io) naming the path.
    explicit Database(const std::filesystem::path& path, Options options = {});
    ~Database();  // REQUIRES: no live Result or Transaction
    Database(Database&&) noexcept;
    Database& operator=(Database&&) noexcept;

    // Runs one statement with its ? parameters bound in order, returning its rows.
    // Throws Error (see ErrorKind) naming the SQL; the parameter count must match.
    template <class... Args>
    Result exec(Sql sql, const Args&... args) {
        Result r = prepare(sql, static_cast<int>(sizeof...(Args)));
        int i = 0;
        (Codec<std::decay_t<Args>>::bind(r.param(++i), args), ...);
        r.next();
        return r;
    }

    // The first row as T (one type) or a tuple (several); nullopt if there is none.
    // Later rows are not read.
    template <class... T, class... Args>
    auto query_one(Sql sql, const Args&... args) {
        static_assert(sizeof...(T) > 0, "query_one<T...>: name the column types");
        static_assert((!detail::borrows<T> && ...),
                      "query_one<T...>: a string_view or span would point into a statement already reset: "
                      "read std::string or std::vector<std::byte>");
        Result r = exec(sql, args...);
        if constexpr (sizeof...(T) == 1) {
            using One = std::tuple_element_t<0, std::tuple<T...>>;
            if (!r.has_row()) return std::optional<One>();
            return std::optional<One>(r.row().template get<One>(0));
        } else {
            if (!r.has_row()) return std::optional<std::tuple<T...>>();
            return std::optional<std::tuple<T...>>(r.row().template as<T...>());
        }
    }

    // The first column of the first row. No row: nullopt if T is an optional,
    // else Error(NoRows).
    template <class T, class... Args>
    T scalar(Sql sql, const Args&... args) {
        static_assert(!detail::borrows<T>,
                      "scalar<T>: a string_view or span would point into a statement already reset: "
                      "read std::string or std::vector<std::byte>");
        Result r = exec(sql, args...);
        if (!r.has_row()) {
            if constexpr (detail::is_optional<T>) return T();
            else no_rows(sql);
        }
        return r.row().template get<T>(0);
    }

    int64_t last_insert_id() const;  // rowid of the last INSERT on this connection
    int64_t changes() const;         // rows changed by the last INSERT/UPDATE/DELETE

    // Begins a transaction, or a SAVEPOINT inside an open one. See Transaction.
    Transaction transaction(TxMode mode = TxMode::Immediate);

    CacheStats cache_stats() const;
    const std::filesystem::path& path() const;

private:
    friend class Transaction;
    friend std::vector<Migration> migrate(Database& db, const std::filesystem::path& dir);
    Result prepare(Sql sql, int param_count);
    [[noreturn]] static void no_rows(Sql sql);
    std::unique_ptr<detail::Connection> conn_;
};

// RAII transaction: rolls back in the destructor unless commit() ran. Nested ones
// are SAVEPOINTs; they must end innermost first: commit() or rollback() out of order
// throws Error(Misuse) and changes nothing, but a destructor out of order (or one
// whose rollback fails) rolls back the whole transaction, every level, so nothing is
// left open that no one will end; the others then throw Misuse at their commit().
// A failed commit() leaves it open, so the destructor still rolls back. Should SQLite
// roll a transaction back on its own (ON CONFLICT ROLLBACK, RAISE(ROLLBACK), a full
// disk), its statements and its commit() throw Misuse instead of running outside it.
//
// On a connection that coroutines share (PerThread::get() on a loop thread), a
// transaction must not span a co_await: another request's statements would run
// inside it. Run it in kiln::blocking, or use kiln::Store.
class Transaction {
public:
    Transaction(Transaction&& other) noexcept;
    Transaction& operator=(Transaction&&) = delete;
    ~Transaction();
    void commit();
    void rollback();
    bool active() const { return conn_ != nullptr; }

private:
    friend class Database;
    Transaction(detail::Connection* conn, int level, uint64_t serial) : conn_(conn), level_(level), serial_(serial) {}
    void end(bool commit);
    bool stale() const;  // rolled back already, with the transaction it was part of
    void abandon();      // rolls back every level and lets go
    detail::Connection* conn_;
    int level_;  // 1 = BEGIN/COMMIT, n > 1 = SAVEPOINT kiln_sp<n>
    uint64_t serial_;  // the connection's tx_serial when its outermost level began
};

// One connection per thread for a path: get() opens this thread's on first use.
// Thread-safe. The destructor closes them all. REQUIRES: no thread uses them then,
// and no connection crosses fork(): call get() first in handlers (in the workers);
// for migrations in main(), use a Database scoped to close before run().
class PerThread {
public:
    explicit PerThread(std::filesystem::path path, Options options = {});
    ~PerThread();
    PerThread(const PerThread&) = delete;
    PerThread& operator=(const PerThread&) = delete;
    Database& get();

private:
    struct State;
    std::unique_ptr<State> state_;
};

// ------------------------------------------------------------------ migrations

struct Migration {
    int64_t version;
    std::string name;  // "create_posts" for 001_create_posts.sql
    std::filesystem::path file;
};

// Applies dir's NNN_name.sql files not yet recorded in kiln_migrations(version,
// name, applied_at), in numeric order, each in its own transaction; returns those
// applied. Other files (not *.sql) are ignored. Throws MigrationError naming the
// file on a bad name, a duplicate number, a number applied under another name, or
// a failing statement (with its line); the database stays at the last good version.
// Safe to run from several processes at once. A file must not BEGIN or COMMIT.
std::vector<Migration> migrate(Database& db, const std::filesystem::path& dir);

}  // namespace kiln::db
