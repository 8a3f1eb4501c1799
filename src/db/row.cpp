// Param, Column, Row and Result: the thin typed layer over one sqlite3_stmt.
#include <string>

#include <kiln/db.hpp>

#include "db/error.hpp"
#include "db/statement.hpp"

namespace kiln::db {
namespace {

const char* type_name(Type t) {
    switch (t) {
        case Type::Integer: return "INTEGER";
        case Type::Real: return "REAL";
        case Type::Text: return "TEXT";
        case Type::Blob: return "BLOB";
        case Type::Null: return "NULL";
    }
    return "?";
}

void check_bind(detail::Stmt* s, int rc) {
    if (rc != SQLITE_OK) detail::throw_sqlite(sqlite3_db_handle(s->handle), s->sql);
}

}  // namespace

// ------------------------------------------------------------------ Param

void Param::null() { check_bind(s_, sqlite3_bind_null(s_->handle, index_)); }
void Param::integer(int64_t v) { check_bind(s_, sqlite3_bind_int64(s_->handle, index_, v)); }
void Param::real(double v) { check_bind(s_, sqlite3_bind_double(s_->handle, index_, v)); }

void Param::text(std::string_view v) {
    // A null data pointer would bind NULL; an empty string must stay ''. TRANSIENT
    // copies: the caller's value may die before the last row is stepped.
    const char* p = v.data() ? v.data() : "";
    check_bind(s_, sqlite3_bind_text64(s_->handle, index_, p, v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
}

void Param::blob(std::span<const std::byte> v) {
    if (v.empty()) {  // same reason: bind_blob(nullptr, 0) would store NULL
        check_bind(s_, sqlite3_bind_zeroblob(s_->handle, index_, 0));
        return;
    }
    check_bind(s_, sqlite3_bind_blob64(s_->handle, index_, v.data(), v.size(), SQLITE_TRANSIENT));
}

void Param::fail(std::string_view why) const {
    detail::throw_kiln(ErrorKind::Type, "parameter " + std::to_string(index_) + ": " + std::string(why), s_->sql);
}

// ------------------------------------------------------------------ Column

Type Column::type() const {
    switch (sqlite3_column_type(s_->handle, index_)) {
        case SQLITE_INTEGER: return Type::Integer;
        case SQLITE_FLOAT: return Type::Real;
        case SQLITE_TEXT: return Type::Text;
        case SQLITE_BLOB: return Type::Blob;
        default: return Type::Null;
    }
}

int64_t Column::integer() const { return sqlite3_column_int64(s_->handle, index_); }
double Column::real() const { return sqlite3_column_double(s_->handle, index_); }

std::string_view Column::text() const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_->handle, index_));
    size_t n = static_cast<size_t>(sqlite3_column_bytes(s_->handle, index_));
    return p ? std::string_view(p, n) : std::string_view();
}

std::span<const std::byte> Column::blob() const {
    const auto* p = static_cast<const std::byte*>(sqlite3_column_blob(s_->handle, index_));
    size_t n = static_cast<size_t>(sqlite3_column_bytes(s_->handle, index_));
    return p ? std::span<const std::byte>(p, n) : std::span<const std::byte>();
}

std::string_view Column::name() const {
    const char* n = sqlite3_column_name(s_->handle, index_);
    return n ? n : "";
}

void Column::mismatch(std::string_view wanted) const {
    Type t = type();
    std::string msg = "column " + std::to_string(index_) + " '" + std::string(name()) + "' ";
    if (t == Type::Null) {
        msg += "is NULL, read as " + std::string(wanted) + " (read it as std::optional<T> to accept NULL)";
    } else {
        msg += "holds " + std::string(type_name(t)) + ", read as " + std::string(wanted);
    }
    detail::throw_kiln(ErrorKind::Type, std::move(msg), s_->sql);
}

// ------------------------------------------------------------------ Row

int Row::size() const { return s_ ? sqlite3_column_count(s_->handle) : 0; }

Column Row::column(int index) const {
    if (!s_) detail::throw_kiln(ErrorKind::Misuse, "no current row");
    int n = sqlite3_column_count(s_->handle);
    if (index < 0 || index >= n) {
        detail::throw_kiln(ErrorKind::Misuse,
                           "column " + std::to_string(index) + " out of range (the row has " + std::to_string(n) + ")",
                           s_->sql);
    }
    return Column(s_, index);
}

Column Row::column(std::string_view name) const {
    if (!s_) detail::throw_kiln(ErrorKind::Misuse, "no current row");
    int n = sqlite3_column_count(s_->handle);
    for (int i = 0; i < n; ++i) {
        const char* c = sqlite3_column_name(s_->handle, i);
        if (c && name == c) return Column(s_, i);
    }
    detail::throw_kiln(ErrorKind::Misuse, "no column named '" + std::string(name) + "' in the result", s_->sql);
}

// ------------------------------------------------------------------ Result

Result::Result(detail::Stmt* s) : s_(s) { row_.s_ = s; }

Result::Result(Result&& other) noexcept : s_(other.s_), row_(other.row_), has_row_(other.has_row_) {
    other.s_ = nullptr;
    other.row_.s_ = nullptr;
    other.has_row_ = false;
}

Result& Result::operator=(Result&& other) noexcept {
    if (this != &other) {
        release();
        s_ = other.s_;
        row_ = other.row_;
        has_row_ = other.has_row_;
        other.s_ = nullptr;
        other.row_.s_ = nullptr;
        other.has_row_ = false;
    }
    return *this;
}

Result::~Result() { release(); }

void Result::release() noexcept {
    if (s_) detail::StatementCache::release(s_);
    s_ = nullptr;
    row_.s_ = nullptr;
    has_row_ = false;
}

bool Result::next() {
    if (!s_) return false;
    int rc = sqlite3_step(s_->handle);
    if (rc == SQLITE_ROW) return has_row_ = true;
    if (rc == SQLITE_DONE) {
        release();  // done: the statement can serve the next exec() at once
        return false;
    }
    sqlite3* db = sqlite3_db_handle(s_->handle);
    int code = sqlite3_extended_errcode(db);
    std::string msg = sqlite3_errmsg(db);
    std::string sql = s_->sql;
    release();
    detail::throw_error(code, std::move(msg), sql);
}

}  // namespace kiln::db
