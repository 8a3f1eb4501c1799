// kiln::JsonWriter and res.json's fast path: what it writes is JSON that nlohmann
// reads back to the same values (escapes, control characters, invalid UTF-8 as
// U+FFFD, numbers at their limits, nesting), app types through write_json found by
// ADL, and res.json choosing it over nlohmann only for the types it can write.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>
#include <kiln/testing.hpp>

namespace shop {

struct Item {
    int64_t id;
    std::string name;
    std::optional<double> price;
    std::vector<std::string> tags;
};

void write_json(kiln::JsonWriter& w, const Item& x) {
    w.begin_object().field("id", x.id).field("name", x.name).field("price", x.price).field("tags", x.tags).end_object();
}

// A type nlohmann knows and the writer does not: res.json must take nlohmann's path.
struct Legacy {
    int n;
};
void to_json(nlohmann::json& j, const Legacy& l) { j = {{"legacy", l.n}}; }

}  // namespace shop

namespace {

std::string write(auto&& v) {
    std::string out;
    kiln::JsonWriter(out).value(v);
    return out;
}

}  // namespace

TEST(JsonWriter, WritesScalarsAsJson) {
    EXPECT_EQ(write(true), "true");
    EXPECT_EQ(write(0), "0");
    EXPECT_EQ(write(std::numeric_limits<int64_t>::min()), "-9223372036854775808");
    EXPECT_EQ(write(std::numeric_limits<uint64_t>::max()), "18446744073709551615");
    EXPECT_EQ(write(0.5), "0.5");
    EXPECT_EQ(write(1e300), "1e+300");
    EXPECT_EQ(write(std::nan("")), "null");  // JSON has no NaN
    EXPECT_EQ(write(std::numeric_limits<double>::infinity()), "null");
    EXPECT_EQ(write(nullptr), "null");
    EXPECT_EQ(write(std::optional<int>()), "null");
    EXPECT_EQ(write(std::optional<int>(3)), "3");
    EXPECT_EQ(write("plain"), R"("plain")");
    EXPECT_EQ(write(std::vector<int>{}), "[]");
    EXPECT_EQ(write(std::array<int, 3>{1, 2, 3}), "[1,2,3]");
}

TEST(JsonWriter, EscapesWhatJsonRequiresAndReplacesInvalidUtf8) {
    EXPECT_EQ(write(std::string_view("a\"b\\c\n\r\t\b\f")), R"("a\"b\\c\n\r\t\b\f")");
    EXPECT_EQ(write(std::string_view("\x01\x1f", 2)), R"("\u0001\u001f")");
    EXPECT_EQ(write(std::string_view("nul\0in", 6)), R"("nul\u0000in")");
    EXPECT_EQ(write("héllo フレーム 😀"), "\"héllo フレーム 😀\"");  // valid UTF-8 goes through
    EXPECT_EQ(write(std::string_view("\xff")), "\"\xEF\xBF\xBD\"");
    // One U+FFFD per ill-formed run (Unicode's maximal subparts):
    EXPECT_EQ(write(std::string_view("a\xC0\xAFz")), "\"a\xEF\xBF\xBD\xEF\xBF\xBDz\"");  // overlong '/': 2
    EXPECT_EQ(write(std::string_view("\xED\xA0\x80")), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // surrogate: 3
    EXPECT_EQ(write(std::string_view("cut \xE3\x83")), "\"cut \xEF\xBF\xBD\"");  // a truncated character: 1
    EXPECT_EQ(write(std::string_view("\xE3\x83z")), "\"\xEF\xBF\xBDz\"");
    EXPECT_EQ(write("</script>"), "\"</script>\"");
}

TEST(JsonWriter, ObjectsArraysAndAppTypesNest) {
    std::vector<shop::Item> items{{1, "tea", 2.5, {"hot", "leaf"}}, {2, "q\"uote", std::nullopt, {}}};
    std::string out = write(items);
    EXPECT_EQ(out, R"([{"id":1,"name":"tea","price":2.5,"tags":["hot","leaf"]},)"
                   R"({"id":2,"name":"q\"uote","price":null,"tags":[]}])");
    std::string o;
    kiln::JsonWriter w(o);
    w.begin_object().key("a").begin_array().value(1).begin_object().end_object().value("x").end_array();
    w.field("b", std::vector<std::vector<int>>{{1}, {}, {2, 3}}).key("c").raw(R"({"pre":"made"})").end_object();
    EXPECT_EQ(o, R"({"a":[1,{},"x"],"b":[[1],[],[2,3]],"c":{"pre":"made"}})");
    EXPECT_TRUE(nlohmann::json::accept(o));
}

TEST(JsonWriter, RandomStringsReadBackThroughNlohmann) {
    std::mt19937 rng(12345);
    for (int round = 0; round < 20000; ++round) {
        std::string s(rng() % 24, '\0');
        for (char& c : s) c = static_cast<char>(rng() % 3 == 0 ? rng() % 256 : 0x20 + rng() % 0x60);
        std::string out = write(s);
        nlohmann::json parsed;
        ASSERT_NO_THROW(parsed = nlohmann::json::parse(out)) << out;
        // What nlohmann itself writes (invalid bytes replaced) is what comes back.
        std::string expected = nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        ASSERT_EQ(parsed.get<std::string>(), nlohmann::json::parse(expected).get<std::string>()) << out;
    }
}

TEST(JsonWriter, ResJsonTakesTheWriterForItsTypesAndNlohmannForTheRest) {
    kiln::App app;
    app.get("/items", [](kiln::Request&, kiln::Response& res) {
        res.json(std::vector<shop::Item>{{7, "pie", 3.0, {"sweet"}}});
    });
    app.get("/legacy", [](kiln::Request&, kiln::Response& res) { res.json(shop::Legacy{4}); });
    app.get("/doc", [](kiln::Request&, kiln::Response& res) { res.json(nlohmann::json{{"k", {1, 2}}}); });
    kiln::testing::Client client(app);
    auto items = client.get("/items");
    EXPECT_EQ(items.status, 200);
    EXPECT_EQ(items.header("content-type"), "application/json");
    EXPECT_EQ(items.body, R"([{"id":7,"name":"pie","price":3,"tags":["sweet"]}])");
    EXPECT_EQ(client.get("/legacy").body, R"({"legacy":4})");
    EXPECT_EQ(client.get("/doc").body, R"({"k":[1,2]})");
}
