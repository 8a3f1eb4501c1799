// kiln::Store on SQLite through the in-process client: reads run on the loop thread's
// own connection and never wait for a lock there; one that would wait (another
// process holds the database exclusively) runs on the blocking threads instead and
// answers once the lock is gone; a writer's open transaction leaves reads on the
// committed snapshot; SqliteReads::OnThreads answers the same.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <unistd.h>

#include <kiln/kiln.hpp>
#include <kiln/store.hpp>
#include <kiln/testing.hpp>

namespace {

struct Note {
    int64_t id = 0;
    std::string text;
};

}  // namespace

template <>
struct kiln::db::Model<Note> {
    static constexpr auto table = "notes";
    static constexpr auto fields = std::make_tuple(field("id", &Note::id), field("text", &Note::text));
};

namespace {

class StoreReads : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("kiln-store-test-" + std::to_string(::getpid()));
        std::filesystem::remove_all(dir_);
        path_ = dir_ / "app.sqlite";
        kiln::db::Database setup(path_);
        setup.exec("CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT NOT NULL)");
        setup.exec("INSERT INTO notes(text) VALUES('first')");
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    // GET /count: the notes; GET /first: the first note's text; POST /add: one more.
    static void routes(kiln::App& app, kiln::Store& store) {
        app.get("/count", [&](kiln::Request&, kiln::Response& res) -> kiln::Task<> {
            int64_t n = co_await store.count<Note>();
            res.text(std::to_string(n));
        });
        app.get("/first", [&](kiln::Request&, kiln::Response& res) -> kiln::Task<> {
            auto note = co_await store.find<Note>(1);
            res.text(note ? note->text : "none");
        });
        app.post("/add", [&](kiln::Request&, kiln::Response& res) -> kiln::Task<> {
            Note n{0, "added"};
            co_await store.insert(n);
            res.text(std::to_string(n.id));
        });
    }

    std::filesystem::path dir_, path_;
};

TEST_F(StoreReads, AWritersOpenTransactionLeavesReadsOnTheCommittedSnapshot) {
    kiln::App app;
    kiln::Store store(path_);
    routes(app, store);
    kiln::testing::Client client(app);
    EXPECT_EQ(client.get("/count").body, "1");

    kiln::db::Database writer(path_);
    writer.exec("BEGIN IMMEDIATE");
    writer.exec("INSERT INTO notes(text) VALUES('uncommitted')");
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(client.get("/count").body, "1");  // at once, not after the busy timeout
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
    writer.exec("COMMIT");
    EXPECT_EQ(client.get("/count").body, "2");

    auto added = client.post("/add", "");
    EXPECT_EQ(added.status, 200);
    EXPECT_EQ(client.get("/count").body, "3");  // the loop's connection sees the threads' write
}

TEST_F(StoreReads, AReadThatWouldWaitRunsOnTheThreadsAndAnswersOnceTheLockIsGone) {
    kiln::App app;
    kiln::Store store(path_);
    routes(app, store);
    kiln::testing::Client client(app);

    // Another process's connection takes the database for itself (exclusive locking
    // mode): on the loop a read would have to wait, so it must not be tried there.
    auto holder = std::make_unique<kiln::db::Database>(path_);
    holder->exec("PRAGMA locking_mode=EXCLUSIVE");
    holder->exec("INSERT INTO notes(text) VALUES('second')");
    std::thread release([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        holder.reset();
    });
    auto t0 = std::chrono::steady_clock::now();
    auto r = client.get("/count");
    auto waited = std::chrono::steady_clock::now() - t0;
    release.join();
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.body, "2");
    EXPECT_GE(waited, std::chrono::milliseconds(250));  // it waited, on a blocking thread
    EXPECT_EQ(client.get("/first").body, "first");      // and the loop's reads work again
}

TEST_F(StoreReads, OnThreadsAnswersTheSame) {
    kiln::App app;
    kiln::Store store(path_, kiln::SqliteReads::OnThreads);
    routes(app, store);
    kiln::testing::Client client(app);
    EXPECT_EQ(client.get("/count").body, "1");
    EXPECT_EQ(client.get("/first").body, "first");
    EXPECT_EQ(client.post("/add", "").body, "2");
    EXPECT_EQ(client.get("/count").body, "2");
}

}  // namespace
