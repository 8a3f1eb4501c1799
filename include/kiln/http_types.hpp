// Vocabulary shared by every layer: request methods, header fields, status texts.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln {

enum class Method : uint8_t { Get, Head, Post, Put, Delete, Patch, Options, Connect, Trace, Other };
inline constexpr size_t kMethodCount = 10;

struct Header {
    std::string_view name;   // as sent (case preserved)
    std::string_view value;  // leading and trailing whitespace removed
};

// A route parameter: the name from the pattern (":id" -> "id") and the matched text.
struct RouteParam {
    std::string_view name;
    std::string_view value;
};
inline constexpr size_t kMaxRouteParams = 16;

// Reason phrase for a status code ("Not Found"); "Unknown" if not registered.
std::string_view reason_phrase(int status);

}  // namespace kiln
