// http::DateCache and the IMF-fixdate formatter (RFC 9110 §5.6.7).
#include "http/http_date.hpp"

#include <gtest/gtest.h>

namespace kiln::http {
namespace {

TEST(Date, FormatsTheRfcExample) {
    char buf[32];
    // Sun, 06 Nov 1994 08:49:37 GMT is the example of RFC 9110.
    ASSERT_EQ(format_imf_fixdate(784111777, buf), 29u);
    EXPECT_EQ(std::string_view(buf, 29), "Sun, 06 Nov 1994 08:49:37 GMT");
}

TEST(Date, FormatsEpochAndLeapDay) {
    char buf[32];
    format_imf_fixdate(0, buf);
    EXPECT_EQ(std::string_view(buf, 29), "Thu, 01 Jan 1970 00:00:00 GMT");
    format_imf_fixdate(1709208000, buf);  // 2024-02-29 12:00:00 UTC
    EXPECT_EQ(std::string_view(buf, 29), "Thu, 29 Feb 2024 12:00:00 GMT");
}

TEST(DateCache, SameSecondSameBytesNewSecondNewValue) {
    DateCache c;
    std::string_view a = c.get(784111777);
    std::string_view b = c.get(784111777);
    EXPECT_EQ(a.data(), b.data());
    EXPECT_EQ(a, "Sun, 06 Nov 1994 08:49:37 GMT");
    EXPECT_EQ(std::string(c.get(784111778)), "Sun, 06 Nov 1994 08:49:38 GMT");
}

}  // namespace
}  // namespace kiln::http
