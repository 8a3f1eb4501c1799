// expect: error scalar<T>: a string_view or span would point into a result freed when scalar returns
// PostgreSQL's scalar too: its Result is freed when the coroutine returns the value.
#include <string_view>

#include <kiln/pg.hpp>

kiln::Task<std::string_view> name(kiln::pg::Client& db) { co_return co_await db.scalar<std::string_view>("SELECT name FROM t LIMIT 1"); }
