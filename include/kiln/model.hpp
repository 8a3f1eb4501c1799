// kiln::db models: describe a struct once, at compile time, and get typed CRUD.
//
//   struct Post { int64_t id = 0; std::string title; int64_t created_at = 0; };
//   template <> struct kiln::db::Model<Post> {
//       static constexpr auto table = "posts";
//       static constexpr auto fields = std::make_tuple(
//           field("id", &Post::id), field("title", &Post::title), field("created_at", &Post::created_at));
//   };
//
// The first field is the integer primary key (an INTEGER PRIMARY KEY column). Table
// and column names come only from this description (checked to be identifiers at
// compile time) and every value is bound, so no input reaches the SQL text; an
// order_by string is only accepted if it names fields of the list. Statements go
// through Database::exec and its cache; same thread rules as the Database.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <kiln/db.hpp>

namespace kiln::db {

// Specialise for each persisted struct: `table` and `fields` (see above).
template <class T>
struct Model;

template <class C, class M>
struct Field {
    std::string_view name;
    M C::*member;
};

namespace detail {

constexpr bool is_identifier(std::string_view s) {
    if (s.empty()) return false;
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
        if (!ok) return false;
    }
    return true;
}

}  // namespace detail

// One column: its SQL name (a plain identifier; a compile error otherwise) and member.
template <class C, class M>
consteval Field<C, M> field(std::string_view name, M C::*member) {
    if (!detail::is_identifier(name)) throw std::invalid_argument("kiln::db::field: name is not an identifier");
    return {name, member};
}

template <class T>
struct Page {
    std::vector<T> items;
    int64_t total = 0;     // rows in the table
    int64_t page = 1;      // 1-based, as served
    int64_t per_page = 0;
    int64_t pages = 0;     // 0 when the table is empty
};

namespace detail {

// SQL for one model, built once from its compile-time names.
struct ModelSql {
    std::string select;           // SELECT "a", "b" FROM "t"
    std::string find;             // ... WHERE "id" = ?
    std::string insert;           // without the key: SQLite assigns it
    std::string insert_with_key;
    std::string update;           // SET every non-key field WHERE key = ?
    std::string remove;
    std::string count;
    std::string where;            // select + " WHERE "
};
ModelSql build_model_sql(std::string_view table, std::span<const std::string_view> names);
// " ORDER BY ..." for "name [ASC|DESC], ..." where every name is in `names`; an
// empty order_by orders by the key. nullopt if order_by names anything else.
std::optional<std::string> order_clause(std::span<const std::string_view> names, std::string_view order_by);
[[noreturn]] void bad_order_by(std::string_view table, std::string_view order_by);

template <class T>
struct ModelInfo {
    using Fields = std::remove_cvref_t<decltype(Model<T>::fields)>;
    static constexpr size_t N = std::tuple_size_v<Fields>;
    static constexpr std::string_view table = Model<T>::table;
    template <size_t I>
    using FieldType = std::remove_cvref_t<decltype(std::declval<T&>().*(std::get<I>(Model<T>::fields).member))>;
    using Key = FieldType<0>;

    static_assert(N >= 1, "kiln::db::Model: list at least the key field");
    static_assert(is_identifier(table), "kiln::db::Model: table is not an identifier");
    static_assert(std::is_integral_v<Key>, "kiln::db::Model: the first field is the integer primary key");
    static_assert([]<size_t... I>(std::index_sequence<I...>) { return (!detail::borrows<FieldType<I>> && ...); }(
                      std::make_index_sequence<N>{}),
                  "kiln::db::Model: a string_view or span field would point into a statement's row once read: "
                  "use std::string or std::vector<std::byte>");

    static constexpr std::array<std::string_view, N> names =
        []<size_t... I>(std::index_sequence<I...>) {
            return std::array<std::string_view, N>{std::get<I>(Model<T>::fields).name...};
        }(std::make_index_sequence<N>{});

    static const ModelSql& sql() {
        static const ModelSql s = build_model_sql(table, names);
        return s;
    }

    static T read(const Row& row) {
        T obj{};
        [&]<size_t... I>(std::index_sequence<I...>) {
            ((obj.*(std::get<I>(Model<T>::fields).member) = Codec<FieldType<I>>::read(row.column(int(I)))), ...);
        }(std::make_index_sequence<N>{});
        return obj;
    }

    static std::vector<T> read_all(Result r) {
        std::vector<T> out;
        for (const Row& row : r) out.push_back(read(row));
        return out;
    }

    static std::string ordered(std::string_view base, std::string_view order_by) {
        auto clause = order_clause(names, order_by);
        if (!clause) bad_order_by(table, order_by);
        return std::string(base) + *clause;
    }

    template <size_t I>
    static const FieldType<I>& get(const T& obj) {
        return obj.*(std::get<I>(Model<T>::fields).member);
    }
};

}  // namespace detail

// True if order_by ("field [ASC|DESC], ...") names only fields of T: check input
// with it to answer 400 instead of letting all()/page() throw Error(Misuse).
template <class T>
bool valid_order_by(std::string_view order_by) {
    return detail::order_clause(detail::ModelInfo<T>::names, order_by).has_value();
}

template <class T>
std::optional<T> find(Database& db, const typename detail::ModelInfo<T>::Key& id) {
    using I = detail::ModelInfo<T>;
    Result r = db.exec(trusted_sql(I::sql().find), id);
    if (!r.has_row()) return std::nullopt;
    return I::read(r.row());
}

// Every row, ordered by order_by (validated, see valid_order_by) or by the key.
template <class T>
std::vector<T> all(Database& db, std::string_view order_by = {}) {
    using I = detail::ModelInfo<T>;
    std::string sql = I::ordered(I::sql().select, order_by);
    return I::read_all(db.exec(trusted_sql(sql)));
}

// Rows matching `condition` (the user's SQL after WHERE, may end in ORDER BY or
// LIMIT), with its ? parameters bound to args.
template <class T, class... Args>
std::vector<T> where(Database& db, Sql condition, const Args&... args) {
    using I = detail::ModelInfo<T>;
    std::string sql = I::sql().where + std::string(condition.text());
    return I::read_all(db.exec(trusted_sql(sql), args...));
}

// Inserts obj. A key of 0 lets SQLite assign one, written back into obj; any other
// key is inserted as given (ConstraintViolation if taken).
template <class T>
void insert(Database& db, T& obj) {
    using I = detail::ModelInfo<T>;
    auto& key = obj.*(std::get<0>(Model<T>::fields).member);
    if (key == 0) {
        [&]<size_t... F>(std::index_sequence<F...>) {
            db.exec(trusted_sql(I::sql().insert), I::template get<F + 1>(obj)...);
        }(std::make_index_sequence<I::N - 1>{});
        key = static_cast<typename I::Key>(db.last_insert_id());
    } else {
        [&]<size_t... F>(std::index_sequence<F...>) {
            db.exec(trusted_sql(I::sql().insert_with_key), I::template get<F>(obj)...);
        }(std::make_index_sequence<I::N>{});
    }
}

// Writes every field of obj to the row with its key; false if there is no such row.
template <class T>
bool update(Database& db, const T& obj) {
    using I = detail::ModelInfo<T>;
    static_assert(I::N >= 2, "kiln::db::update: the model has no field besides the key");
    [&]<size_t... F>(std::index_sequence<F...>) {
        db.exec(trusted_sql(I::sql().update), I::template get<F + 1>(obj)..., I::template get<0>(obj));
    }(std::make_index_sequence<I::N - 1>{});
    return db.changes() > 0;
}

// Deletes the row with this key; false if there was none.
template <class T>
bool remove(Database& db, const typename detail::ModelInfo<T>::Key& id) {
    db.exec(trusted_sql(detail::ModelInfo<T>::sql().remove), id);
    return db.changes() > 0;
}

template <class T>
int64_t count(Database& db) {
    return db.scalar<int64_t>(trusted_sql(detail::ModelInfo<T>::sql().count));
}

template <class T, class... Args>
int64_t count(Database& db, Sql condition, const Args&... args) {
    std::string sql = detail::ModelInfo<T>::sql().count + " WHERE " + std::string(condition.text());
    return db.scalar<int64_t>(trusted_sql(sql), args...);
}

// One page (1-based; page < 1 serves page 1) of per_page rows (REQUIRES per_page
// >= 1, else Error(Misuse)) ordered by order_by or the key, with the total, read
// in one transaction so items and total agree. A page past the end is empty.
template <class T>
Page<T> page(Database& db, int64_t page, int64_t per_page, std::string_view order_by = {}) {
    using I = detail::ModelInfo<T>;
    if (per_page < 1) throw Error(ErrorKind::Misuse, 0, "page(): per_page must be at least 1", {});
    std::string sql = I::ordered(I::sql().select, order_by) + " LIMIT ? OFFSET ?";
    Page<T> out;
    out.page = std::max<int64_t>(page, 1);
    out.per_page = per_page;
    Transaction tx = db.transaction(TxMode::Deferred);
    out.total = count<T>(db);
    out.pages = out.total == 0 ? 0 : (out.total - 1) / per_page + 1;
    if (out.page <= out.pages) {  // so (page - 1) * per_page < total: no overflow
        out.items = I::read_all(db.exec(trusted_sql(sql), per_page, (out.page - 1) * per_page));
    }
    tx.commit();
    return out;
}

}  // namespace kiln::db
