// Content-Type of a static file from its name's extension (case-insensitive): a
// fixed table of the types the web serves, text types with "; charset=utf-8";
// anything unknown is application/octet-stream. Pure functions; the table is
// read-only, so any thread may call them.
#pragma once
#include <string_view>

namespace kiln::app {

inline constexpr std::string_view kDefaultMimeType = "application/octet-stream";

// The Content-Type for `name` (a file name or a path), by the text after the last
// '.' of its last segment. No extension, a bare dotfile (".env") or an unknown
// extension gives kDefaultMimeType.
std::string_view mime_type(std::string_view name);

// The extension mime_type() looks at ("css" for "a/b.min.css"), as in the name;
// empty if there is none.
std::string_view file_extension(std::string_view name);

}  // namespace kiln::app
