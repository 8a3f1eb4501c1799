// kiln::blocking through the in-process client: fn runs on another thread and the
// handler resumes on its own; values of any type and exceptions come back; several
// calls in one handler, and a void one.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include <kiln/kiln.hpp>
#include <kiln/testing.hpp>

TEST(Blocking, RunsElsewhereAndComesBackWithValuesAndExceptions) {
    kiln::App app;
    app.get("/two", [](kiln::Request&, kiln::Response& res) -> kiln::Task<> {
        auto loop = std::this_thread::get_id();
        std::thread::id job;
        std::optional<int> a = co_await kiln::blocking([&] {
            job = std::this_thread::get_id();
            return std::optional<int>(40);
        });
        bool b = co_await kiln::blocking([&] { return true; });
        std::string s = co_await kiln::blocking([&] { return std::string(100, 'x'); });
        int touched = 0;
        co_await kiln::blocking([&] { touched = 2; });
        res.text(std::to_string(*a + touched) + (b ? " t " : " f ") + std::to_string(s.size()) +
                 (job != loop ? " elsewhere" : " on the loop") +
                 (std::this_thread::get_id() == loop ? ", back" : ", not back"));
    });
    app.get("/throws", [](kiln::Request&, kiln::Response&) -> kiln::Task<> {
        co_await kiln::blocking([]() -> int { throw kiln::HttpError(409, "taken"); });
    });
    app.get("/std", [](kiln::Request&, kiln::Response& res) -> kiln::Task<> {
        try {
            co_await kiln::blocking([] { throw std::runtime_error("boom"); });
        } catch (const std::runtime_error& e) {
            res.text(std::string("caught ") + e.what());
        }
    });
    kiln::testing::Client c(app);
    auto r = c.get("/two");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "42 t 100 elsewhere, back");
    auto t = c.get("/throws");
    EXPECT_EQ(t.status, 409);
    EXPECT_EQ(t.body, "taken\n");
    EXPECT_EQ(c.get("/std").body, "caught boom");
}

namespace {
struct Item {
    long id = 0;
    std::string title;
};

class ItemsController {
public:
    kiln::Task<> update(kiln::Request& req, kiln::Response& res) {
        auto item = co_await kiln::blocking([&] { return find(req.param<long>("id")); });
        if (!item) {
            res.status(404);
            co_return;
        }
        item->title = "edited";
        bool updated = co_await kiln::blocking([&] { return store(*item); });
        res.text(updated ? item->title : "gone");
    }

private:
    std::optional<Item> find(long id) { return id == 1 ? std::optional<Item>(Item{1, "first"}) : std::nullopt; }
    bool store(const Item& i) {
        stored_ = i.title;
        return true;
    }
    std::string stored_;
};
}  // namespace

TEST(Blocking, AControllerMethodCoroutineWithTwoCalls) {
    kiln::App app;
    ItemsController items;
    app.patch("/items/:id", [&items](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
        return items.update(req, res);
    });
    kiln::testing::Client c(app);
    auto r = c.request("PATCH", "/items/1");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "edited");
}

// A form POST with _method=PATCH reaches a coroutine route: the request must run as
// one (whether it waits is decided before the body, and so the _method, is read).
TEST(Blocking, AFormOverriddenToACoroutineRouteRunsAsOne) {
    kiln::App app;
    app.patch("/things/:id", [](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
        long id = req.param<long>("id");
        long twice = co_await kiln::blocking([&] { return id * 2; });
        res.text("patched " + std::to_string(twice));
    });
    app.post("/plain", [](kiln::Request&, kiln::Response& res) { res.text("plain post"); });
    kiln::testing::Client c(app);
    auto r = c.post("/things/21", "_method=PATCH&x=1", {{"Content-Type", "application/x-www-form-urlencoded"}});
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "patched 42");
    EXPECT_EQ(c.post("/plain", "a=1", {{"Content-Type", "application/x-www-form-urlencoded"}}).body, "plain post");
}
