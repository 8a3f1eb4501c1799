// Unit tests of the application/x-www-form-urlencoded decoder (src/http/form.cpp):
// what a browser's form submission decodes to, then the limits and malformed escapes
// with the status each maps to.
#include "http/form.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace kiln::http {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs decode(std::string_view body, FormError expect = FormError::None, const FormLimits& limits = {}) {
    std::vector<FormField> fields;
    EXPECT_EQ(parse_form(body, fields, limits), expect) << body;
    Pairs out;
    for (FormField& f : fields) out.emplace_back(std::move(f.name), std::move(f.value));
    return out;
}

// ---------------------------------------------------------------- valid bodies

TEST(FormValid, DecodesPlusAndPercentEscapes) {
    EXPECT_EQ(decode("a=1&b=x+y&c=%41"), (Pairs{{"a", "1"}, {"b", "x y"}, {"c", "A"}}));
    EXPECT_EQ(decode("na%6De=%E2%82%AC+%2B1%26%3D"), (Pairs{{"name", "\xE2\x82\xAC +1&="}}));
    EXPECT_EQ(decode("q=a%2bb"), (Pairs{{"q", "a+b"}}));  // escaped plus is a plus
}

TEST(FormValid, OrderAndDuplicatesKept) {
    EXPECT_EQ(decode("tag=a&x=1&tag=b"), (Pairs{{"tag", "a"}, {"x", "1"}, {"tag", "b"}}));
}

TEST(FormValid, EmptyPiecesAndMissingValues) {
    EXPECT_EQ(decode(""), Pairs{});
    EXPECT_EQ(decode("&&a=1&&"), (Pairs{{"a", "1"}}));
    EXPECT_EQ(decode("flag&b="), (Pairs{{"flag", ""}, {"b", ""}}));
    EXPECT_EQ(decode("=v"), (Pairs{{"", "v"}}));
    EXPECT_EQ(decode("a=b=c"), (Pairs{{"a", "b=c"}}));  // only the first '=' splits
}

TEST(FormValid, CallbackFormDoesNotCopyPlainText) {
    std::string body = "plain=text&enc=a+b";
    std::vector<std::pair<std::string_view, std::string_view>> seen;
    std::vector<std::string> copies;
    FormError e = for_each_form_field(body, [&](std::string_view n, std::string_view v) {
        seen.emplace_back(n, v);
        copies.emplace_back(v);
    });
    EXPECT_EQ(e, FormError::None);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].second.data(), body.data() + 6);  // a view into the body itself
    EXPECT_EQ(copies[1], "a b");
}

TEST(FormValid, LimitsAreInclusive) {
    FormLimits l;
    l.max_fields = 2;
    l.max_key_bytes = 3;
    l.max_value_bytes = 4;
    EXPECT_EQ(decode("abc=1234&x=%41%42%43%44", FormError::None, l).size(), 2u);  // decoded length counts
}

// ---------------------------------------------------------------- error paths

TEST(FormErrors, MalformedEscapesAre400) {
    for (std::string_view body : {"a=%", "a=%4", "a=%4g", "a%zz=1", "ok=1&bad=%G0", "a=100%"}) {
        std::vector<FormField> out;
        FormError e = parse_form(body, out);
        EXPECT_EQ(e, FormError::BadEscape) << body;
        EXPECT_EQ(status_for(e), 400);
    }
    std::vector<FormField> out;
    EXPECT_EQ(parse_form("ok=1&bad=%G0&later=2", out), FormError::BadEscape);
    ASSERT_EQ(out.size(), 1u);  // pairs before the error were delivered, none after
    EXPECT_EQ(out[0].name, "ok");
}

TEST(FormErrors, TooManyFieldsIs413) {
    FormLimits l;
    l.max_fields = 3;
    EXPECT_EQ(decode("a&b&c", FormError::None, l).size(), 3u);
    EXPECT_EQ(decode("a&b&c&d", FormError::TooManyFields, l).size(), 3u);
    EXPECT_EQ(status_for(FormError::TooManyFields), 413);
    std::string many;
    for (size_t i = 0; i <= kMaxFormFields; ++i) many += "k=v&";
    decode(many, FormError::TooManyFields);
}

TEST(FormErrors, LongKeyOrValueIs413) {
    FormLimits l;
    l.max_key_bytes = 3;
    l.max_value_bytes = 4;
    decode("abcd=1", FormError::KeyTooLong, l);
    decode("a=12345", FormError::ValueTooLong, l);
    decode("a=%31%32%33%34%35", FormError::ValueTooLong, l);
    EXPECT_EQ(status_for(FormError::KeyTooLong), 413);
    EXPECT_EQ(status_for(FormError::ValueTooLong), 413);
    EXPECT_FALSE(describe(FormError::ValueTooLong).empty());
}

}  // namespace
}  // namespace kiln::http
