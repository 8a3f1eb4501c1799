// Fields of a generated model: "title:string" parsed and mapped to the C++ member
// type, the SQLite column, the form input and the code that reads it from a form.
// The types: string, text, integer, bigint, float, boolean, datetime. Every model
// also gets `id` (the key) and `created_at`/`updated_at`, which are refused as fields.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::gen {

enum class FieldType { String, Text, Integer, Bigint, Float, Boolean, Datetime };

// How a type is stored and edited.
struct TypeInfo {
    std::string_view name;        // as typed: "string"
    std::string_view cpp_type;    // member type: "std::string"
    std::string_view cpp_init;    // member initializer: "", " = 0", "{}"
    std::string_view sql_column;  // after the column name: "TEXT NOT NULL DEFAULT ''"
    std::string_view input;       // form control: "text", "textarea", "number", "checkbox", "datetime-local"
    std::string_view reader;      // kiln::FormReader method: "text", "number", "checkbox", "datetime"
    bool required;                // an empty form value is a validation error
    size_t max_chars = 0;         // text: the longest value the form takes, in characters (0: not text)
};

const TypeInfo& type_info(FieldType t);
std::optional<FieldType> parse_type(std::string_view name);
// "string, text, integer, bigint, float, boolean, datetime" (for messages).
std::string type_names();

struct Field {
    std::string name;  // snake_case column and member name
    FieldType type;
    const TypeInfo& info() const { return type_info(type); }
    std::string label() const;  // "Published at" for published_at
};

// Parses "name:type" specs. On error returns nullopt and sets *error to a message
// naming the bad spec (unknown type, bad or reserved name, duplicate).
std::optional<std::vector<Field>> parse_fields(const std::vector<std::string_view>& specs, std::string* error);

}  // namespace kiln::gen
