// db::Model<T> on PostgreSQL (<kiln/pg_model.hpp>) against a real server: the same
// description as on SQLite gives find/all/where/insert/update/remove/count/page;
// conditions written with ? work unchanged; order_by is checked; NULL columns read
// into optionals.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include <kiln/pg_model.hpp>

#include "pg_test_support.hpp"

using kiln::Task;
using kiln::pg_test::pg_url;
using kiln::pg_test::run;
namespace db = kiln::db;
namespace pg = kiln::pg;

namespace shop {
struct Item {
    int64_t id = 0;
    std::string name;
    double price = 0;
    std::optional<std::string> note;
};
}  // namespace shop

template <>
struct kiln::db::Model<shop::Item> {
    static constexpr auto table = "items";
    static constexpr auto fields = std::make_tuple(field("id", &shop::Item::id), field("name", &shop::Item::name),
                                                   field("price", &shop::Item::price),
                                                   field("note", &shop::Item::note));
};

using shop::Item;

TEST(PgModel, TheSameModelDoesCrudPagesAndConditionsOnPostgreSQL) {
    run([&]() -> Task<> {
        pg::Client c({.url = pg_url()});
        co_await c.exec("DROP TABLE IF EXISTS items");
        co_await c.exec("CREATE TABLE items (id bigserial PRIMARY KEY, name text NOT NULL, price float8 NOT NULL, note text)");
        std::vector<Item> made;
        for (int i = 1; i <= 25; ++i) {
            Item it{0, "item " + std::to_string(i), i * 1.5, i % 5 == 0 ? std::optional<std::string>("fifth") : std::nullopt};
            co_await pg::insert(c, it);
            EXPECT_EQ(it.id, i);  // assigned by PostgreSQL, written back
            made.push_back(it);
        }
        Item fixed{100, "fixed key", 1, std::nullopt};
        co_await pg::insert(c, fixed);
        EXPECT_EQ(fixed.id, 100);

        std::optional<Item> five = co_await pg::find<Item>(c, 5);
        EXPECT_TRUE(five && five->name == "item 5" && five->price == 7.5 && five->note == "fifth");
        std::optional<Item> none = co_await pg::find<Item>(c, 999);
        EXPECT_FALSE(none.has_value());

        std::vector<Item> cheap = co_await pg::where<Item>(c, "price < ? AND name <> '?' ORDER BY price DESC", 4.0);
        EXPECT_EQ(cheap.size(), 3u);  // the 1.5, 3 and the 1 of "fixed key"
        if (cheap.size() == 3) {
            EXPECT_EQ(cheap[0].name, "item 2");
            EXPECT_FALSE(cheap[0].note.has_value());
        }
        int64_t noted = co_await pg::count<Item>(c, "note = ?", std::string("fifth"));
        EXPECT_EQ(noted, 5);
        int64_t all_count = co_await pg::count<Item>(c);
        EXPECT_EQ(all_count, 26);

        std::vector<Item> ordered = co_await pg::all<Item>(c, "price DESC, id");
        EXPECT_EQ(ordered.size(), 26u);
        if (!ordered.empty()) {
            EXPECT_EQ(ordered.front().name, "item 25");
        }
        EXPECT_FALSE(db::valid_order_by<Item>("price; DROP TABLE items"));
        bool misuse = false;
        try {
            co_await pg::all<Item>(c, "nope");
        } catch (const db::Error& e) {
            misuse = e.kind() == db::ErrorKind::Misuse;
        }
        EXPECT_TRUE(misuse);

        db::Page<Item> p3 = co_await pg::page<Item>(c, 3, 10, "id");
        EXPECT_EQ(p3.total, 26);
        EXPECT_EQ(p3.pages, 3);
        EXPECT_EQ(p3.items.size(), 6u);
        db::Page<Item> past = co_await pg::page<Item>(c, 4, 10);
        EXPECT_TRUE(past.items.empty());
        db::Page<Item> far = co_await pg::page<Item>(c, INT64_MAX, 10);
        EXPECT_TRUE(far.items.empty());

        Item changed = made[1];
        changed.name = "renamed";
        changed.note = "now noted";
        bool updated = co_await pg::update(c, changed);
        EXPECT_TRUE(updated);
        std::optional<Item> back = co_await pg::find<Item>(c, changed.id);
        EXPECT_TRUE(back && back->name == "renamed" && back->note == "now noted");
        bool removed = co_await pg::remove<Item>(c, changed.id);
        EXPECT_TRUE(removed);
        bool again = co_await pg::remove<Item>(c, changed.id);
        EXPECT_FALSE(again);
        bool ghost = co_await pg::update(c, changed);
        EXPECT_FALSE(ghost);

        bool taken = false;
        try {
            co_await pg::insert(c, fixed);  // key 100 exists
        } catch (const db::ConstraintViolation& e) {
            taken = e.constraint() == db::Constraint::Unique;
        }
        EXPECT_TRUE(taken);
        co_await c.exec("DROP TABLE items");
    });
}

TEST(PgModel, QuestionMarksBecomeNumberedOutsideQuotes) {
    EXPECT_EQ(pg::detail::numbered("a = ? AND b = ?"), "a = $1 AND b = $2");
    EXPECT_EQ(pg::detail::numbered("x = '?' AND \"we?rd\" = ? OR y = 'it''s ?'"),
              "x = '?' AND \"we?rd\" = $1 OR y = 'it''s ?'");
    EXPECT_EQ(pg::detail::numbered("f($$ ? $$) = ?"), "f($$ ? $$) = $1");
    EXPECT_EQ(pg::detail::numbered("a = $1"), "a = $1");
}
