#include "app/static_path.hpp"

namespace kiln::app {

StaticPath map_static_path(std::string_view prefix, std::string_view path, bool dotfiles, std::string_view index) {
    StaticPath out;
    // The router matched the prefix as whole segments; checked again here so that
    // "/staticx" can never be read as "x" below "/static".
    if (!path.starts_with(prefix)) return out;
    std::string_view rest = path.substr(prefix.size());
    if (rest.empty()) {
        out.kind = StaticPath::Kind::Mount;
        return out;
    }
    if (rest[0] != '/') return out;
    rest.remove_prefix(1);
    if (!safe_relative(rest, dotfiles)) return out;
    out.dir_form = path.back() == '/';
    if (out.dir_form && index.empty()) return out;
    out.rel.reserve(rest.size() + (out.dir_form ? index.size() : 0));
    out.rel = rest;
    if (out.dir_form) out.rel += index;
    out.kind = StaticPath::Kind::File;
    return out;
}

bool safe_relative(std::string_view rel, bool dotfiles) {
    while (!rel.empty()) {
        size_t slash = rel.find('/');
        std::string_view seg = rel.substr(0, slash);
        rel = slash == rel.npos ? std::string_view() : rel.substr(slash + 1);
        if (seg.empty()) return false;  // "//": the server never passes one on
        if (seg == "." || seg == "..") return false;
        if (seg[0] == '.' && !dotfiles) return false;
        if (seg.find('\0') != seg.npos || seg.find('\\') != seg.npos) return false;
    }
    return true;
}

std::string encode_path(std::string_view path) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(path.size() + 8);
    for (char ch : path) {
        auto c = static_cast<unsigned char>(ch);
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("-._~!$&'()*+,;=:@/").find(ch) != std::string_view::npos;
        if (keep) {
            out.push_back(ch);
        } else {
            out.push_back('%');
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 15]);
        }
    }
    return out;
}

}  // namespace kiln::app
