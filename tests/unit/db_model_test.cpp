// Unit tests of the model layer (include/kiln/model.hpp, src/db/model.cpp): a
// struct described once gets find/all/where/insert/update/remove/count/page; then
// the error paths: order_by outside the field list, constraint errors through the
// model, hostile text stored verbatim, pagination at and past its edges.
#include <kiln/model.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace blog {
struct Post {
    int64_t id = 0;
    std::string title;
    std::string body;
    std::optional<std::string> slug;
    int64_t created_at = 0;
    int64_t updated_at = 0;
};
}  // namespace blog

template <>
struct kiln::db::Model<blog::Post> {
    static constexpr auto table = "posts";
    static constexpr auto fields = std::make_tuple(
        field("id", &blog::Post::id), field("title", &blog::Post::title), field("body", &blog::Post::body),
        field("slug", &blog::Post::slug), field("created_at", &blog::Post::created_at),
        field("updated_at", &blog::Post::updated_at));
};

namespace kiln::db {
namespace {

using blog::Post;
namespace fs = std::filesystem;

class ModelTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("kiln_db_model_" + std::to_string(getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        db_.emplace(dir_ / "a.db");
        db().exec(
            "CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL, "
            "slug TEXT UNIQUE, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)");
    }
    void TearDown() override {
        db_.reset();
        fs::remove_all(dir_);
    }
    Database& db() { return *db_; }
    Post add(std::string title, int64_t created_at = 100) {
        Post p{0, std::move(title), "body", std::nullopt, created_at, created_at};
        insert(db(), p);
        return p;
    }
    static std::vector<std::string> titles(const std::vector<Post>& ps) {
        std::vector<std::string> out;
        for (const Post& p : ps) out.push_back(p.title);
        return out;
    }

    fs::path dir_;
    std::optional<Database> db_;
};

TEST_F(ModelTest, InsertSetsTheIdAndFindReadsEveryField) {
    Post p{0, "Hello", "First post", "hello", 1700000000, 1700000001};
    insert(db(), p);
    EXPECT_EQ(p.id, 1);
    std::optional<Post> back = find<Post>(db(), p.id);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->id, 1);
    EXPECT_EQ(back->title, "Hello");
    EXPECT_EQ(back->body, "First post");
    EXPECT_EQ(back->slug, "hello");
    EXPECT_EQ(back->created_at, 1700000000);
    EXPECT_EQ(back->updated_at, 1700000001);
    EXPECT_EQ(find<Post>(db(), 2), std::nullopt);
}

TEST_F(ModelTest, InsertWithAnExplicitKeyKeepsIt) {
    Post p{42, "Answer", "", std::nullopt, 1, 1};
    insert(db(), p);
    EXPECT_EQ(p.id, 42);
    EXPECT_EQ(find<Post>(db(), 42)->title, "Answer");
    EXPECT_EQ(find<Post>(db(), 42)->slug, std::nullopt);
}

TEST_F(ModelTest, UpdateWritesEveryFieldAndReportsMissingRows) {
    Post p = add("Old");
    p.title = "New";
    p.slug = "new";
    p.updated_at = 200;
    EXPECT_TRUE(update(db(), p));
    Post back = *find<Post>(db(), p.id);
    EXPECT_EQ(back.title, "New");
    EXPECT_EQ(back.slug, "new");
    EXPECT_EQ(back.updated_at, 200);
    Post ghost = p;
    ghost.id = 999;
    EXPECT_FALSE(update(db(), ghost));
}

TEST_F(ModelTest, RemoveAndCount) {
    Post a = add("a");
    add("b");
    EXPECT_EQ(count<Post>(db()), 2);
    EXPECT_TRUE(remove<Post>(db(), a.id));
    EXPECT_FALSE(remove<Post>(db(), a.id));
    EXPECT_EQ(count<Post>(db()), 1);
    EXPECT_EQ(count<Post>(db(), "title = ?", "b"), 1);
    EXPECT_EQ(count<Post>(db(), "title = ?", "a"), 0);
}

TEST_F(ModelTest, AllOrdersByKeyOrByValidatedFields) {
    add("b", 300);
    add("c", 100);
    add("a", 200);
    EXPECT_EQ(titles(all<Post>(db())), (std::vector<std::string>{"b", "c", "a"}));
    EXPECT_EQ(titles(all<Post>(db(), "title")), (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(titles(all<Post>(db(), "created_at DESC")), (std::vector<std::string>{"b", "a", "c"}));
    EXPECT_EQ(titles(all<Post>(db(), " body asc , title desc ")), (std::vector<std::string>{"c", "b", "a"}));
}

TEST_F(ModelTest, WhereBindsTheValues) {
    add("x", 1);
    add("y", 2);
    add("z", 3);
    EXPECT_EQ(titles(where<Post>(db(), "created_at >= ? ORDER BY created_at DESC", 2)),
              (std::vector<std::string>{"z", "y"}));
    EXPECT_TRUE(where<Post>(db(), "title = ?", "nope").empty());
}

TEST_F(ModelTest, PageReturnsItemsTotalAndPageCount) {
    for (int i = 1; i <= 25; ++i) add("p" + std::to_string(i), i);
    Page<Post> first = page<Post>(db(), 1, 10, "created_at");
    EXPECT_EQ(first.total, 25);
    EXPECT_EQ(first.pages, 3);
    EXPECT_EQ(first.page, 1);
    EXPECT_EQ(first.per_page, 10);
    ASSERT_EQ(first.items.size(), 10u);
    EXPECT_EQ(first.items.front().title, "p1");
    EXPECT_EQ(first.items.back().title, "p10");

    Page<Post> last = page<Post>(db(), 3, 10, "created_at");
    ASSERT_EQ(last.items.size(), 5u);
    EXPECT_EQ(last.items.front().title, "p21");
    EXPECT_EQ(last.items.back().title, "p25");

    Page<Post> newest = page<Post>(db(), 1, 10, "created_at DESC");
    EXPECT_EQ(newest.items.front().title, "p25");
}

TEST_F(ModelTest, PageBoundaries) {
    Page<Post> empty = page<Post>(db(), 1, 10);
    EXPECT_EQ(empty.total, 0);
    EXPECT_EQ(empty.pages, 0);
    EXPECT_TRUE(empty.items.empty());

    for (int i = 1; i <= 20; ++i) add("p" + std::to_string(i), i);
    Page<Post> exact = page<Post>(db(), 2, 10);  // total is a multiple of per_page
    EXPECT_EQ(exact.pages, 2);
    EXPECT_EQ(exact.items.size(), 10u);
    EXPECT_TRUE(page<Post>(db(), 3, 10).items.empty());  // one past the end
    EXPECT_TRUE(page<Post>(db(), INT64_MAX, 10).items.empty());  // no offset overflow
    Page<Post> zero = page<Post>(db(), 0, 10);  // below 1 serves page 1
    EXPECT_EQ(zero.page, 1);
    EXPECT_EQ(zero.items.front().title, "p1");
    EXPECT_EQ(page<Post>(db(), -5, 10).page, 1);
    Page<Post> one = page<Post>(db(), 20, 1);
    ASSERT_EQ(one.items.size(), 1u);
    EXPECT_EQ(one.items[0].title, "p20");
    EXPECT_EQ(one.pages, 20);
}

TEST_F(ModelTest, HostileTextIsStoredAndReadBackVerbatim) {
    const std::string evil = "'); DROP TABLE posts;--";
    Post p = add(evil);
    EXPECT_EQ(find<Post>(db(), p.id)->title, evil);
    EXPECT_EQ(where<Post>(db(), "title = ?", evil).size(), 1u);
    EXPECT_EQ(where<Post>(db(), "title = ?", "' OR 1=1 --").size(), 0u);
    EXPECT_EQ(db().scalar<int>("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'posts'"), 1);
    EXPECT_EQ(count<Post>(db()), 1);
}

// ---------------------------------------------------------------- error paths

TEST_F(ModelTest, ErrorOrderByOutsideTheFieldListIsRefused) {
    add("a");
    for (const char* bad : {"title; DROP TABLE posts", "(SELECT 1)", "nope", "title DESCENDING", "title,",
                            "\"title\"", "title -- x", "1", "title DESC, id; --"}) {
        EXPECT_FALSE(valid_order_by<Post>(bad)) << bad;
        try {
            all<Post>(db(), bad);
            FAIL() << bad;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Misuse) << bad;
            EXPECT_NE(std::string(e.what()).find("not a field of posts"), std::string::npos) << e.what();
        }
        EXPECT_THROW(page<Post>(db(), 1, 10, bad), Error) << bad;
    }
    EXPECT_TRUE(valid_order_by<Post>("title"));
    EXPECT_TRUE(valid_order_by<Post>("updated_at DESC, id"));
    EXPECT_EQ(count<Post>(db()), 1);
}

// ?sort=id,id,id,... : a field twice sorts nothing more; thousands of terms failed in
// SQLite (a 500 per request) and each spelling took a statement-cache slot.
TEST_F(ModelTest, ErrorOrderByNamingAFieldTwiceIsRefused) {
    add("a");
    EXPECT_FALSE(valid_order_by<Post>("id, id"));
    EXPECT_FALSE(valid_order_by<Post>("title DESC, id, title ASC"));
    std::string many = "id";
    for (int i = 0; i < 2000; ++i) many += ",id";
    EXPECT_FALSE(valid_order_by<Post>(many));
    try {
        all<Post>(db(), many);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Misuse);
        EXPECT_NE(std::string(e.what()).find("each field once"), std::string::npos) << e.what();
    }
}

TEST_F(ModelTest, ErrorPerPageMustBePositive) {
    EXPECT_THROW(page<Post>(db(), 1, 0), Error);
    EXPECT_THROW(page<Post>(db(), 1, -3), Error);
}

TEST_F(ModelTest, ErrorUniqueViolationThroughTheModel) {
    Post a{0, "a", "", "same", 1, 1};
    insert(db(), a);
    Post b{0, "b", "", "same", 1, 1};
    try {
        insert(db(), b);
        FAIL();
    } catch (const ConstraintViolation& e) {
        EXPECT_EQ(e.constraint(), Constraint::Unique);
        EXPECT_NE(std::string(e.what()).find("INSERT INTO \"posts\""), std::string::npos) << e.what();
    }
    EXPECT_EQ(b.id, 0);  // not set on failure
    Post dup_key{a.id, "c", "", std::nullopt, 1, 1};
    try {
        insert(db(), dup_key);
        FAIL();
    } catch (const ConstraintViolation& e) {
        EXPECT_EQ(e.constraint(), Constraint::PrimaryKey);
    }
}

TEST_F(ModelTest, ErrorColumnOfTheWrongTypeInTheTable) {
    db().exec("INSERT INTO posts (title, body, created_at, updated_at) VALUES ('t', 'b', 'not a number', 0)");
    try {
        all<Post>(db());
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Type);
        EXPECT_NE(std::string(e.what()).find("created_at"), std::string::npos) << e.what();
    }
}

TEST_F(ModelTest, ErrorMissingTable) {
    db().exec("DROP TABLE posts");
    EXPECT_THROW(find<Post>(db(), 1), SqlError);
    Post p{0, "a", "", std::nullopt, 1, 1};
    EXPECT_THROW(insert(db(), p), SqlError);
}

}  // namespace
}  // namespace kiln::db
