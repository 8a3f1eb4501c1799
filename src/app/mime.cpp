#include "app/mime.hpp"

#include <array>
#include <utility>

namespace kiln::app {
namespace {

// Lower-case extension -> Content-Type. Text types carry their charset: browsers
// otherwise guess, and a guess is how UTF-7 style sniffing attacks start.
constexpr std::array<std::pair<std::string_view, std::string_view>, 43> kTypes{{
    {"html", "text/html; charset=utf-8"},
    {"htm", "text/html; charset=utf-8"},
    {"css", "text/css; charset=utf-8"},
    {"js", "text/javascript; charset=utf-8"},  // RFC 9239
    {"mjs", "text/javascript; charset=utf-8"},
    {"txt", "text/plain; charset=utf-8"},
    {"csv", "text/csv; charset=utf-8"},
    {"md", "text/markdown; charset=utf-8"},
    {"json", "application/json"},  // JSON is UTF-8 by definition (RFC 8259): no charset
    {"map", "application/json"},   // source maps
    {"webmanifest", "application/manifest+json"},
    {"xml", "application/xml"},
    {"svg", "image/svg+xml"},
    {"png", "image/png"},
    {"jpg", "image/jpeg"},
    {"jpeg", "image/jpeg"},
    {"gif", "image/gif"},
    {"webp", "image/webp"},
    {"avif", "image/avif"},
    {"ico", "image/x-icon"},
    {"bmp", "image/bmp"},
    {"pdf", "application/pdf"},
    {"wasm", "application/wasm"},
    {"woff", "font/woff"},
    {"woff2", "font/woff2"},
    {"ttf", "font/ttf"},
    {"otf", "font/otf"},
    {"mp4", "video/mp4"},
    {"webm", "video/webm"},
    {"ogv", "video/ogg"},
    {"mp3", "audio/mpeg"},
    {"ogg", "audio/ogg"},
    {"oga", "audio/ogg"},
    {"wav", "audio/wav"},
    {"flac", "audio/flac"},
    {"m4a", "audio/mp4"},
    {"zip", "application/zip"},
    {"gz", "application/gzip"},
    {"tar", "application/x-tar"},
    {"br", kDefaultMimeType},
    {"bin", kDefaultMimeType},
    {"vtt", "text/vtt; charset=utf-8"},
    {"ics", "text/calendar; charset=utf-8"},
}};

constexpr size_t kMaxExtension = 16;  // longer than any in the table

}  // namespace

std::string_view file_extension(std::string_view name) {
    size_t slash = name.rfind('/');
    std::string_view base = slash == name.npos ? name : name.substr(slash + 1);
    size_t dot = base.rfind('.');
    if (dot == base.npos || dot == 0) return {};  // no extension, or ".env" (a name, not an extension)
    return base.substr(dot + 1);
}

std::string_view mime_type(std::string_view name) {
    std::string_view ext = file_extension(name);
    if (ext.empty() || ext.size() > kMaxExtension) return kDefaultMimeType;
    char lower[kMaxExtension];
    for (size_t i = 0; i < ext.size(); ++i) {
        char c = ext[i];
        lower[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    }
    std::string_view key(lower, ext.size());
    for (const auto& [e, type] : kTypes)
        if (e == key) return type;
    return kDefaultMimeType;
}

}  // namespace kiln::app
