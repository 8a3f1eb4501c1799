// Params, Field, Row and Result: kiln's typed view of libpq's text-format values.
#include <libpq-fe.h>

#include <cmath>
#include <cstdlib>

#include <kiln/pg.hpp>

namespace kiln::pg {
namespace {

[[noreturn]] void misuse(std::string message) {
    throw db::Error(db::ErrorKind::Misuse, 0, std::move(message), {});
}

std::string quoted(std::string_view s) {
    constexpr size_t kShown = 40;  // a value in an error message, cut short
    std::string out = "'";
    out += s.substr(0, kShown);
    if (s.size() > kShown) out += "...";
    return out + "'";
}

}  // namespace

// ------------------------------------------------------------------ Params

void Params::text(std::string_view v) {
    // PostgreSQL's text cannot hold NUL; libpq would cut the value there, silently.
    if (v.find('\0') != std::string_view::npos)
        throw db::Error(db::ErrorKind::Type, 0,
                        "parameter $" + std::to_string(slots_.size() + 1) + " holds a NUL byte, which PostgreSQL text cannot store",
                        {});
    slots_.push_back({static_cast<uint32_t>(data_.size()), false});
    data_.append(v);
    data_.push_back('\0');
}

void Params::null() { slots_.push_back({0, true}); }

// ------------------------------------------------------------------ Field

bool Field::is_null() const { return PQgetisnull(r_, row_, column_) != 0; }

std::string_view Field::text() const {
    return std::string_view(PQgetvalue(r_, row_, column_), static_cast<size_t>(PQgetlength(r_, row_, column_)));
}

std::string_view Field::name() const {
    const char* n = PQfname(r_, column_);
    return n ? n : "";
}

uint32_t Field::type_oid() const { return PQftype(r_, column_); }

void Field::mismatch(std::string_view wanted) const {
    std::string what = "column " + std::to_string(column_) + " (" + std::string(name()) + ") holds ";
    what += is_null() ? std::string("NULL") : quoted(text());
    what += ", not " + std::string(wanted);
    throw db::Error(db::ErrorKind::Type, 0, std::move(what), {});
}

namespace detail {

void null_read(const Field& f, std::string_view wanted) { f.mismatch(wanted); }

double parse_double(const Field& f) {
    if (f.is_null()) f.mismatch("a number");
    std::string_view s = f.text();
    if (s == "NaN") return std::nan("");
    if (s == "Infinity") return HUGE_VAL;
    if (s == "-Infinity") return -HUGE_VAL;
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) f.mismatch("a number");
    return v;
}

void write_double(Params& p, double v) {
    if (std::isnan(v)) return p.text("NaN");
    if (std::isinf(v)) return p.text(v > 0 ? "Infinity" : "-Infinity");
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back exactly
    p.text(std::string_view(buf, static_cast<size_t>(end - buf)));
}

void array_element(std::string& out, std::string_view v) {
    out += '"';
    for (char c : v) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    out += '"';
}

Result adopt_result(pg_result* r) { return Result(r); }

}  // namespace detail

// ------------------------------------------------------------------ Row

int Row::size() const { return PQnfields(r_); }

Field Row::field(int index) const {
    if (index < 0 || index >= PQnfields(r_))
        misuse("column " + std::to_string(index) + " is out of range (the row has " + std::to_string(PQnfields(r_)) + ")");
    return Field(r_, row_, index);
}

Field Row::field(std::string_view name) const {
    for (int i = 0, n = PQnfields(r_); i < n; ++i)
        if (name == PQfname(r_, i)) return Field(r_, row_, i);
    misuse("no column named '" + std::string(name) + "' in the result");
}

// ------------------------------------------------------------------ Result

Result& Result::operator=(Result&& other) noexcept {
    if (this != &other) {
        if (r_) PQclear(r_);
        r_ = std::exchange(other.r_, nullptr);
    }
    return *this;
}

Result::~Result() {
    if (r_) PQclear(r_);
}

size_t Result::size() const { return r_ ? static_cast<size_t>(PQntuples(r_)) : 0; }

int Result::columns() const { return r_ ? PQnfields(r_) : 0; }

Row Result::at(size_t i) const {
    if (i >= size()) misuse("row " + std::to_string(i) + " is out of range (the result has " + std::to_string(size()) + ")");
    return Row(r_, static_cast<int>(i));
}

std::string_view Result::command() const {
    std::string_view tag = r_ ? PQcmdStatus(r_) : "";
    return tag.substr(0, tag.find(' '));
}

int64_t Result::affected() const {
    const char* n = r_ ? PQcmdTuples(r_) : "";
    return *n ? std::strtoll(n, nullptr, 10) : 0;
}

}  // namespace kiln::pg
