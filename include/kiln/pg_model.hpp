// kiln::db models on PostgreSQL: the same Model<T> description (<kiln/model.hpp>),
// the same operations as on SQLite, in coroutine form on a pg::Client:
//
//   std::optional<Post> p = co_await kiln::pg::find<Post>(db, id);
//   co_await kiln::pg::insert(db, post);              // a key of 0: PostgreSQL assigns it
//   auto recent = co_await kiln::pg::where<Post>(db, "created_at > ? ORDER BY id", since);
//   kiln::db::Page<Post> page = co_await kiln::pg::page<Post>(db, n, 10, "created_at DESC");
//
// Conditions are written with ? as on SQLite (or with $1, $2, ...): each ? outside a
// quoted string or name becomes the next $n, so one condition serves both engines.
// The key column is a serial/identity column (or any integer the app fills). Field
// types are what pg::Codec reads and writes (integers, floating point, bool, strings,
// optionals). Arguments are taken by value (the task may run later); an order_by
// string_view must outlive the await.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <kiln/model.hpp>
#include <kiln/pg.hpp>

namespace kiln::pg {

namespace detail {

// sql with each ? outside '...', "..." and $$...$$ turned into $1, $2, ... in order.
std::string numbered(std::string_view sql);

struct PgModelSql {
    std::string select, find, insert_returning, insert_with_key, update, remove, count, where;
};
PgModelSql pg_model_sql(const db::detail::ModelSql& s, std::string_view key);

template <class T>
struct PgModel {
    using I = db::detail::ModelInfo<T>;
    static const PgModelSql& sql() {
        static const PgModelSql s = pg_model_sql(I::sql(), I::names[0]);
        return s;
    }
    static T read(const Row& row) {
        T obj{};
        [&]<size_t... F>(std::index_sequence<F...>) {
            ((obj.*(std::get<F>(db::Model<T>::fields).member) =
                  Codec<typename I::template FieldType<F>>::read(row.field(static_cast<int>(F)))),
             ...);
        }(std::make_index_sequence<I::N>{});
        return obj;
    }
    static std::vector<T> read_all(const Result& r) {
        std::vector<T> out;
        out.reserve(r.size());
        for (const Row& row : r) out.push_back(read(row));
        return out;
    }
};

}  // namespace detail

template <class T>
Task<std::optional<T>> find(Client& db, typename db::detail::ModelInfo<T>::Key id) {
    using M = detail::PgModel<T>;
    Result r = co_await db.exec(db::trusted_sql(M::sql().find), id);
    if (r.empty()) co_return std::nullopt;
    co_return M::read(r[0]);
}

// Every row, ordered by order_by (validated: db::valid_order_by<T>) or by the key.
template <class T>
Task<std::vector<T>> all(Client& db, std::string_view order_by = {}) {
    using M = detail::PgModel<T>;
    std::string sql = db::detail::ModelInfo<T>::ordered(M::sql().select, order_by);
    Result r = co_await db.exec(db::trusted_sql(sql));
    co_return M::read_all(r);
}

template <class T, class... Args>
Task<std::vector<T>> where(Client& db, db::Sql condition, Args... args) {
    using M = detail::PgModel<T>;
    std::string sql = M::sql().where + detail::numbered(condition.text());
    Result r = co_await db.exec(db::trusted_sql(sql), args...);
    co_return M::read_all(r);
}

// A key of 0 lets PostgreSQL assign one (RETURNING), written back into obj; any
// other key is inserted as given (ConstraintViolation if taken). obj must outlive
// the await.
template <class T>
Task<> insert(Client& db, T& obj) {
    using I = db::detail::ModelInfo<T>;
    using M = detail::PgModel<T>;
    auto& key = obj.*(std::get<0>(db::Model<T>::fields).member);
    if (key == 0) {
        Query q = [&]<size_t... F>(std::index_sequence<F...>) {
            return db.exec(db::trusted_sql(M::sql().insert_returning), I::template get<F + 1>(obj)...);
        }(std::make_index_sequence<I::N - 1>{});
        Result r = co_await q;
        key = r.at(0).template get<typename I::Key>(0);
    } else {
        Query q = [&]<size_t... F>(std::index_sequence<F...>) {
            return db.exec(db::trusted_sql(M::sql().insert_with_key), I::template get<F>(obj)...);
        }(std::make_index_sequence<I::N>{});
        co_await q;
    }
}

// Writes every field of obj to the row with its key; false if there is no such row.
template <class T>
Task<bool> update(Client& db, const T& obj) {
    using I = db::detail::ModelInfo<T>;
    static_assert(I::N >= 2, "kiln::pg::update: the model has no field besides the key");
    Query q = [&]<size_t... F>(std::index_sequence<F...>) {
        return db.exec(db::trusted_sql(detail::PgModel<T>::sql().update), I::template get<F + 1>(obj)...,
                       I::template get<0>(obj));
    }(std::make_index_sequence<I::N - 1>{});
    Result r = co_await q;
    co_return r.affected() > 0;
}

template <class T>
Task<bool> remove(Client& db, typename db::detail::ModelInfo<T>::Key id) {
    Result r = co_await db.exec(db::trusted_sql(detail::PgModel<T>::sql().remove), id);
    co_return r.affected() > 0;
}

template <class T>
Task<int64_t> count(Client& db) {
    Result r = co_await db.exec(db::trusted_sql(detail::PgModel<T>::sql().count));
    co_return r.at(0).template get<int64_t>(0);
}

template <class T, class... Args>
Task<int64_t> count(Client& db, db::Sql condition, Args... args) {
    std::string sql = detail::PgModel<T>::sql().count + " WHERE " + detail::numbered(condition.text());
    Result r = co_await db.exec(db::trusted_sql(sql), args...);
    co_return r.at(0).template get<int64_t>(0);
}

// One page, as db::page: 1-based (page < 1 serves page 1), per_page >= 1 (else
// db::Error(Misuse)), ordered by order_by or the key; a page past the end is empty.
// The count and the rows are two statements sent together; under concurrent writes
// the total may differ from the rows by what was written between them.
template <class T>
Task<db::Page<T>> page(Client& db, int64_t page, int64_t per_page, std::string_view order_by = {}) {
    using M = detail::PgModel<T>;
    if (per_page < 1) throw db::Error(db::ErrorKind::Misuse, 0, "page(): per_page must be at least 1", {});
    db::Page<T> out;
    out.page = std::max<int64_t>(page, 1);
    out.per_page = per_page;
    // The offset cannot overflow: a page whose first row would be past INT64_MAX is
    // past the end of any table, and asks for none.
    int64_t offset = out.page - 1 > INT64_MAX / per_page ? INT64_MAX : (out.page - 1) * per_page;
    std::string sql = db::detail::ModelInfo<T>::ordered(M::sql().select, order_by) + " LIMIT $1 OFFSET $2";
    Query total = db.exec(db::trusted_sql(M::sql().count));
    Query rows = db.exec(db::trusted_sql(sql), per_page, offset);
    Result t = co_await total;
    Result r = co_await rows;
    out.total = t.at(0).template get<int64_t>(0);
    out.pages = out.total == 0 ? 0 : (out.total - 1) / per_page + 1;
    if (out.page <= out.pages) out.items = M::read_all(r);
    co_return out;
}

}  // namespace kiln::pg
