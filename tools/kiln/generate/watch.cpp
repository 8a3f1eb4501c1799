#include "generate/watch.hpp"

#include <system_error>

namespace kiln::gen {
namespace fs = std::filesystem;

namespace {

bool watched_file(const fs::path& p) {
    std::string ext = p.extension().string();
    return ext == ".cpp" || ext == ".hpp" || ext == ".h" || ext == ".cc" || ext == ".html" || ext == ".sql";
}

void add(Snapshot& s, const fs::path& root, const fs::path& p) {
    std::error_code ec;
    auto t = fs::last_write_time(p, ec);
    if (ec) return;  // vanished between listing and stat: the next poll sees it
    s[fs::relative(p, root, ec).string()] = static_cast<long long>(t.time_since_epoch().count());
}

}  // namespace

Snapshot snapshot_sources(const fs::path& root) {
    Snapshot s;
    std::error_code ec;
    for (const char* top : {"CMakeLists.txt", "main.cpp", "app.cpp", "app.hpp", "routes.hpp"}) add(s, root, root / top);
    for (const char* dir : {"controllers", "models", "routes", "lib", "views", "db"}) {
        fs::recursive_directory_iterator it(root / dir, fs::directory_options::skip_permission_denied, ec), end;
        for (; !ec && it != end; it.increment(ec))
            if (it->is_regular_file(ec) && watched_file(it->path())) add(s, root, it->path());
        ec.clear();
    }
    return s;
}

std::string first_change(const Snapshot& before, const Snapshot& after) {
    for (const auto& [path, mtime] : after) {
        auto old = before.find(path);
        if (old == before.end() || old->second != mtime) return path;
    }
    for (const auto& [path, mtime] : before)
        if (!after.count(path)) return path;
    return {};
}

}  // namespace kiln::gen
