#include <kiln/pg.hpp>

#include "pg/pool.hpp"

namespace kiln::pg {

Client::Client(Options options) : pool_(std::make_unique<detail::Pool>(std::move(options))) {}

Client::~Client() = default;

Query Client::send(db::Sql sql, Params params) { return pool_->send(sql, std::move(params)); }

size_t Client::connected() const { return pool_->connected(); }

namespace detail {
void no_rows(db::Sql sql) {
    throw db::Error(db::ErrorKind::NoRows, 0, "scalar() on a query that returned no row", std::string(sql.text()));
}
}  // namespace detail

}  // namespace kiln::pg
