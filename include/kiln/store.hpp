// kiln::Store: one app, SQLite or PostgreSQL by configuration. The models
// (<kiln/model.hpp>) and the calls are the same either way; with no database URL in
// the settings (database.url, --database-url, KILN_DATABASE_URL) the data is in a
// SQLite file, with one it is in PostgreSQL and every call is a pipelined query on
// the loop.
//
// On SQLite, writes (insert, update, remove, execute) run on kiln's blocking-work
// threads (kiln::blocking): a write may wait up to the busy timeout for another
// writer's lock, and the loop must not wait with it. Reads (find, all, where, count,
// page) run on the loop thread itself, on a connection of its own: in WAL mode a read
// never waits for a writer (it reads the last committed snapshot), and handing a
// read of a few microseconds to another thread and back costs more than the read (a
// wake-up each way; the blog's index page took a third more CPU that way). A read
// that would wait after all (SQLITE_BUSY: a checkpoint resetting the log, a
// recovery) is not waited for on the loop: it runs again on the blocking threads.
// A read is expected to be short, as a handler's own code is: the loop serves no
// one else meanwhile. A long one (a report over a large table) belongs on the
// threads: Store(path, kiln::SqliteReads::OnThreads), or co_await kiln::blocking
// around store.sqlite() calls.
//
//   kiln::Store store("data/blog.sqlite");
//   app.on_node_start([&](const kiln::ServerOptions& o) { store.migrate(o, "db/migrations"); });
//   app.on_worker_start([&](const kiln::ServerOptions& o) { store.configure(o); });
//   app.get("/posts/:id", [&](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
//       std::optional<Post> post = co_await store.find<Post>(req.param<int64_t>("id"));
//       ...
//   });
//
// Conditions use ? for values on both engines. Migrations differ in dialect: on
// PostgreSQL, migrate(o, dir) applies dir/postgresql/ when that folder exists (and
// dir itself otherwise); on SQLite, dir. Arguments are taken by value; an order_by
// string_view and an object given by reference must outlive the await.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <kiln/blocking.hpp>
#include <kiln/db.hpp>
#include <kiln/model.hpp>
#include <kiln/pg.hpp>
#include <kiln/pg_model.hpp>
#include <kiln/server.hpp>

namespace kiln {

// Where a Store runs its SQLite reads (see above).
enum class SqliteReads : uint8_t { OnLoop, OnThreads };

class Store {
public:
    // The SQLite file used when no database URL is configured (opened lazily, a
    // connection per blocking-work thread and one per loop thread for reads).
    explicit Store(std::filesystem::path sqlite_path, SqliteReads reads = SqliteReads::OnLoop)
        : sqlite_path_(sqlite_path),
          sqlite_(sqlite_path),
          loop_reads_(sqlite_path, db::Options{.busy_timeout = std::chrono::milliseconds(0)}),
          reads_(reads) {}
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;

    // In every worker before it serves (App::on_worker_start): PostgreSQL if the
    // settings name a database, else SQLite.
    void configure(const ServerOptions& o) {
        pg::Options options = pg::options_from(o);
        postgres_ = !options.url.empty();
        if (postgres_) pg_.configure(std::move(options));
    }
    bool postgres() const { return postgres_; }

    // Once per node (App::on_node_start): the schema, by the numbered files of dir.
    // Throws db::MigrationError naming the file, or db::Error(Io) (no server).
    void migrate(const ServerOptions& o, const std::filesystem::path& dir) {
        pg::Options options = pg::options_from(o);
        if (!options.url.empty()) {
            std::error_code ec;
            pg::migrate(options, std::filesystem::is_directory(dir / "postgresql", ec) ? dir / "postgresql" : dir);
            return;
        }
        db::Database conn(sqlite_path_);  // closed again before the workers start
        db::migrate(conn, dir);
    }

    template <class T>
    Task<std::optional<T>> find(typename db::detail::ModelInfo<T>::Key id) {
        if (postgres_) co_return co_await pg::find<T>(pg_.local(), id);
        co_return co_await read([&](db::Database& d) { return db::find<T>(d, id); });
    }

    template <class T>
    Task<std::vector<T>> all(std::string_view order_by = {}) {
        if (postgres_) co_return co_await pg::all<T>(pg_.local(), order_by);
        co_return co_await read([&](db::Database& d) { return db::all<T>(d, order_by); });
    }

    template <class T, class... Args>
    Task<std::vector<T>> where(db::Sql condition, Args... args) {
        if (postgres_) co_return co_await pg::where<T>(pg_.local(), condition, args...);
        co_return co_await read([&](db::Database& d) { return db::where<T>(d, condition, args...); });
    }

    // A key of 0 is assigned by the database and written back into obj.
    template <class T>
    Task<> insert(T& obj) {
        if (postgres_) co_return co_await pg::insert(pg_.local(), obj);
        co_await blocking([&] { db::insert(sqlite_.get(), obj); });
    }

    template <class T>
    Task<bool> update(const T& obj) {
        if (postgres_) co_return co_await pg::update(pg_.local(), obj);
        co_return co_await blocking([&] { return db::update(sqlite_.get(), obj); });
    }

    template <class T>
    Task<bool> remove(typename db::detail::ModelInfo<T>::Key id) {
        if (postgres_) co_return co_await pg::remove<T>(pg_.local(), id);
        co_return co_await blocking([&] { return db::remove<T>(sqlite_.get(), id); });
    }

    template <class T>
    Task<int64_t> count() {
        if (postgres_) co_return co_await pg::count<T>(pg_.local());
        co_return co_await read([&](db::Database& d) { return db::count<T>(d); });
    }

    template <class T>
    Task<db::Page<T>> page(int64_t number, int64_t per_page, std::string_view order_by = {}) {
        if (postgres_) co_return co_await pg::page<T>(pg_.local(), number, per_page, order_by);
        co_return co_await read([&](db::Database& d) { return db::page<T>(d, number, per_page, order_by); });
    }

    // For a health check: a round trip to PostgreSQL (throws db::Error(Io) while it
    // is unreachable); nothing to do on SQLite, a file of this machine.
    Task<> check() {
        if (postgres_) co_await pg_.local().exec("SELECT 1");
    }

    // One statement with ? placeholders (INSERT ... ON CONFLICT, DELETE ... WHERE),
    // on either engine: SQL both dialects accept. Returns the rows it changed.
    template <class... Args>
    Task<int64_t> execute(db::Sql sql, Args... args) {
        if (postgres_) {
            std::string text = pg::detail::numbered(sql.text());
            pg::Result r = co_await pg_.local().exec(db::trusted_sql(text), args...);
            co_return r.affected();
        }
        co_return co_await blocking([&] {
            sqlite_.get().exec(sql, args...);
            return sqlite_.get().changes();
        });
    }

    // The engines themselves, for what the calls above do not cover. REQUIRES: the
    // matching engine is the configured one; sqlite() only on a blocking-work thread.
    pg::Client& postgresql() { return pg_.local(); }
    db::Database& sqlite() { return sqlite_.get(); }

private:
    // A SQLite read: on this loop thread's own connection, which never waits for a
    // lock (busy timeout 0); one that would wait runs on the blocking threads instead.
    template <class F>
    auto read(F fn) -> Task<std::invoke_result_t<F&, db::Database&>> {
        if (reads_ == SqliteReads::OnLoop) {
            try {
                co_return fn(loop_reads_.get());
            } catch (const db::BusyError&) {
                // it would wait: on the threads below (a catch handler may not co_await)
            }
        }
        co_return co_await blocking([&] { return fn(sqlite_.get()); });
    }

    std::filesystem::path sqlite_path_;
    db::PerThread sqlite_;      // the blocking threads' connections: writes, and reads that would wait
    db::PerThread loop_reads_;  // the loop threads' connections: reads that do not wait
    SqliteReads reads_;
    pg::PerLoop pg_;
    bool postgres_ = false;
};

}  // namespace kiln
