#include "pg/refused.hpp"

#include <array>

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
               "reconnect; use the URL's options, SET LOCAL inside begin(), or set_config(name, value, true)";
    return "";
}

namespace {
// Whether each set_config(...) call in `lower` (lower-cased SQL) has a literal true as
// its third argument (is_local). Anything else (false, a parameter, an expression)
// counts as the session's.
bool every_set_config_is_local(std::string_view lower) {
    for (size_t at = lower.find("set_config"); at != lower.npos; at = lower.find("set_config", at + 1)) {
        size_t i = at + 10;
        while (i < lower.size() && lower[i] == ' ') ++i;
        if (i >= lower.size() || lower[i] != '(') return false;
        int depth = 0;
        size_t last_comma = lower.npos, close = lower.npos;
        bool quoted = false;
        for (size_t j = i; j < lower.size() && close == lower.npos; ++j) {
            char c = lower[j];
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
        if (close == lower.npos || last_comma == lower.npos) return false;
        std::string_view third = lower.substr(last_comma + 1, close - last_comma - 1);
        while (!third.empty() && third.front() == ' ') third.remove_prefix(1);
        while (!third.empty() && third.back() == ' ') third.remove_suffix(1);
        if (third != "true") return false;
    }
    return true;
}
}  // namespace

bool changes_session(std::string_view sql) {
    std::string lower(sql);
    for (char& c : lower)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    std::string_view rest = sql;
    std::string w = keyword(&rest);
    if (w == "SET") {
        std::string next = keyword(&rest);
        return next != "LOCAL" && next != "TRANSACTION" && next != "CONSTRAINTS";
    }
    constexpr std::array<std::string_view, 7> kAlways = {"RESET",    "DISCARD", "PREPARE", "DEALLOCATE",
                                                         "LISTEN", "UNLISTEN", "LOAD"};
    if (one_of(w, kAlways)) return true;
    if (w == "DECLARE" && lower.find("with hold") != std::string::npos) return true;  // outlives the commit
    if (w == "CREATE") {
        std::string next = keyword(&rest);
        if (next == "OR") {  // OR REPLACE
            keyword(&rest);
            next = keyword(&rest);
        }
        if (next == "LOCAL" || next == "GLOBAL") next = keyword(&rest);
        if (next == "TEMP" || next == "TEMPORARY") return true;
    }
    if (lower.find("into temp") != std::string::npos) return true;  // SELECT ... INTO TEMP t
    if (!every_set_config_is_local(lower)) return true;
    for (std::string_view call : {"pg_advisory_lock", "pg_try_advisory_lock"})
        if (lower.find(call) != std::string::npos) return true;
    return false;
}

}  // namespace kiln::pg::detail
