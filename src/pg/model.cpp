// The non-template half of <kiln/pg_model.hpp>: a model's SQLite-style SQL (db's
// ModelSql, with ? marks) in PostgreSQL's numbered form.
#include <kiln/pg_model.hpp>

namespace kiln::pg::detail {

std::string numbered(std::string_view sql) {
    std::string out;
    out.reserve(sql.size() + 8);
    int n = 0;
    for (size_t i = 0; i < sql.size(); ++i) {
        char c = sql[i];
        if (c == '\'' || c == '"') {  // a string or a quoted name: copied as it is
            size_t end = i + 1;
            while (end < sql.size() && sql[end] != c) ++end;
            out.append(sql.substr(i, end - i + 1));
            i = end;
            continue;
        }
        if (c == '$' && i + 1 < sql.size() && sql[i + 1] == '$') {  // a $$ ... $$ body
            size_t end = sql.find("$$", i + 2);
            end = end == std::string_view::npos ? sql.size() : end + 2;
            out.append(sql.substr(i, end - i));
            i = end - 1;
            continue;
        }
        if (c == '?') {
            out += '$';
            out += std::to_string(++n);
            continue;
        }
        out += c;
    }
    return out;
}

PgModelSql pg_model_sql(const db::detail::ModelSql& s, std::string_view key) {
    PgModelSql p;
    p.select = s.select;
    p.find = numbered(s.find);
    p.insert_returning = numbered(s.insert) + " RETURNING \"" + std::string(key) + "\"";
    p.insert_with_key = numbered(s.insert_with_key);
    p.update = numbered(s.update);
    p.remove = numbered(s.remove);
    p.count = s.count;
    p.where = s.where;
    return p;
}

}  // namespace kiln::pg::detail
