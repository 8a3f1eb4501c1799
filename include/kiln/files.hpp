// kiln::FileOptions: how App::files(prefix, dir, options) serves a directory of
// static files. What a client sees:
//  - GET and HEAD only (HEAD: the same head, no body); other methods get 405 with Allow.
//  - Content-Type from the extension (text types with "; charset=utf-8"), else
//    application/octet-stream. ETag is strong, from size and mtime (nanoseconds):
//    "\"<size hex>-<mtime ns hex>[-br|-zstd|-gzip]\""; Last-Modified is the mtime.
//  - If-Match (list, "*", strong comparison) that matches nothing, else an
//    If-Unmodified-Since older than the file, is 412: a download resumed in parts
//    never splices two versions. Then If-None-Match (list, "*", weak comparison) wins
//    over If-Modified-Since; a hit is 304 with ETag, Last-Modified, Cache-Control and
//    Vary, no body.
//  - One range ("bytes=a-b", "a-", "-n") is 206 with Content-Range; past the end is
//    416 with "Content-Range: bytes */size"; several ranges, a malformed header or an
//    If-Range that does not match (strong ETag or exact date) give the whole file (200).
//    Ranges apply to the representation sent, the precompressed one included.
//  - "x.css.br" / "x.css.zst" / "x.css.gz" beside "x.css" are sent with Content-Encoding
//    when the client's Accept-Encoding allows (highest q wins; br, then zstd, on a tie);
//    files are never compressed on the fly (make the siblings at build time); every answer for a
//    file that has such a sibling carries "Vary: Accept-Encoding". A sibling older than
//    its file (a deploy changed x.css, not x.css.gz) is stale and never sent: the file is.
//  - A directory path ending in '/' serves `index`; without the '/', 301 to the form
//    with it (query kept). Missing or not a regular file: 404. Permission denied: 403
//    (as nginx: an operator sees the cause). I/O error: 500, logged, nothing leaked.
//  - Never outside `dir`: "..", "\\", NUL and names starting with '.' (unless
//    `dotfiles`) are 404 before any file-system call; symlinks resolve only beneath
//    the root (see src/net/file_root.hpp), relative ones inside it work.
// Files up to memory_max_file are kept in memory per process and re-checked with one
// stat(2) per request (size, mtime, inode), so a change on disk is served at once;
// larger files are sent from the file with sendfile(2).
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

struct FileOptions {
    std::string cache_control = "public, max-age=3600";  // empty: no Cache-Control header
    std::string index = "index.html";                    // served for a directory; empty: 404
    bool precompressed = true;                           // serve .br/.zst/.gz siblings when accepted
    bool dotfiles = false;                               // serve names starting with '.' (".env", ".git/")
    size_t memory_max_file = 64 * 1024;                  // files up to this size stay in memory (0: none)
    size_t memory_max_total = 32 * 1024 * 1024;          // per files() mount, in each worker process
    // Extra Content-Types by extension (lower case, no dot), e.g. {"yaml", "application/yaml"};
    // checked before the built-in table.
    std::vector<std::pair<std::string, std::string>> mime_types;
};

}  // namespace kiln
