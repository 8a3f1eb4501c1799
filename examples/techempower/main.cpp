// The TechEmpower Framework Benchmarks' seven tests on kiln, by the suite's rules,
// with PostgreSQL on kiln's own loops (kiln::pg, pipelined):
//
//   build/bin/techempower --port 8080 --database-url postgresql://user@127.0.0.1/db
//
//   /plaintext, /json                       no database
//   /db                                     one random World row
//   /queries?queries=N                      N rows, one query each, all sent at once
//   /updates?queries=N                      N rows read one by one, then one UPDATE
//   /fortunes                               every Fortune plus one, sorted, escaped
//   /cached-queries?count=N                 N rows from an in-process cache
//
// N is clamped to 1..500 (missing, 0 or not a number: 1). The schema and data
// (db/migrations) are applied at start when missing, so an empty database works.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <kiln/json.hpp>
#include <kiln/kiln.hpp>
#include <kiln/pg.hpp>

#include "fortune.hpp"
#include "views/fortunes.hpp"

namespace {

struct World {
    int32_t id;
    int32_t randomNumber;
};

void write_json(kiln::JsonWriter& w, const World& x) {
    w.begin_object().field("id", x.id).field("randomNumber", x.randomNumber).end_object();
}

struct Message {
    std::string_view message;
};

void write_json(kiln::JsonWriter& w, const Message& m) { w.begin_object().field("message", m.message).end_object(); }

constexpr int32_t kWorlds = 10000;
constexpr kiln::db::Sql kSelectWorld = "SELECT id, randomnumber FROM world WHERE id = $1";
// Many rows in one statement; ids arrive sorted, so two requests updating the same
// rows take their locks in the same order and cannot deadlock.
constexpr kiln::db::Sql kUpdateWorlds =
    "UPDATE world SET randomnumber = v.n FROM (SELECT unnest($1::int[]) AS id, unnest($2::int[]) AS n) AS v "
    "WHERE world.id = v.id";

kiln::pg::PerLoop db;  // a client per loop thread, made by its first query

int32_t random_id() {
    thread_local std::minstd_rand rng(std::random_device{}());
    return std::uniform_int_distribution<int32_t>(1, kWorlds)(rng);
}

// The count asked for in `name`, clamped to 1..500; anything not a number is 1.
int count_of(const kiln::Request& req, std::string_view name) {
    return static_cast<int>(std::clamp<long>(req.query_or<long>(name, 1), 1, 500));
}

World world_of(const kiln::pg::Result& r) {
    auto [id, number] = r.at(0).as<int32_t, int32_t>();
    return {id, number};
}

// n random rows, one query each; all n are sent before the first answer is awaited,
// so they share the connection's round trips.
kiln::Task<std::vector<World>> read_worlds(int n) {
    kiln::pg::Client& c = db.local();
    std::vector<kiln::pg::Query> pending;
    pending.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) pending.push_back(c.exec(kSelectWorld, random_id()));
    std::vector<World> worlds;
    worlds.reserve(static_cast<size_t>(n));
    for (kiln::pg::Query& q : pending) worlds.push_back(world_of(co_await q));
    co_return worlds;
}

// Gives each row a new random number and stores them all in one UPDATE. A row that
// came twice gets one number, the one stored, in both places of the answer.
kiln::Task<> update_worlds(std::vector<World>& worlds) {
    std::vector<size_t> order(worlds.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return worlds[a].id < worlds[b].id; });
    std::vector<int32_t> ids, numbers;
    ids.reserve(worlds.size());
    numbers.reserve(worlds.size());
    for (size_t i : order) {
        World& w = worlds[i];
        if (!ids.empty() && ids.back() == w.id) {
            w.randomNumber = numbers.back();
            continue;
        }
        w.randomNumber = random_id();
        ids.push_back(w.id);
        numbers.push_back(w.randomNumber);
    }
    co_await db.local().exec(kUpdateWorlds, ids, numbers);
}

// /cached-queries' cache: every World's number (index id - 1), per loop thread,
// loaded from the database by the first request on that loop that needs it.
thread_local std::vector<int32_t> cached_numbers;

kiln::Task<> fill_cache() {
    kiln::pg::Result r = co_await db.local().exec("SELECT id, randomnumber FROM world");
    if (!cached_numbers.empty()) co_return;  // another request filled it meanwhile
    std::vector<int32_t> numbers(kWorlds, 0);
    for (const kiln::pg::Row& row : r) {
        auto [id, number] = row.as<int32_t, int32_t>();
        if (id >= 1 && id <= kWorlds) numbers[static_cast<size_t>(id - 1)] = number;
    }
    cached_numbers = std::move(numbers);
}

}  // namespace

int main(int argc, char** argv) {
    kiln::App app;
    app.on_node_start([](const kiln::ServerOptions& o) {
        kiln::pg::Options options = kiln::pg::options_from(o);
        if (options.url.empty())
            throw std::runtime_error("techempower needs a database: --database-url URL (or KILN_DATABASE_URL)");
        kiln::pg::migrate(options, std::string(TFB_ROOT) + "/db/migrations");
    });
    app.on_worker_start([](const kiln::ServerOptions& o) { db.configure(kiln::pg::options_from(o)); });

    app.get("/plaintext", [](kiln::Request&, kiln::Response& res) { res.send("Hello, World!", "text/plain"); });
    app.get("/json", [](kiln::Request&, kiln::Response& res) { res.json(Message{"Hello, World!"}); });
    app.get("/db", [](kiln::Request&, kiln::Response& res) -> kiln::Task<> {
        res.json(world_of(co_await db.local().exec(kSelectWorld, random_id())));
    });
    app.get("/queries", [](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
        res.json(co_await read_worlds(count_of(req, "queries")));
    });
    app.get("/updates", [](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
        std::vector<World> worlds = co_await read_worlds(count_of(req, "queries"));
        co_await update_worlds(worlds);
        res.json(worlds);
    });
    app.get("/fortunes", [](kiln::Request&, kiln::Response& res) -> kiln::Task<> {
        kiln::pg::Result r = co_await db.local().exec("SELECT id, message FROM fortune");
        std::vector<tfb::Fortune> fortunes;
        fortunes.reserve(r.size() + 1);
        for (const kiln::pg::Row& row : r) fortunes.push_back({row.get<int32_t>(0), row.get<std::string_view>(1)});
        fortunes.push_back({0, "Additional fortune added at request time."});
        std::sort(fortunes.begin(), fortunes.end(),
                  [](const tfb::Fortune& a, const tfb::Fortune& b) { return a.message < b.message; });
        kiln::render(res, views::fortunes{.fortunes = fortunes});
    });
    app.get("/cached-queries", [](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
        if (cached_numbers.empty()) co_await fill_cache();
        int n = count_of(req, "count");
        std::vector<World> worlds;
        worlds.reserve(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) {
            int32_t id = random_id();
            worlds.push_back({id, cached_numbers[static_cast<size_t>(id - 1)]});
        }
        res.json(worlds);
    });
    return app.run(argc, argv);
}
