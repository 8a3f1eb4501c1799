// kiln::FileOptions: how App::files() serves a directory of static files.
#pragma once
#include <cstddef>
#include <string>

namespace kiln {

struct FileOptions {
    std::string cache_control = "public, max-age=3600";  // empty: no Cache-Control header
    std::string index = "index.html";                    // served for a directory; empty: 404
    bool precompressed = true;                           // serve .br/.gz siblings when accepted
    size_t memory_max_file = 64 * 1024;                  // files up to this size are cached in memory
    size_t memory_max_total = 32 * 1024 * 1024;          // per worker process
};

}  // namespace kiln
