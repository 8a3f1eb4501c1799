// Fuzzes kiln's reading of PostgreSQL's text-format values (src/pg/values.cpp): the
// input, split at '|', becomes the columns of one row of a result built with libpq's
// own PQmakeEmptyPGresult/PQsetvalue (an empty piece is NULL), and every column is
// read as every built-in type. A read either gives a value or throws db::Error, never
// anything else; an integer read gives the number its text spells (it prints back to
// the same digits, leading zeros aside); a bool is only ever "t" or "f"; a string is
// the text byte for byte; NULL reads as nullopt and throws for non-optional types.
// Also: a std::vector<std::string> parameter, written as a PostgreSQL array literal,
// parses back (by this target's own reading of the array syntax) to the same strings.
#include <libpq-fe.h>

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/pg.hpp>

#include "fuzz_check.hpp"

namespace pg = kiln::pg;

namespace {

template <class T>
std::optional<T> read(const pg::Row& row, int i) {
    try {
        return row.get<T>(i);
    } catch (const kiln::db::Error&) {
        return std::nullopt;
    }
}

template <class T>
void check_integer(const pg::Row& row, int i, std::string_view text, bool null) {
    std::optional<T> v = read<T>(row, i);
    if (null) {
        FUZZ_CHECK(!v);
        return;
    }
    if (!v) return;
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *v);
    std::string_view printed(buf, static_cast<size_t>(end - buf));
    // The text is a sign and digits whose value is printed (without leading zeros).
    std::string_view digits = text;
    bool negative = !digits.empty() && digits[0] == '-';
    if (negative) digits.remove_prefix(1);
    FUZZ_CHECK(!digits.empty());
    for (char c : digits) FUZZ_CHECK(c >= '0' && c <= '9');
    while (digits.size() > 1 && digits[0] == '0') digits.remove_prefix(1);
    std::string_view want_digits = printed;
    if (!want_digits.empty() && want_digits[0] == '-') want_digits.remove_prefix(1);
    FUZZ_CHECK(want_digits == digits);
    FUZZ_CHECK(negative == (*v < 0) || (*v == 0));
}

// The elements of a one-dimensional array literal of quoted strings ({"a","b\"c"}).
std::vector<std::string> parse_array(std::string_view s) {
    std::vector<std::string> out;
    FUZZ_CHECK(s.size() >= 2 && s.front() == '{' && s.back() == '}');
    size_t i = 1;
    while (i < s.size() - 1) {
        FUZZ_CHECK(s[i] == '"');
        std::string e;
        for (++i; s[i] != '"'; ++i) {
            if (s[i] == '\\') ++i;
            e += s[i];
        }
        out.push_back(std::move(e));
        ++i;
        if (s[i] == ',') ++i;
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    std::vector<std::string_view> cols;
    for (size_t start = 0;;) {
        size_t bar = in.find('|', start);
        cols.push_back(in.substr(start, bar == in.npos ? in.npos : bar - start));
        if (bar == in.npos) break;
        start = bar + 1;
        if (cols.size() == 16) break;
    }

    PGresult* r = PQmakeEmptyPGresult(nullptr, PGRES_TUPLES_OK);
    FUZZ_CHECK(r);
    std::vector<PGresAttDesc> attrs(cols.size());
    std::vector<std::string> names(cols.size());
    for (size_t i = 0; i < cols.size(); ++i) {
        names[i] = "c" + std::to_string(i);
        attrs[i] = PGresAttDesc{names[i].data(), 0, 0, 0, 25 /* text */, -1, -1};
    }
    FUZZ_CHECK(PQsetResultAttrs(r, static_cast<int>(attrs.size()), attrs.data()));
    for (size_t i = 0; i < cols.size(); ++i) {
        bool null = cols[i].empty();
        FUZZ_CHECK(PQsetvalue(r, 0, static_cast<int>(i), null ? nullptr : const_cast<char*>(cols[i].data()),
                              null ? -1 : static_cast<int>(cols[i].size())));
    }
    pg::Result result = pg::detail::adopt_result(r);
    FUZZ_CHECK(result.size() == 1);
    const pg::Row row = result[0];
    for (int i = 0; i < static_cast<int>(cols.size()); ++i) {
        std::string_view text = cols[static_cast<size_t>(i)];
        bool null = text.empty();
        check_integer<int16_t>(row, i, text, null);
        check_integer<int32_t>(row, i, text, null);
        check_integer<int64_t>(row, i, text, null);
        check_integer<uint64_t>(row, i, text, null);
        std::optional<bool> b = read<bool>(row, i);
        FUZZ_CHECK(!b || text == "t" || text == "f");
        (void)read<double>(row, i);
        (void)read<float>(row, i);
        std::optional<std::string> s = read<std::string>(row, i);
        FUZZ_CHECK(null ? !s : s && *s == text);
        std::optional<std::optional<std::string>> o = read<std::optional<std::string>>(row, i);
        FUZZ_CHECK(o && (null ? !*o : **o == text));
        FUZZ_CHECK(row.field(i).name() == "c" + std::to_string(i));
    }

    // Array parameters: what Codec<std::vector<std::string>> writes reads back.
    std::vector<std::string> elements;
    for (std::string_view c : cols)
        if (c.find('\0') == c.npos) elements.emplace_back(c);
    pg::Params p;
    pg::Codec<std::vector<std::string>>::write(p, elements);
    FUZZ_CHECK(p.size() == 1);
    std::string literal = "{";
    for (const std::string& e : elements) {
        if (literal.size() > 1) literal += ',';
        pg::detail::array_element(literal, e);
    }
    literal += '}';
    FUZZ_CHECK(parse_array(literal) == elements);
    return 0;
}
