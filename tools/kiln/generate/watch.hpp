// What `kiln run --watch` looks at: the mtimes (and the set) of a project's sources,
// templates, migrations and CMakeLists.txt, compared between two polls. build/,
// public/ (served from disk as it is) and data/ are not watched.
#pragma once
#include <filesystem>
#include <map>
#include <string>

namespace kiln::gen {

using Snapshot = std::map<std::string, long long>;  // relative path -> mtime in ns

Snapshot snapshot_sources(const std::filesystem::path& root);
// The first path that was added, removed or changed; empty if none.
std::string first_change(const Snapshot& before, const Snapshot& after);

}  // namespace kiln::gen
