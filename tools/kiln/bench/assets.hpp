// What a browser would fetch after a page: the stylesheets (<link rel=stylesheet
// href>), scripts (<script src>) and images (<img src>) named in its HTML. Only
// same-origin relative URLs are kept ("/x.css", "x.css", resolved against the
// page's directory); absolute URLs, scheme-relative "//host/x" and data: URLs are
// skipped, the fragment is dropped, duplicates are kept once, in document order.
// A pure function over a string: no I/O. Used once per session.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::bench {

inline constexpr size_t kMaxAssets = 64;

// Request targets of the page's assets. `page_target` is the page's own target
// (e.g. "/" or "/app/index.html?x=1"), used to resolve relative URLs.
std::vector<std::string> extract_assets(std::string_view html, std::string_view page_target);

// The study's fixed list (perf -f): the stylesheet and the picture.
std::vector<std::string> fixed_assets();

}  // namespace kiln::bench
