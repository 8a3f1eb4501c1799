// kiln::FormReader, as an app uses it: a form posted through the in-process client,
// read into a struct; the answer shows what was stored and every message.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

#include <kiln/kiln.hpp>
#include <kiln/testing.hpp>

namespace {

struct Product {
    std::string name = "unchanged";
    std::string notes = "unchanged";
    int32_t stock = -1;
    uint16_t shelf = 9;
    double price = -1;
    bool featured = true;
    std::string size = "unchanged";
    std::chrono::sys_seconds available{};
};

kiln::App& product_app() {
    static kiln::App app;
    static const bool routed = [] {
        app.post("/products", [](kiln::Request& req, kiln::Response& res) {
            Product p;
            kiln::FormReader in(req);
            in.text("name", p.name, {.max_chars = 5})
                .text("notes", p.notes, {.required = false, .trim = false, .min_chars = 2})
                .number("stock", p.stock, {.min = 0, .max = 1000})
                .number("shelf", p.shelf, {.required = false})
                .number("price", p.price, {.label = "Unit price", .min = 0.5})
                .checkbox("featured", p.featured)
                .choice("size", p.size, {"S", "M", "L"})
                .datetime("available", p.available, {.required = false});
            in.check(p.name != "admin", "name", "Name is taken");
            nlohmann::json errors = nlohmann::json::array();
            for (const kiln::FieldError& e : in.errors()) errors.push_back({e.field, e.message});
            res.status(in.ok() ? 200 : 422)
                .json(nlohmann::json{{"name", p.name}, {"notes", p.notes}, {"stock", p.stock}, {"shelf", p.shelf},
                                     {"price", p.price}, {"featured", p.featured}, {"size", p.size},
                                     {"available", kiln::datetime_local(p.available)},
                                     {"name_error", in.errors().on("name")}, {"errors", errors}});
        });
        return true;
    }();
    (void)routed;
    return app;
}

nlohmann::json post(const std::string& body, int expect_status) {
    kiln::testing::Client client(product_app());
    auto r = client.post("/products", body, {{"Content-Type", "application/x-www-form-urlencoded"}});
    EXPECT_EQ(r.status, expect_status) << r.body;
    return nlohmann::json::parse(r.body);
}

using Errors = std::vector<std::vector<std::string>>;

TEST(FormReader, StoresEveryFieldThatParses) {
    auto j = post("name=+Tea+&notes=+hi+&stock=12&shelf=3&price=2.5&featured=on&size=M&available=2024-03-09T14:05", 200);
    EXPECT_EQ(j["name"], "Tea");      // trimmed
    EXPECT_EQ(j["notes"], " hi ");    // trim = false keeps the spaces
    EXPECT_EQ(j["stock"], 12);
    EXPECT_EQ(j["shelf"], 3);
    EXPECT_EQ(j["price"], 2.5);
    EXPECT_EQ(j["featured"], true);
    EXPECT_EQ(j["size"], "M");
    EXPECT_EQ(j["available"], "2024-03-09T14:05:00");
    EXPECT_TRUE(j["errors"].empty());
}

TEST(FormReader, BlankRequiredFieldsAreNamedWithTheirLabels) {
    auto j = post("name=+++&stock=&price=&size=", 422);
    EXPECT_EQ(j["errors"].get<Errors>(), (Errors{{"name", "Name can't be blank"},
                                                {"stock", "Stock can't be blank"},
                                                {"price", "Unit price can't be blank"},
                                                {"size", "Size can't be blank"}}));
    EXPECT_EQ(j["name_error"], "Name can't be blank");
    EXPECT_EQ(j["name"], "");         // what was typed (blank) is kept for the form
    EXPECT_EQ(j["notes"], "");        // optional, absent: empty, no message
    EXPECT_EQ(j["shelf"], 9);         // optional number, absent: left alone
    EXPECT_EQ(j["featured"], false);  // an unticked checkbox is absent
}

TEST(FormReader, MalformedValuesKeepTheMemberAndSayWhy) {
    auto j = post("name=Teapot&notes=x&stock=12abc&shelf=70000&price=inf&size=XL&available=2024-02-30T10:00", 422);
    EXPECT_EQ(j["errors"].get<Errors>(), (Errors{{"name", "Name is too long (at most 5 characters)"},
                                                {"notes", "Notes is too short (at least 2 characters)"},
                                                {"stock", "Stock must be a whole number"},
                                                {"shelf", "Shelf is out of range"},
                                                {"price", "Unit price must be a number"},
                                                {"size", "Size is not one of the choices"},
                                                {"available", "Available must be a date and time"}}));
    EXPECT_EQ(j["name"], "Teapot");  // too long, but kept so the user can fix it
    EXPECT_EQ(j["stock"], -1);
    EXPECT_EQ(j["shelf"], 9);
    EXPECT_EQ(j["price"], -1);
    EXPECT_EQ(j["size"], "unchanged");
}

TEST(FormReader, BoundsAndTheAppsOwnRules) {
    auto j = post("name=admin&stock=1001&price=0.25&size=S", 422);
    EXPECT_EQ(j["errors"].get<Errors>(), (Errors{{"stock", "Stock must be at most 1000"},
                                                {"price", "Unit price must be at least 0.5"},
                                                {"name", "Name is taken"}}));
    j = post("name=ok&stock=-1&price=1&size=S", 422);
    EXPECT_EQ(j["errors"][0][1], "Stock must be at least 0");
    EXPECT_EQ(j["stock"], -1);  // out of bounds: not stored
}

TEST(FormReader, LengthsCountCharactersAndBadTextIsRefused) {
    // five characters, fifteen bytes: fits max_chars = 5
    auto j = post("name=%E6%97%A5%E6%9C%AC%E8%AA%9E%E3%81%A7%E3%81%99&stock=1&price=1&size=S", 200);
    EXPECT_EQ(j["name"], "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xA7\xE3\x81\x99");
    for (std::string bad : {"%C0%AF", "%ED%A0%80", "%FF", "a%00b", "a%1Bb", "%E6%97"}) {
        kiln::testing::Client client(product_app());
        auto r = client.post("/products", "name=" + bad + "&stock=1&price=1&size=S",
                             {{"Content-Type", "application/x-www-form-urlencoded"}});
        EXPECT_EQ(r.status, 422) << bad;
        auto k = nlohmann::json::parse(r.body);
        EXPECT_EQ(k["name_error"], "Name contains characters that are not allowed") << bad;
        EXPECT_EQ(k["name"], "unchanged") << bad;  // such bytes never go back into a page
    }
    j = post("name=ok&notes=line+1%0D%0Aline+2%09end&stock=1&price=1&size=S", 200);  // CR, LF, tab are text
    EXPECT_EQ(j["notes"], "line 1\r\nline 2\tend");
}

TEST(FormReaderHelpers, LabelsTrimAndDates) {
    EXPECT_EQ(kiln::label_of("published_at"), "Published at");
    EXPECT_EQ(kiln::trim(" \t x y \r\n"), "x y");
    EXPECT_EQ(kiln::utf8_length("\xF0\x9F\x98\x80!"), 2u);
    EXPECT_FALSE(kiln::utf8_length("\xF4\x90\x80\x80"));  // past U+10FFFF
    EXPECT_FALSE(kiln::utf8_length("\xE0\x80\xAF"));      // overlong
    auto t = kiln::parse_datetime_local("2024-02-29 23:59:59");
    ASSERT_TRUE(t);
    EXPECT_EQ(kiln::datetime_local(*t), "2024-02-29T23:59:59");
    EXPECT_FALSE(kiln::parse_datetime_local("2023-02-29T10:00"));
    EXPECT_FALSE(kiln::parse_datetime_local("2024-03-09T24:00"));
    EXPECT_FALSE(kiln::parse_datetime_local("2024-03-09T1:00"));
}

}  // namespace

// A number a double holds but a float does not (1e39) is out of range, not inf.
TEST(FormReader, AFloatPastItsRangeIsOutOfRange) {
    kiln::App app;
    app.post("/ratio", [](kiln::Request& req, kiln::Response& res) {
        float ratio = -1;
        kiln::FormReader in(req);
        in.number("ratio", ratio);
        res.status(in.ok() ? 200 : 422).text(in.ok() ? std::to_string(ratio) : in.errors().on("ratio"));
    });
    kiln::testing::Client client(app);
    const kiln::testing::Headers form{{"Content-Type", "application/x-www-form-urlencoded"}};
    auto r = client.post("/ratio", "ratio=1e39", form);
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(r.body, "Ratio is out of range");
    r = client.post("/ratio", "ratio=-1e39", form);
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(client.post("/ratio", "ratio=0.5", form).status, 200);
}
