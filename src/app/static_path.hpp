// How App::files() turns a request path into a file name below its root, without
// touching the disk: the mount prefix comes off, every segment is checked, and a path
// ending in '/' names the directory's index file. Also the Location of the redirect
// that adds a directory's missing '/'. Pure functions (any thread), kept apart from
// files.cpp so that they can be fuzzed alone; FileRoot then opens the name beneath
// the root, which holds even if a name that climbs out got past these checks.
#pragma once
#include <string>
#include <string_view>

namespace kiln::app {

struct StaticPath {
    enum class Kind {
        File,     // look up `rel` below the root
        Mount,    // the path is the prefix itself: redirect to it with a '/' added
        Refused,  // not ours to look up (see safe_relative) or a directory with no index: 404
    };
    Kind kind = Kind::Refused;
    std::string rel;        // File: relative (no leading '/'), every segment checked
    bool dir_form = false;  // File: the path ended in '/', so `rel` ends with the index name
};

// Maps `path` (as normalized by the server) under the mount `prefix` ("" for "/", else
// "/static", no trailing '/'). A path not under the prefix as whole segments is Refused.
// `index` is a plain file name (App::files checks it) or "" for none.
StaticPath map_static_path(std::string_view prefix, std::string_view path, bool dotfiles, std::string_view index);

// True if every segment of `rel` (no leading '/') may be looked up: no "." or "..", no
// empty segment except a trailing one, no NUL or backslash, no leading '.' unless
// `dotfiles`. The server has already normalized the path: this is a second defence.
bool safe_relative(std::string_view rel, bool dotfiles);

// Percent-encodes a decoded path for a Location header: bytes outside the unreserved
// and path-safe sets become %XX, so the header never carries CR, LF, '?' or '#'.
std::string encode_path(std::string_view path);

}  // namespace kiln::app
