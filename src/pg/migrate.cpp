// pg::migrate: db::migrate's numbered SQL files, applied to PostgreSQL. Blocking
// libpq on purpose: it runs once at start (App::on_node_start), before any loop.
//
// Several nodes may start at once against one database: a session advisory lock
// serialises them, so each file is applied exactly once and the others see it
// recorded. Each file runs as one simple-protocol script inside its own transaction
// with its kiln_migrations row, so a failing file leaves nothing behind; the error
// names the file and the line PostgreSQL pointed at.
#include <algorithm>
#include <memory>
#include <string>

#include <kiln/pg.hpp>

#include "db/migration_files.hpp"
#include "pg/errors.hpp"
#include "pg/pool.hpp"

namespace kiln::pg {
namespace {

namespace fs = std::filesystem;

// An arbitrary constant of kiln's: the advisory lock every migrating node takes.
constexpr const char* kLock = "SELECT pg_advisory_lock(7305183911)";

struct Closer {
    void operator()(PGconn* c) const { PQfinish(c); }
};
struct Clearer {
    void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, Clearer>;

bool ok(const PGresult* r) {
    ExecStatusType st = PQresultStatus(r);
    return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
}

// The 1-based line of PostgreSQL's error position (in characters, not bytes).
int line_of(const std::string& text, const PGresult* r) {
    const char* pos = PQresultErrorField(r, PG_DIAG_STATEMENT_POSITION);
    if (!pos) return 0;
    long chars = std::atol(pos);
    int line = 1;
    for (size_t i = 0; i < text.size() && chars > 1; ++i) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        if ((c & 0xC0) != 0x80) --chars;  // a character starts here
        if (c == '\n') ++line;
    }
    return line;
}

std::string describe(const PGresult* r) {
    const char* primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    std::string out = primary ? primary : detail::one_line(PQresultErrorMessage(r));
    if (state) out += std::string(" (SQLSTATE ") + state + ")";
    return out;
}

class Session {
public:
    explicit Session(const Options& options) {
        detail::ConnectSpec spec = detail::connect_spec(options);
        std::vector<const char*> keys, values;
        for (size_t i = 0; i < spec.keys.size(); ++i) {
            keys.push_back(spec.keys[i].c_str());
            values.push_back(spec.values[i].c_str());
        }
        std::string timeout = std::to_string(std::max<uint64_t>(spec.timeout_ms / 1000, 1));
        keys.push_back("connect_timeout");
        values.push_back(timeout.c_str());
        keys.push_back(nullptr);
        values.push_back(nullptr);
        conn_.reset(PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/1));
        if (!conn_ || PQstatus(conn_.get()) != CONNECTION_OK) {
            std::string why = conn_ ? detail::one_line(PQerrorMessage(conn_.get())) : "out of memory";
            std::rethrow_exception(detail::io_error("migrations: cannot connect to PostgreSQL: " + why));
        }
    }

    // Runs sql (no parameters, or text ones); throws the db::Error it caused.
    ResultPtr run(const char* sql, std::initializer_list<const char*> params = {}) {
        std::vector<const char*> v(params);
        ResultPtr r(v.empty() ? PQexec(conn_.get(), sql)
                              : PQexecParams(conn_.get(), sql, static_cast<int>(v.size()), nullptr, v.data(), nullptr,
                                             nullptr, 0));
        if (!r) std::rethrow_exception(detail::io_error(detail::one_line(PQerrorMessage(conn_.get())), sql));
        if (!ok(r.get())) std::rethrow_exception(detail::result_error(r.get(), sql));
        return r;
    }
    PGconn* get() const { return conn_.get(); }

private:
    std::unique_ptr<PGconn, Closer> conn_;
};

std::optional<std::string> applied_as(Session& s, const db::Migration& m) {
    std::string version = std::to_string(m.version);
    ResultPtr r = s.run("SELECT name FROM kiln_migrations WHERE version = $1", {version.c_str()});
    if (PQntuples(r.get()) == 0) return std::nullopt;
    return std::string(PQgetvalue(r.get(), 0, 0));
}

}  // namespace

std::vector<db::Migration> migrate(const Options& options, const fs::path& dir) {
    std::vector<db::Migration> files = db::detail::list_files(dir);
    Session s(options);
    s.run("SET client_min_messages = warning");  // no NOTICEs for IF NOT EXISTS on stderr
    // The app's statement_timeout (database.statement_timeout_ms, the URL's options)
    // bounds a request's queries, not an index build, nor the wait for another node's
    // migration lock.
    s.run("SET statement_timeout = 0");
    s.run(kLock);
    s.run("CREATE TABLE IF NOT EXISTS kiln_migrations(version bigint PRIMARY KEY, name text NOT NULL, "
          "applied_at timestamptz NOT NULL DEFAULT now())");
    std::vector<db::Migration> applied;
    for (const db::Migration& m : files) {
        if (auto recorded = applied_as(s, m)) {
            db::detail::check_name(m, *recorded);
            continue;
        }
        std::string text = db::detail::read_file(m.file);
        s.run("BEGIN");
        ResultPtr r(PQexec(s.get(), text.c_str()));
        if (!r || !ok(r.get())) {
            std::string why = r ? describe(r.get()) : detail::one_line(PQerrorMessage(s.get()));
            int line = r ? line_of(text, r.get()) : 0;
            PQclear(PQexec(s.get(), "ROLLBACK"));
            db::detail::fail(m.file, (line ? "line " + std::to_string(line) + ": " : std::string()) + why);
        }
        if (PQtransactionStatus(s.get()) != PQTRANS_INTRANS) {  // the script ended kiln's transaction
            db::detail::fail(m.file, "BEGIN, COMMIT and ROLLBACK are not allowed in a migration (each file already "
                                     "runs in its own transaction)");
        }
        std::string version = std::to_string(m.version);
        s.run("INSERT INTO kiln_migrations(version, name) VALUES ($1, $2)", {version.c_str(), m.name.c_str()});
        s.run("COMMIT");
        applied.push_back(m);
    }
    return applied;
}

}  // namespace kiln::pg
