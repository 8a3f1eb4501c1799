// What the shared PostgreSQL connection's refusal check (src/pg/refused.cpp) costs
// per statement, for statements an app sends all the time. Standalone, like the
// check itself; run from the repository root:
//
//   g++ -std=c++20 -O2 -Isrc -Iinclude bench/micro/pg_refusal.cpp src/pg/refused.cpp -o /tmp/pg_refusal
//   /tmp/pg_refusal
//
// Bounded: 1,000,000 calls per statement.
#include <chrono>
#include <cstdio>

#include "pg/refused.hpp"

int main() {
    const char* statements[] = {
        "SELECT id, randomnumber FROM world WHERE id = $1",
        "UPDATE world SET randomnumber = $1 WHERE id = $2",
        "SELECT \"id\", \"title\", \"body\", \"created_at\", \"updated_at\", \"author_id\", \"author_name\" FROM "
        "\"posts\" WHERE \"id\" = $1",
    };
    for (const char* sql : statements) {
        size_t refused = 0;
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < 1'000'000; ++i) refused += kiln::pg::detail::refusal(sql).size();
        double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / 1e6;
        std::printf("%6.0f ns  %s%s\n", ns, sql, refused ? "  (refused)" : "");
    }
}
