#include "pg/refused.hpp"

#include <array>
#include <initializer_list>
#include <string>

namespace kiln::pg::detail {
namespace {

// Skips blanks, -- comments and /* */ comments (nested, as PostgreSQL reads them).
std::string_view skip_blank(std::string_view s) {
    for (;;) {
        size_t i = 0;
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f')) ++i;
        s.remove_prefix(i);
        if (s.starts_with("--")) {
            size_t eol = s.find('\n');
            s = eol == s.npos ? std::string_view() : s.substr(eol + 1);
        } else if (s.starts_with("/*")) {
            int depth = 0;
            size_t j = 0;
            do {
                if (s.compare(j, 2, "/*") == 0) ++depth, j += 2;
                else if (s.compare(j, 2, "*/") == 0) --depth, j += 2;
                else ++j;
            } while (depth > 0 && j < s.size());
            s.remove_prefix(std::min(j, s.size()));
        } else {
            return s;
        }
    }
}

// The keyword at the start of s, upper-cased (letters and '_' only), and the rest.
std::string keyword(std::string_view* s) {
    *s = skip_blank(*s);
    std::string w;
    size_t i = 0;
    for (; i < s->size() && w.size() < 16; ++i) {
        char c = (*s)[i];
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        if ((c < 'A' || c > 'Z') && c != '_') break;
        w.push_back(c);
    }
    s->remove_prefix(i);
    return w;
}

template <size_t N>
bool one_of(const std::string& w, const std::array<std::string_view, N>& words) {
    for (std::string_view x : words)
        if (w == x) return true;
    return false;
}

constexpr std::array<std::string_view, 8> kTransaction = {"BEGIN", "START", "COMMIT",    "END",
                                                          "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE"};
constexpr std::array<std::string_view, 4> kSession = {"SET", "RESET", "DISCARD", "DEALLOCATE"};

}  // namespace

namespace {
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Where `word` (lower case) first occurs in `sql` from `from` on, in any case; npos if
// nowhere. (No lower-cased copy: this runs for every statement of a transaction.)
size_t find_ci(std::string_view sql, std::string_view word, size_t from = 0) {
    for (size_t i = from; i + word.size() <= sql.size(); ++i) {
        size_t k = 0;
        while (k < word.size() && lower(sql[i + k]) == word[k]) ++k;
        if (k == word.size()) return i;
    }
    return std::string_view::npos;
}

// Whether `sql` holds "temp", "_config" or "advisory" anywhere, in any case: the
// words the checks below look for in the whole text (INTO TEMP, set_config, the
// advisory locks). One pass, so that a statement with none (nearly all) costs
// little: this runs for every statement the shared connection carries.
bool mentions_session_words(std::string_view sql) {
    auto at = [&](size_t i, std::string_view rest) {  // rest (lower case) follows i
        if (i + 1 + rest.size() > sql.size()) return false;
        for (size_t k = 0; k < rest.size(); ++k)
            if (lower(sql[i + 1 + k]) != rest[k]) return false;
        return true;
    };
    for (size_t i = 0; i < sql.size(); ++i) {
        char c = static_cast<char>(sql[i] | 0x20);  // lower case for letters; '_' is 0x7f then
        if ((c == 't' && at(i, "emp")) || (c == 0x7f && at(i, "config")) || (c == 'a' && at(i, "dvisory")))
            return true;
    }
    return false;
}

bool ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           static_cast<unsigned char>(c) >= 0x80;
}

// Where `word` first occurs from `from` on as a word of its own (no identifier
// character before or after it: "temp" is not in "temperatures"); npos if nowhere.
size_t find_word(std::string_view sql, std::string_view word, size_t from = 0) {
    for (size_t at = find_ci(sql, word, from); at != sql.npos; at = find_ci(sql, word, at + 1)) {
        bool starts = at == 0 || !ident_char(sql[at - 1]);
        bool ends = at + word.size() == sql.size() || !ident_char(sql[at + word.size()]);
        if (starts && ends) return at;
    }
    return sql.npos;
}

// Where the next call of the function `name` is from `from` on: its name as a word,
// then '(' (after blanks and comments, as PostgreSQL reads them); npos if none. The
// index is of the '('.
size_t find_call(std::string_view sql, std::string_view name, size_t from = 0) {
    for (size_t at = find_word(sql, name, from); at != sql.npos; at = find_word(sql, name, at + 1)) {
        std::string_view rest = skip_blank(sql.substr(at + name.size()));
        if (!rest.empty() && rest.front() == '(') return sql.size() - rest.size();
    }
    return sql.npos;
}

// Whether `first` is followed, after blanks, by one of `seconds` as words.
bool words(std::string_view sql, std::string_view first, std::initializer_list<std::string_view> seconds) {
    for (size_t at = find_word(sql, first); at != sql.npos; at = find_word(sql, first, at + 1)) {
        std::string_view rest = sql.substr(at + first.size());
        std::string next = keyword(&rest);
        for (std::string_view second : seconds)
            if (next.size() == second.size() && find_ci(next, second) == 0) return true;
    }
    return false;
}

// Whether each set_config(...) call in `sql` has a literal true as its third argument
// (is_local). Anything else (false, a parameter, an expression) counts as the session's.
bool every_set_config_is_local(std::string_view sql) {
    for (size_t i = find_call(sql, "set_config"); i != sql.npos; i = find_call(sql, "set_config", i)) {
        int depth = 0;
        size_t last_comma = sql.npos, close = sql.npos;
        bool quoted = false;
        for (size_t j = i; j < sql.size() && close == sql.npos; ++j) {
            char c = sql[j];
            if (quoted) {
                quoted = c != '\'';
            } else if (c == '\'') {
                quoted = true;
            } else if (c == '(') {
                ++depth;
            } else if (c == ')') {
                if (--depth == 0) close = j;
            } else if (c == ',' && depth == 1) {
                last_comma = j;
            }
        }
        if (close == sql.npos || last_comma == sql.npos) return false;
        std::string_view third = sql.substr(last_comma + 1, close - last_comma - 1);
        while (!third.empty() && third.front() == ' ') third.remove_prefix(1);
        while (!third.empty() && third.back() == ' ') third.remove_suffix(1);
        if (third.size() != 4 || find_ci(third, "true") != 0) return false;
    }
    return true;
}
}  // namespace

namespace {
// changes_session(), and with `any_set_config` every set_config call counts, even a
// local one (refusal(): on the shared connection the SELECTs sent beside it share its
// implicit transaction).
bool changes_session(std::string_view sql, bool any_set_config) {
    std::string_view rest = sql;
    std::string w = keyword(&rest);
    if (w == "SET") {
        std::string next = keyword(&rest);
        return next != "LOCAL" && next != "TRANSACTION" && next != "CONSTRAINTS";
    }
    constexpr std::array<std::string_view, 7> kAlways = {"RESET",    "DISCARD", "PREPARE", "DEALLOCATE",
                                                         "LISTEN", "UNLISTEN", "LOAD"};
    if (one_of(w, kAlways)) return true;
    if (w == "DECLARE" && words(sql, "with", {"hold"})) return true;  // outlives the commit
    if (w == "CREATE") {
        std::string next = keyword(&rest);
        if (next == "OR") {  // OR REPLACE
            keyword(&rest);
            next = keyword(&rest);
        }
        if (next == "LOCAL" || next == "GLOBAL") next = keyword(&rest);
        if (next == "TEMP" || next == "TEMPORARY") return true;
    }
    if (!mentions_session_words(sql)) return false;  // nearly every statement: one pass
    if (words(sql, "into", {"temp", "temporary"})) return true;  // SELECT ... INTO TEMP t
    if (any_set_config ? find_call(sql, "set_config") != sql.npos : !every_set_config_is_local(sql)) return true;
    for (std::string_view lock : {"pg_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock",
                                  "pg_try_advisory_lock_shared"})
        if (find_call(sql, lock) != sql.npos) return true;
    return false;
}
}  // namespace

bool changes_session(std::string_view sql) { return changes_session(sql, /*any_set_config=*/false); }

std::string refusal(std::string_view sql) {
    std::string_view rest = sql;
    std::string w = keyword(&rest);
    if (one_of(w, kTransaction) || (w == "PREPARE" && keyword(&rest) == "TRANSACTION"))
        return "kiln refuses " + w + " on the shared connection, where every coroutine's statements would run "
               "inside the transaction: use begin() (a transaction has a connection of its own)";
    if (w == "COPY") return "kiln refuses COPY: it takes the connection out of pipeline mode";
    if (w == "LISTEN" || w == "UNLISTEN") return "kiln refuses " + w + " on the shared connection: use listen()";
    if (one_of(w, kSession))
        return "kiln refuses " + w + ": it changes the session every coroutine of the loop shares, until its next "
               "reconnect; use the URL's options, or SET LOCAL inside begin()";
    // Anywhere in the text: a setting (set_config, even a local one, reaches the
    // SELECTs other coroutines sent beside it, which share its implicit transaction),
    // a session advisory lock, a temporary object.
    if (changes_session(sql, /*any_set_config=*/true))
        return "kiln refuses this statement on the shared connection: it changes a setting, a lock or a temporary "
               "object every coroutine of the loop would share; run it inside begin()";
    return "";
}

}  // namespace kiln::pg::detail
