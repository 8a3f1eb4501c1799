// The arguments of <%@ %> directives. Each parser takes the text after the directive
// name and either fills its result or returns a message saying what is wrong (the
// caller adds the position). Pure functions.
//   <%@ param TYPE NAME %>  <%@ param TYPE NAME = DEFAULT %>
//   <%@ include "file.hpp" %>  <%@ include <header> %>
//   <%@ layout "name" INITIALIZERS %>  <%@ render "name" INITIALIZERS %>  <%@ yield %>
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "kilnc/template_model.hpp"

namespace kiln::kilnc {

struct DirectiveHead {
    std::string_view name;  // "param"; empty if the directive has none
    size_t args_offset;     // where the arguments start in the directive text
};

DirectiveHead split_directive(std::string_view text);

// Fills type, name and default_value (not pos).
std::optional<std::string> parse_param(std::string_view args, Param& out);
std::optional<std::string> parse_include(std::string_view args, std::string& target);
// `what` is "layout" or "render", for the message. `name` gets the unquoted name,
// `init_offset` where the initializers start in args.
std::optional<std::string> parse_template_ref(std::string_view what, std::string_view args, std::string& name,
                                              size_t& init_offset);

// Names a param may not take: they are members or locals of the generated code.
bool is_reserved_param_name(std::string_view name);

std::string_view trim(std::string_view s);

}  // namespace kiln::kilnc
