// Where a session keeps its CSRF token: read by csrf.cpp, dropped by
// Session::regenerate (a token seen before a login must not work after it).
#pragma once
#include <string_view>

namespace kiln::app {

inline constexpr std::string_view kCsrfSessionKey = "_csrf";

}  // namespace kiln::app
