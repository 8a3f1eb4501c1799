// kiln::Store: one app, SQLite or PostgreSQL by configuration. The models
// (<kiln/model.hpp>) and the calls are the same either way; with no database URL in
// the settings (database.url, --database-url, KILN_DATABASE_URL) the data is in a
// SQLite file and every call runs on kiln's blocking-work threads (kiln::blocking);
// with one, it is in PostgreSQL and every call is a pipelined query on the loop.
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
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <kiln/blocking.hpp>
#include <kiln/db.hpp>
#include <kiln/model.hpp>
#include <kiln/pg.hpp>
#include <kiln/pg_model.hpp>
#include <kiln/server.hpp>

namespace kiln {

class Store {
public:
    // The SQLite file used when no database URL is configured (opened lazily, a
    // connection per blocking-work thread).
    explicit Store(std::filesystem::path sqlite_path) : sqlite_path_(sqlite_path), sqlite_(std::move(sqlite_path)) {}
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
        co_return co_await blocking([&] { return db::find<T>(sqlite_.get(), id); });
    }

    template <class T>
    Task<std::vector<T>> all(std::string_view order_by = {}) {
        if (postgres_) co_return co_await pg::all<T>(pg_.local(), order_by);
        co_return co_await blocking([&] { return db::all<T>(sqlite_.get(), order_by); });
    }

    template <class T, class... Args>
    Task<std::vector<T>> where(db::Sql condition, Args... args) {
        if (postgres_) co_return co_await pg::where<T>(pg_.local(), condition, args...);
        co_return co_await blocking([&] { return db::where<T>(sqlite_.get(), condition, args...); });
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
        co_return co_await blocking([&] { return db::count<T>(sqlite_.get()); });
    }

    template <class T>
    Task<db::Page<T>> page(int64_t number, int64_t per_page, std::string_view order_by = {}) {
        if (postgres_) co_return co_await pg::page<T>(pg_.local(), number, per_page, order_by);
        co_return co_await blocking([&] { return db::page<T>(sqlite_.get(), number, per_page, order_by); });
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
    std::filesystem::path sqlite_path_;
    db::PerThread sqlite_;
    pg::PerLoop pg_;
    bool postgres_ = false;
};

}  // namespace kiln
