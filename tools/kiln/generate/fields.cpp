#include "generate/fields.hpp"

#include <iterator>

#include "generate/names.hpp"

namespace kiln::gen {
namespace {

// Indexed by FieldType. Numbers and dates are required to parse; booleans are a
// checkbox (absent means false), so never "missing". Text has a length limit (the
// form alone would take a megabyte into every row, and into every page listing it).
constexpr TypeInfo kTypes[] = {
    {"string", "std::string", "", "TEXT NOT NULL DEFAULT ''", "text", "text", true, 255},
    {"text", "std::string", "", "TEXT NOT NULL DEFAULT ''", "textarea", "text", true, 20000},
    {"integer", "int32_t", " = 0", "INTEGER NOT NULL DEFAULT 0", "number", "number", true},
    {"bigint", "int64_t", " = 0", "INTEGER NOT NULL DEFAULT 0", "number", "number", true},
    {"float", "double", " = 0", "REAL NOT NULL DEFAULT 0", "number", "number", true},
    {"boolean", "bool", " = false", "INTEGER NOT NULL DEFAULT 0", "checkbox", "checkbox", false},
    {"datetime", "std::chrono::sys_seconds", "{}", "INTEGER NOT NULL DEFAULT 0", "datetime-local", "datetime",
     true},
};

constexpr std::string_view kReserved[] = {"id", "created_at", "updated_at"};

}  // namespace

const TypeInfo& type_info(FieldType t) { return kTypes[static_cast<int>(t)]; }

std::optional<FieldType> parse_type(std::string_view name) {
    for (int i = 0; i < static_cast<int>(std::size(kTypes)); ++i)
        if (kTypes[i].name == name) return static_cast<FieldType>(i);
    return std::nullopt;
}

std::string type_names() {
    std::string out;
    for (const TypeInfo& t : kTypes) {
        if (!out.empty()) out += ", ";
        out += t.name;
    }
    return out;
}

std::string Field::label() const { return humanize(name); }

std::optional<std::vector<Field>> parse_fields(const std::vector<std::string_view>& specs, std::string* error) {
    std::vector<Field> out;
    for (std::string_view spec : specs) {
        size_t colon = spec.find(':');
        std::string_view name = spec.substr(0, colon);
        std::string_view type = colon == spec.npos ? std::string_view() : spec.substr(colon + 1);
        auto fail = [&](const std::string& why) {
            *error = "field '" + std::string(spec) + "': " + why;
            return std::nullopt;
        };
        if (colon == spec.npos || type.empty()) return fail("expected NAME:TYPE, e.g. title:string");
        auto snake = to_snake(name);
        if (!snake || *snake != name || is_cpp_keyword(name))
            return fail("the name must be lower_snake_case letters and digits, not a C++ keyword");
        for (std::string_view r : kReserved)
            if (name == r) return fail("'" + std::string(name) + "' is added to every model already");
        for (const Field& f : out)
            if (f.name == name) return fail("named twice");
        auto t = parse_type(type);
        if (!t) return fail("unknown type '" + std::string(type) + "' (types: " + type_names() + ")");
        out.push_back({std::string(name), *t});
    }
    return out;
}

}  // namespace kiln::gen
