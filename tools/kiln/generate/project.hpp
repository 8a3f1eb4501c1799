// A kiln project on disk: the directory whose CMakeLists.txt starts with the line
// "# kiln-app: NAME" (what `kiln new` writes), and the marked places in its sources
// where generators add lines (`// kiln:routes` in app.cpp,
// `// kiln:route-declarations` in routes.hpp).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::gen {

struct Project {
    std::filesystem::path root;
    std::string name;
};

inline constexpr std::string_view kAppMarker = "# kiln-app: ";
inline constexpr std::string_view kRoutesMarker = "// kiln:routes";
inline constexpr std::string_view kDeclarationsMarker = "// kiln:route-declarations";

// The project containing `start` (it or its nearest parent that is one).
std::optional<Project> find_project(const std::filesystem::path& start);

// `text` with `line` inserted before the line holding `marker`, at the marker's
// indentation. Unchanged if a line equal to `line` (ignoring indentation) is already
// there; nullopt if the marker is missing.
std::optional<std::string> insert_before_marker(std::string_view text, std::string_view marker, std::string_view line);

std::optional<std::string> read_text_file(const std::filesystem::path& path);

}  // namespace kiln::gen
