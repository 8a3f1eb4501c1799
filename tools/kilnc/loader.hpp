// How the compiler sees other templates (layouts and partials) without doing I/O
// itself: kilnc's main reads files, tests and the fuzzer pass a map.
#pragma once
#include <functional>
#include <optional>
#include <string>

namespace kiln::kilnc {

// The source of the template named `name` ("layouts/app", no ".html"), or nullopt
// if the views directory has no such template.
using TemplateLoader = std::function<std::optional<std::string>(const std::string& name)>;

}  // namespace kiln::kilnc
