#include "generate/names.hpp"

#include "kilnc/names.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace kiln::gen {
namespace {

// Beyond kilnc's keyword list: identifiers with special meaning in places, which a
// generated class or member named so would make confusing to read.
constexpr std::string_view kContextual[] = {"final", "override", "import", "module"};

// Names the generated code uses for its own namespaces and locals.
constexpr std::string_view kTaken[] = {
    "app", "kiln", "std", "views", "controllers", "req", "res", "form", "errors", "token", "notice", "db", "main",
    "content", "render", "render_body", "page", "item", "found", "action", "method",
};

// singular, plural
constexpr std::pair<std::string_view, std::string_view> kIrregular[] = {
    {"person", "people"}, {"child", "children"}, {"man", "men"}, {"woman", "women"},
    {"mouse", "mice"},    {"foot", "feet"},      {"tooth", "teeth"}, {"goose", "geese"},
};
constexpr std::string_view kUncountable[] = {"news", "series", "species", "equipment", "information", "data"};

bool lower(char c) { return c >= 'a' && c <= 'z'; }
bool upper(char c) { return c >= 'A' && c <= 'Z'; }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool vowel(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

// The last word and everything before it ("blog_" + "post").
std::pair<std::string_view, std::string_view> split_last(std::string_view s) {
    size_t u = s.rfind('_');
    if (u == s.npos) return {{}, s};
    return {s.substr(0, u + 1), s.substr(u + 1)};
}

std::string plural_word(std::string_view w) {
    for (auto [one, many] : kIrregular)
        if (w == one) return std::string(many);
    for (auto u : kUncountable)
        if (w == u) return std::string(w);
    std::string s(w);
    auto ends = [&](std::string_view suffix) { return w.ends_with(suffix); };
    if (ends("s") || ends("x") || ends("z") || ends("ch") || ends("sh")) return s + "es";
    if (w.size() >= 2 && w.back() == 'y' && !vowel(w[w.size() - 2])) return s.substr(0, s.size() - 1) + "ies";
    return s + "s";
}

std::string singular_word(std::string_view w) {
    for (auto [one, many] : kIrregular)
        if (w == many) return std::string(one);
    for (auto u : kUncountable)
        if (w == u) return std::string(w);
    auto ends = [&](std::string_view suffix) { return w.ends_with(suffix); };
    std::string s(w);
    if (ends("ies") && w.size() > 3) return s.substr(0, s.size() - 3) + "y";
    for (std::string_view e : {"sses", "xes", "zes", "ches", "shes"})
        if (ends(e)) return s.substr(0, s.size() - 2);
    if (ends("s") && !ends("ss") && w.size() > 1) return s.substr(0, s.size() - 1);
    return s;
}

// `use_singular`: the generated code names things after the singular too (a
// resource's model and variables; a controller uses only the plural).
NamesResult make(std::string_view typed, std::string singular, std::string plural, bool use_singular) {
    NamesResult out;
    for (std::string_view t : kTaken)
        if ((use_singular && (singular == t || singular.starts_with("kiln_"))) || plural == t ||
            plural.starts_with("kiln_")) {
            out.error = "'" + std::string(typed) + "' is a name the generated code uses itself; pick another";
            return out;
        }
    if ((use_singular && is_cpp_keyword(singular)) || is_cpp_keyword(plural)) {
        out.error = "'" + std::string(typed) + "' is a C++ keyword; pick another name";
        return out;
    }
    Names n;
    n.class_name = camelize(singular);
    n.human = humanize(singular);
    n.human_plural = humanize(plural);
    n.controller = plural + "_controller";
    n.url = "/" + plural;
    n.singular = std::move(singular);
    n.plural = std::move(plural);
    out.names = std::move(n);
    return out;
}

std::string bad_name(std::string_view typed) {
    return "'" + std::string(typed) +
           "' is not a usable name: use letters, digits and '_' (or CamelCase), starting with a letter";
}

}  // namespace

bool is_cpp_keyword(std::string_view s) {
    return kilnc::is_cpp_keyword(s) ||
           std::find(std::begin(kContextual), std::end(kContextual), s) != std::end(kContextual);
}

bool is_identifier(std::string_view s) {
    if (s.empty() || digit(s[0])) return false;
    for (char c : s)
        if (!lower(c) && !upper(c) && !digit(c) && c != '_') return false;
    return !is_cpp_keyword(s);
}

std::optional<std::string> to_snake(std::string_view name) {
    std::string out;
    for (size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        if (upper(c)) {
            // A word starts at an upper-case letter after a lower-case one or a digit,
            // or before a lower-case one in a run of capitals ("HTTPServer" -> http_server).
            bool after_word = i > 0 && (lower(name[i - 1]) || digit(name[i - 1]));
            bool run_end = i > 0 && upper(name[i - 1]) && i + 1 < name.size() && lower(name[i + 1]);
            if ((after_word || run_end) && !out.empty() && out.back() != '_') out += '_';
            out += static_cast<char>(c - 'A' + 'a');
        } else if (lower(c) || digit(c)) {
            out += c;
        } else if (c == '_' || c == '-') {
            out += '_';
        } else {
            return std::nullopt;
        }
    }
    if (out.empty() || !lower(out[0]) || out.back() == '_' || out.find("__") != out.npos) return std::nullopt;
    return out;
}

std::string camelize(std::string_view snake) {
    std::string out;
    bool start = true;
    for (char c : snake) {
        if (c == '_') {
            start = true;
            continue;
        }
        out += start && lower(c) ? static_cast<char>(c - 'a' + 'A') : c;
        start = false;
    }
    return out;
}

std::string humanize(std::string_view snake) {
    std::string out(snake);
    std::replace(out.begin(), out.end(), '_', ' ');
    if (!out.empty() && lower(out[0])) out[0] = static_cast<char>(out[0] - 'a' + 'A');
    return out;
}

std::string pluralize(std::string_view snake) {
    auto [head, last] = split_last(snake);
    return std::string(head) + plural_word(last);
}

std::string singularize(std::string_view snake) {
    auto [head, last] = split_last(snake);
    return std::string(head) + singular_word(last);
}

NamesResult resource_names(std::string_view typed) {
    auto snake = to_snake(typed);
    if (!snake) return {std::nullopt, bad_name(typed)};
    std::string plural = pluralize(*snake);
    if (plural == *snake) plural += "_items";  // "news": the list and one item need two names
    return make(typed, *snake, std::move(plural), true);
}

NamesResult controller_names(std::string_view typed) {
    auto snake = to_snake(typed);
    if (!snake) return {std::nullopt, bad_name(typed)};
    return make(typed, singularize(*snake), *snake, false);
}

}  // namespace kiln::gen
