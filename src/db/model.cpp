// The non-template half of the model layer: SQL text built from a model's
// compile-time names, and order_by validation. Output contains only those names
// (quoted) and kiln's own keywords, never bytes of the order_by argument.
#include <string>
#include <vector>

#include <kiln/model.hpp>

#include "db/error.hpp"

namespace kiln::db::detail {
namespace {

std::string quoted(std::string_view name) { return "\"" + std::string(name) + "\""; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
        if (x != b[i]) return false;
    }
    return true;
}

}  // namespace

ModelSql build_model_sql(std::string_view table, std::span<const std::string_view> names) {
    ModelSql s;
    std::string t = quoted(table);
    std::string key = quoted(names[0]);
    std::string all_cols, rest_cols, rest_marks, all_marks, sets;
    for (size_t i = 0; i < names.size(); ++i) {
        std::string c = quoted(names[i]);
        all_cols += (i ? ", " : "") + c;
        all_marks += i ? ", ?" : "?";
        if (i == 0) continue;
        rest_cols += (i > 1 ? ", " : "") + c;
        rest_marks += i > 1 ? ", ?" : "?";
        sets += (i > 1 ? ", " : "") + c + " = ?";
    }
    s.select = "SELECT " + all_cols + " FROM " + t;
    s.find = s.select + " WHERE " + key + " = ?";
    s.insert = names.size() > 1 ? "INSERT INTO " + t + " (" + rest_cols + ") VALUES (" + rest_marks + ")"
                                : "INSERT INTO " + t + " DEFAULT VALUES";
    s.insert_with_key = "INSERT INTO " + t + " (" + all_cols + ") VALUES (" + all_marks + ")";
    s.update = "UPDATE " + t + " SET " + sets + " WHERE " + key + " = ?";
    s.remove = "DELETE FROM " + t + " WHERE " + key + " = ?";
    s.count = "SELECT count(*) FROM " + t;
    s.where = s.select + " WHERE ";
    return s;
}

std::optional<std::string> order_clause(std::span<const std::string_view> names, std::string_view order_by) {
    order_by = trim(order_by);
    if (order_by.empty()) return " ORDER BY " + quoted(names[0]);
    std::string out = " ORDER BY ";
    bool first = true;
    std::vector<bool> used(names.size());  // fields named so far, by index
    while (true) {
        size_t comma = order_by.find(',');
        std::string_view item = trim(order_by.substr(0, comma));
        std::string_view dir;
        if (size_t space = item.find_first_of(" \t"); space != std::string_view::npos) {
            dir = trim(item.substr(space));
            item = item.substr(0, space);
        }
        const std::string_view* known = nullptr;
        for (const std::string_view& n : names) {
            if (n == item) known = &n;
        }
        if (!known) return std::nullopt;
        // Each field once: a repeated one sorts nothing more, and a list of thousands
        // fails in SQLite (too many terms) while each spelling takes a cache slot.
        const size_t index = static_cast<size_t>(known - names.data());
        if (used[index]) return std::nullopt;
        used[index] = true;
        out += (first ? "" : ", ") + quoted(*known);  // the model's name, not the input's bytes
        if (iequals(dir, "desc")) out += " DESC";
        else if (iequals(dir, "asc")) out += " ASC";
        else if (!dir.empty()) return std::nullopt;
        first = false;
        if (comma == std::string_view::npos) break;
        order_by.remove_prefix(comma + 1);
    }
    return out;
}

void bad_order_by(std::string_view table, std::string_view order_by) {
    // order_by is often input: shown shortened and with control bytes replaced,
    // so it cannot forge log lines.
    std::string shown;
    for (char c : order_by.substr(0, 64)) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
    throw_kiln(ErrorKind::Misuse, "order_by '" + shown + "' names something that is not a field of " +
                                      std::string(table) + " (expected \"field [ASC|DESC], ...\", each field once)");
}

}  // namespace kiln::db::detail
