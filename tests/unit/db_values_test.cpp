// Unit tests of db binding and typed reading (include/kiln/db.hpp, src/db/row.cpp):
// every supported C++ type goes in as a bound parameter and comes back equal,
// NULL maps to std::optional, and reading a value as the wrong type (NULL
// included) is an Error(Type) that names the column and the SQL.
#include <kiln/db.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace kiln::db {
namespace {

namespace fs = std::filesystem;

class TempDb : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("kiln_db_values_" + std::to_string(getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        db_.emplace(dir_ / "test.db");
        db_->exec("CREATE TABLE v (i INTEGER, r REAL, t TEXT, b BLOB, any_value)");
    }
    void TearDown() override {
        db_.reset();
        fs::remove_all(dir_);
    }
    Database& db() { return *db_; }

    // Makes `value` the only row's any_value (no column affinity: stored as bound).
    template <class T>
    int64_t store(const T& value) {
        db().exec("DELETE FROM v");
        db().exec("INSERT INTO v (any_value) VALUES (?)", value);
        return db().last_insert_id();
    }

    fs::path dir_;
    std::optional<Database> db_;
};

enum class Color : int16_t { Red = 1, Blue = -7 };

// ---------------------------------------------------------------- round trips

TEST_F(TempDb, IntegersOfEverySizeRoundTrip) {
    store(int64_t{std::numeric_limits<int64_t>::min()});
    EXPECT_EQ(db().scalar<int64_t>("SELECT any_value FROM v"), std::numeric_limits<int64_t>::min());
    store(std::numeric_limits<int64_t>::max());
    EXPECT_EQ(db().scalar<int64_t>("SELECT any_value FROM v"), std::numeric_limits<int64_t>::max());
    store(int{-42});
    EXPECT_EQ(db().scalar<int>("SELECT any_value FROM v"), -42);
    store(uint32_t{4000000000u});
    EXPECT_EQ(db().scalar<uint32_t>("SELECT any_value FROM v"), 4000000000u);
    store(uint64_t{123});
    EXPECT_EQ(db().scalar<uint64_t>("SELECT any_value FROM v"), 123u);
    store(short{-3});
    EXPECT_EQ(db().scalar<short>("SELECT any_value FROM v"), -3);
    EXPECT_EQ(db().scalar<std::string>("SELECT typeof(any_value) FROM v"), "integer");
}

TEST_F(TempDb, BoolIsStoredAsZeroOrOne) {
    store(true);
    EXPECT_EQ(db().scalar<int64_t>("SELECT any_value FROM v"), 1);
    EXPECT_TRUE(db().scalar<bool>("SELECT any_value FROM v"));
    store(false);
    EXPECT_EQ(db().scalar<int64_t>("SELECT any_value FROM v"), 0);
    EXPECT_FALSE(db().scalar<bool>("SELECT any_value FROM v"));
}

TEST_F(TempDb, EnumsAreStoredAsTheirUnderlyingInteger) {
    store(Color::Blue);
    EXPECT_EQ(db().scalar<int64_t>("SELECT any_value FROM v"), -7);
    EXPECT_EQ(db().scalar<Color>("SELECT any_value FROM v"), Color::Blue);
}

TEST_F(TempDb, FloatingPointRoundTripsAndIntegersWidenToDouble) {
    store(3.25);
    EXPECT_EQ(db().scalar<double>("SELECT any_value FROM v"), 3.25);
    store(1.5f);
    EXPECT_EQ(db().scalar<float>("SELECT any_value FROM v"), 1.5f);
    EXPECT_EQ(db().scalar<std::string>("SELECT typeof(any_value) FROM v"), "real");
    store(7);
    EXPECT_EQ(db().scalar<double>("SELECT any_value FROM v"), 7.0);
}

TEST_F(TempDb, TextInAllItsFormsRoundTripsByteForByte) {
    std::string with_nul("a\0b", 3);
    store(with_nul);
    EXPECT_EQ(db().scalar<std::string>("SELECT any_value FROM v"), with_nul);
    EXPECT_EQ(db().scalar<int64_t>("SELECT length(CAST(any_value AS BLOB)) FROM v"), 3);

    store(std::string_view("view"));
    EXPECT_EQ(db().scalar<std::string>("SELECT any_value FROM v"), "view");
    store("literal");
    EXPECT_EQ(db().scalar<std::string>("SELECT any_value FROM v"), "literal");
    const char* pointer = "pointer";
    store(pointer);
    EXPECT_EQ(db().scalar<std::string>("SELECT any_value FROM v"), "pointer");
    store(std::string("h\xc3\xa9llo \xe2\x9c\x93"));
    EXPECT_EQ(db().scalar<std::string>("SELECT any_value FROM v"), "h\xc3\xa9llo \xe2\x9c\x93");
}

TEST_F(TempDb, EmptyTextAndEmptyBlobStayEmptyNotNull) {
    store(std::string());
    EXPECT_EQ(db().scalar<std::string>("SELECT typeof(any_value) FROM v"), "text");
    EXPECT_EQ(db().scalar<std::string>("SELECT any_value FROM v"), "");
    store(std::string_view());
    EXPECT_EQ(db().scalar<std::string>("SELECT typeof(any_value) FROM v"), "text");
    store(std::vector<std::byte>());
    EXPECT_EQ(db().scalar<std::string>("SELECT typeof(any_value) FROM v"), "blob");
    EXPECT_TRUE(db().scalar<std::vector<std::byte>>("SELECT any_value FROM v").empty());
}

TEST_F(TempDb, BlobsRoundTripIncludingZeroBytes) {
    std::vector<std::byte> bytes;
    for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<std::byte>(i));
    store(bytes);
    EXPECT_EQ(db().scalar<std::vector<std::byte>>("SELECT any_value FROM v"), bytes);
    std::span<const std::byte> span(bytes.data() + 10, 5);
    store(span);
    auto back = db().scalar<std::vector<std::byte>>("SELECT any_value FROM v");
    EXPECT_EQ(back, std::vector<std::byte>(span.begin(), span.end()));
    Result r = db().exec("SELECT any_value FROM v");
    auto view = r.row().get<std::span<const std::byte>>(0);  // valid while r is on this row
    ASSERT_EQ(view.size(), 5u);
    EXPECT_EQ(view[0], std::byte{10});
}

TEST_F(TempDb, TimePointsAreUnixSecondsIntegers) {
    using namespace std::chrono;
    sys_seconds t{seconds{1700000000}};
    store(t);
    EXPECT_EQ(db().scalar<int64_t>("SELECT any_value FROM v"), 1700000000);
    EXPECT_EQ(db().scalar<sys_seconds>("SELECT any_value FROM v"), t);
    // Sub-second precision is dropped (floor), so a stored now() compares with unixepoch().
    store(system_clock::time_point(seconds{1700000000} + milliseconds{999}));
    EXPECT_EQ(db().scalar<system_clock::time_point>("SELECT any_value FROM v"), system_clock::time_point(t));
    store(system_clock::now());
    EXPECT_LE(std::abs(db().scalar<int64_t>("SELECT unixepoch() - any_value FROM v")), 2);
}

// 9999-12-31 ("never expires") is past what nanosecond time points hold (the year
// 2262): read into one it overflowed (undefined, a wrapped time); it is refused.
// Into seconds it reads as it is.
TEST_F(TempDb, ATimePastWhatTheTypeHoldsIsRefused) {
    using namespace std::chrono;
    store(int64_t{253402300799});
    EXPECT_EQ(db().scalar<sys_seconds>("SELECT any_value FROM v").time_since_epoch().count(), 253402300799);
    try {
        db().scalar<system_clock::time_point>("SELECT any_value FROM v");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Type);
        EXPECT_NE(std::string(e.what()).find("within the time point's range"), std::string::npos) << e.what();
    }
    store(int64_t{-253402300799});
    EXPECT_THROW(db().scalar<system_clock::time_point>("SELECT any_value FROM v"), Error);
}

TEST_F(TempDb, NullFromNulloptNullptrAndEmptyOptional) {
    store(std::nullopt);
    EXPECT_EQ(db().scalar<std::string>("SELECT typeof(any_value) FROM v"), "null");
    store(nullptr);
    EXPECT_EQ(db().scalar<std::string>("SELECT typeof(any_value) FROM v"), "null");
    store(static_cast<const char*>(nullptr));
    EXPECT_EQ(db().scalar<std::string>("SELECT typeof(any_value) FROM v"), "null");
    store(std::optional<std::string>());
    EXPECT_EQ(db().scalar<std::optional<std::string>>("SELECT any_value FROM v"), std::nullopt);
    store(std::optional<std::string>("set"));
    EXPECT_EQ(db().scalar<std::optional<std::string>>("SELECT any_value FROM v"), "set");
    store(std::optional<int64_t>(5));
    EXPECT_EQ(db().scalar<std::optional<int64_t>>("SELECT any_value FROM v"), 5);
}

TEST_F(TempDb, ManyParametersBindInOrder) {
    db().exec("INSERT INTO v (i, r, t, b, any_value) VALUES (?, ?, ?, ?, ?)", 1, 2.5, "three",
              std::vector<std::byte>{std::byte{4}}, std::nullopt);
    auto row = db().query_one<int, double, std::string, std::vector<std::byte>, std::optional<int>>(
        "SELECT i, r, t, b, any_value FROM v");
    ASSERT_TRUE(row);
    auto [i, r, t, b, n] = *row;
    EXPECT_EQ(i, 1);
    EXPECT_EQ(r, 2.5);
    EXPECT_EQ(t, "three");
    EXPECT_EQ(b, std::vector<std::byte>{std::byte{4}});
    EXPECT_EQ(n, std::nullopt);
}

TEST_F(TempDb, ColumnsCanBeReadByName) {
    db().exec("INSERT INTO v (i, t) VALUES (?, ?)", 9, "nine");
    Result r = db().exec("SELECT i AS number, t AS title FROM v");
    ASSERT_TRUE(r.has_row());
    EXPECT_EQ(r.row().get<std::string>("title"), "nine");
    EXPECT_EQ(r.row().get<int64_t>("number"), 9);
    EXPECT_EQ(r.row().size(), 2);
    EXPECT_EQ(r.row().column(1).name(), "title");
}

TEST_F(TempDb, TextBoundFromATemporaryStaysValidWhileRowsAreStepped) {
    for (int i = 0; i < 50; ++i) db().exec("INSERT INTO v (i, t) VALUES (?, ?)", i, "x");
    int seen = 0;
    // The std::string dies before the loop body runs; later steps still compare with it.
    for (const Row& row : db().exec("SELECT i FROM v WHERE t = ?", std::string("x"))) {
        EXPECT_EQ(row.get<int>(0), seen);
        ++seen;
    }
    EXPECT_EQ(seen, 50);
}

// ---------------------------------------------------------------- error paths

TEST_F(TempDb, ErrorNullIntoANonOptionalTypeNamesTheColumn) {
    db().exec("INSERT INTO v (i, t) VALUES (NULL, NULL)");
    try {
        db().scalar<std::string>("SELECT t FROM v");
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Type);
        EXPECT_NE(std::string(e.what()).find("'t' is NULL"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("std::optional"), std::string::npos) << e.what();
        EXPECT_EQ(e.sql(), "SELECT t FROM v");
    }
    EXPECT_THROW(db().scalar<int64_t>("SELECT i FROM v"), Error);
    EXPECT_THROW(db().scalar<bool>("SELECT i FROM v"), Error);
    EXPECT_THROW(db().scalar<std::vector<std::byte>>("SELECT i FROM v"), Error);
}

TEST_F(TempDb, ErrorTypeMismatchSaysWhatTheColumnHolds) {
    db().exec("INSERT INTO v (t, b, r) VALUES ('text', x'00', 1.5)");
    try {
        db().scalar<int64_t>("SELECT t FROM v");
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Type);
        EXPECT_NE(std::string(e.what()).find("holds TEXT, read as INTEGER"), std::string::npos) << e.what();
    }
    EXPECT_THROW(db().scalar<std::string>("SELECT b FROM v"), Error);       // BLOB is not TEXT
    EXPECT_THROW(db().scalar<std::vector<std::byte>>("SELECT t FROM v"), Error);
    EXPECT_THROW(db().scalar<int64_t>("SELECT r FROM v"), Error);           // no silent truncation
    EXPECT_THROW(db().scalar<std::optional<int64_t>>("SELECT t FROM v"), Error);  // optional only admits NULL
}

TEST_F(TempDb, ErrorIntegerOutOfRangeForTheCppType) {
    store(int64_t{1} << 40);
    EXPECT_THROW(db().scalar<int>("SELECT any_value FROM v"), Error);
    store(-1);
    EXPECT_THROW(db().scalar<uint32_t>("SELECT any_value FROM v"), Error);
    EXPECT_THROW(store(std::numeric_limits<uint64_t>::max()), Error);  // does not fit INTEGER
}

TEST_F(TempDb, ErrorUnknownColumnNameOrIndex) {
    db().exec("INSERT INTO v (i) VALUES (1)");
    Result r = db().exec("SELECT i FROM v");
    ASSERT_TRUE(r.has_row());
    EXPECT_THROW(r.row().get<int>("nope"), Error);
    EXPECT_THROW(r.row().get<int>(1), Error);
    EXPECT_THROW(r.row().get<int>(-1), Error);
}

TEST_F(TempDb, ErrorReadingAfterTheLastRow) {
    Result r = db().exec("SELECT i FROM v");
    EXPECT_FALSE(r.has_row());
    EXPECT_THROW(r.row().get<int>(0), Error);
}

}  // namespace
}  // namespace kiln::db
