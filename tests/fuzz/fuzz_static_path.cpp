// Fuzzes static-file path resolution: map_static_path and encode_path (pure), then
// FileRoot::open in its openat2 and /proc-fallback modes on a fixture tree made once in
// /tmp (files, a dotfile, symlinks leading out, a file outside the root). Byte 0 picks
// the mount prefix, dotfiles and index; the rest is a request path, used raw and as the
// server normalizes it. The mapping agrees with the rules written here, and its name is
// the path's tail; encode_path gives URL-safe bytes that decode back; no descriptor
// FileRoot returns, for a mapped or a hostile name, is outside the root.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "net/file_root.hpp"
#include "app/static_path.hpp"
#include "fuzz_check.hpp"
#include "http/url.hpp"

using kiln::net::FileRoot;
using kiln::app::StaticPath;

namespace {

std::string g_base;       // the fixture directory (removed at exit)
std::string g_root_real;  // realpath of g_base/root
struct stat g_outside;    // the file the root must never reach
std::unique_ptr<FileRoot> g_auto, g_fallback;

void remove_fixture() {
    std::error_code ec;
    if (!g_base.empty()) std::filesystem::remove_all(g_base, ec);
}

void make_fixture() {
    char tmpl[] = "/tmp/kiln-fuzz-static.XXXXXX";
    FUZZ_CHECK(mkdtemp(tmpl) != nullptr);
    g_base = tmpl;
    std::atexit(remove_fixture);
    namespace fs = std::filesystem;
    fs::path base(g_base), root = base / "root";
    fs::create_directories(root / "a" / "b");
    fs::create_directories(root / "sub.d");
    auto write = [](const fs::path& p) {
        FILE* f = std::fopen(p.c_str(), "w");
        FUZZ_CHECK(f != nullptr);
        std::fputs("x\n", f);
        std::fclose(f);
    };
    write(base / "outside.txt");
    write(root / "index.html");
    write(root / "a" / "index.html");
    write(root / "a" / "b" / "c.txt");
    write(root / ".env");
    write(root / "sub.d" / "x.css");
    fs::create_symlink("../outside.txt", root / "link_out");
    fs::create_symlink(base / "outside.txt", root / "abs_out");
    fs::create_symlink("..", root / "up");
    fs::create_symlink("../../..", root / "a" / "b" / "up3");
    fs::create_symlink("loop", root / "loop");
    fs::create_symlink("a/b/c.txt", root / "inside_link");
    fs::create_symlink("/proc/self/root", root / "magic");
    FUZZ_CHECK(::stat((base / "outside.txt").c_str(), &g_outside) == 0);
    char real[PATH_MAX];
    FUZZ_CHECK(::realpath(root.c_str(), real) != nullptr);
    g_root_real = real;
    g_auto = std::make_unique<FileRoot>(root.string(), FileRoot::Mode::Auto);
    g_fallback = std::make_unique<FileRoot>(root.string(), FileRoot::Mode::Fallback);
}

// The fallback opens first and checks after, so a name that climbs out ("..", or the
// absolute "magic" link to /proc/self/root) would really open files elsewhere on this
// machine, devices included. Those names go to the openat2 mode only, which refuses
// them inside the kernel before anything is opened.
bool harmless_for_fallback(std::string_view rel) {
    return rel.find("..") == rel.npos && rel.find("magic") == rel.npos;
}

// An fd FileRoot returned must name something at or below the root.
void check_open(const FileRoot& root, const std::string& rel) {
    if (&root == g_fallback.get() && !harmless_for_fallback(rel)) return;
    int fd = root.open(rel);
    if (fd < 0) return;
    struct stat st;
    FUZZ_CHECK(::fstat(fd, &st) == 0);
    FUZZ_CHECK(!(st.st_dev == g_outside.st_dev && st.st_ino == g_outside.st_ino));
    char link[64], real[PATH_MAX];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = ::readlink(link, real, sizeof real - 1);
    ::close(fd);
    FUZZ_CHECK(n > 0);
    std::string_view path(real, static_cast<size_t>(n));
    FUZZ_CHECK(path == g_root_real || (path.starts_with(g_root_real) && path[g_root_real.size()] == '/'));
}

// The rules, written again: the segment checks of a name below the mount.
bool segment_ok(std::string_view seg, bool dotfiles) {
    if (seg.empty() || seg == "." || seg == "..") return false;
    if (seg[0] == '.' && !dotfiles) return false;
    return seg.find('\0') == seg.npos && seg.find('\\') == seg.npos;
}

bool name_ok(std::string_view rel, bool dotfiles) {
    if (rel.empty()) return true;                 // the mount's own directory
    if (rel.back() == '/') rel.remove_suffix(1);  // a directory form: one trailing '/' only
    size_t start = 0;
    for (;;) {
        size_t slash = rel.find('/', start);
        if (!segment_ok(rel.substr(start, slash == rel.npos ? rel.npos : slash - start), dotfiles)) return false;
        if (slash == rel.npos) return true;
        start = slash + 1;
    }
}

void check_map(std::string_view prefix, std::string_view path, bool dotfiles, std::string_view index) {
    StaticPath got = kiln::app::map_static_path(prefix, path, dotfiles, index);
    if (path == prefix) {
        FUZZ_CHECK(got.kind == StaticPath::Kind::Mount);
        return;
    }
    bool under = path.size() > prefix.size() && path.starts_with(prefix) && path[prefix.size()] == '/';
    std::string_view tail = under ? path.substr(prefix.size() + 1) : std::string_view();
    bool dir_form = path.back() == '/';
    bool expect_file = under && name_ok(tail, dotfiles) && !(dir_form && index.empty());
    FUZZ_CHECK((got.kind == StaticPath::Kind::File) == expect_file);
    if (!expect_file) {
        FUZZ_CHECK(got.kind == StaticPath::Kind::Refused);
        return;
    }
    FUZZ_CHECK(got.dir_form == dir_form);
    FUZZ_CHECK(got.rel == std::string(tail) + std::string(dir_form ? index : ""));
    FUZZ_CHECK(!got.rel.empty() && got.rel[0] != '/');
    FUZZ_CHECK(name_ok(got.rel, dotfiles) && got.rel.back() != '/');
    check_open(*g_auto, got.rel);
    check_open(*g_fallback, got.rel);
}

void check_encode(std::string_view path) {
    std::string enc = kiln::app::encode_path(path);
    std::string dec;
    for (size_t i = 0; i < enc.size(); ++i) {
        char c = enc[i];
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     std::string_view("-._~!$&'()*+,;=:@/").find(c) != std::string_view::npos;
        if (plain) {
            dec += c;
            continue;
        }
        FUZZ_CHECK(c == '%' && i + 2 < enc.size());
        auto hex = [](char h) { return h >= '0' && h <= '9' ? h - '0' : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1; };
        int hi = hex(enc[i + 1]), lo = hex(enc[i + 2]);
        FUZZ_CHECK(hi >= 0 && lo >= 0);
        dec += static_cast<char>(hi << 4 | lo);
        i += 2;
    }
    FUZZ_CHECK(dec == path);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    make_fixture();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    static constexpr std::string_view kPrefixes[] = {"", "/static", "/a/b", "/up"};
    std::string_view prefix = kPrefixes[data[0] & 3];
    bool dotfiles = data[0] & 4;
    std::string_view index = data[0] & 8 ? "" : data[0] & 16 ? "c.txt" : "index.html";
    std::string_view raw(reinterpret_cast<const char*>(data + 1), size - 1);

    check_encode(raw);
    if (!raw.empty()) check_map(prefix, raw, dotfiles, index);
    std::string normal;
    if (kiln::http::normalize_path(raw, normal) == kiln::http::PathStatus::Ok && !normal.empty())
        check_map(prefix, normal, dotfiles, index);

    // Names nothing above has vetted: "..", symlinks, absolute paths.
    std::string hostile(raw);
    check_open(*g_auto, hostile);
    check_open(*g_fallback, hostile);
    if (hostile.starts_with('/')) {
        hostile.erase(0, 1);
        check_open(*g_auto, hostile);
        check_open(*g_fallback, hostile);
    }
    return 0;
}
