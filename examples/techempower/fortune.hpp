// One row of TechEmpower's Fortune table. The message is a view into the query's
// result (or a literal), which outlives the page rendered from it.
#pragma once
#include <cstdint>
#include <string_view>

namespace tfb {

struct Fortune {
    int32_t id;
    std::string_view message;
};

}  // namespace tfb
