// Asset links from a page's HTML (see the header). A small tag scanner, not an
// HTML parser: it finds tags by name, reads their attributes (quoted or not), skips
// comments and the content of <script> elements.
#include "bench/assets.hpp"

#include <algorithm>

namespace kiln::bench {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// Finds `needle` case-insensitively in s at or after `from`.
size_t ifind(std::string_view s, std::string_view needle, size_t from) {
    if (needle.size() > s.size()) return std::string_view::npos;
    for (size_t i = from; i + needle.size() <= s.size(); ++i)
        if (iequals(s.substr(i, needle.size()), needle)) return i;
    return std::string_view::npos;
}

bool has_token(std::string_view list, std::string_view token) {
    size_t i = 0;
    while (i < list.size()) {
        while (i < list.size() && is_space(list[i])) ++i;
        size_t start = i;
        while (i < list.size() && !is_space(list[i])) ++i;
        if (i > start && iequals(list.substr(start, i - start), token)) return true;
    }
    return false;
}

struct Tag {
    std::string_view name;
    std::string_view href, src, rel;
    size_t end = 0;  // index one past '>' (or the end of input)
};

// Parses the tag whose '<' is at html[lt]. Attribute values keep their raw text.
Tag read_tag(std::string_view html, size_t lt) {
    Tag t;
    size_t i = lt + 1;
    size_t start = i;
    while (i < html.size() && ((html[i] >= 'a' && html[i] <= 'z') || (html[i] >= 'A' && html[i] <= 'Z') ||
                               (html[i] >= '0' && html[i] <= '9')))
        ++i;
    t.name = html.substr(start, i - start);
    while (i < html.size() && html[i] != '>') {
        if (is_space(html[i]) || html[i] == '/') {
            ++i;
            continue;
        }
        size_t name_start = i;
        while (i < html.size() && !is_space(html[i]) && html[i] != '=' && html[i] != '>' && html[i] != '/') ++i;
        std::string_view name = html.substr(name_start, i - name_start);
        while (i < html.size() && is_space(html[i])) ++i;
        std::string_view value;
        if (i < html.size() && html[i] == '=') {
            ++i;
            while (i < html.size() && is_space(html[i])) ++i;
            if (i < html.size() && (html[i] == '"' || html[i] == '\'')) {
                char q = html[i++];
                size_t v = i;
                while (i < html.size() && html[i] != q) ++i;
                value = html.substr(v, i - v);
                if (i < html.size()) ++i;
            } else {
                size_t v = i;
                while (i < html.size() && !is_space(html[i]) && html[i] != '>') ++i;
                value = html.substr(v, i - v);
            }
        }
        if (iequals(name, "href")) t.href = value;
        else if (iequals(name, "src")) t.src = value;
        else if (iequals(name, "rel")) t.rel = value;
    }
    t.end = i < html.size() ? i + 1 : i;
    return t;
}

// Resolves a same-origin relative reference against the page's target; "" if the
// reference is not one (absolute, scheme-relative, data:, empty).
std::string resolve(std::string_view ref, std::string_view page_target) {
    while (!ref.empty() && is_space(ref.front())) ref.remove_prefix(1);
    while (!ref.empty() && is_space(ref.back())) ref.remove_suffix(1);
    ref = ref.substr(0, ref.find('#'));
    if (ref.empty() || ref.starts_with("//")) return {};
    size_t colon = ref.find(':');
    if (colon != std::string_view::npos && colon < ref.find_first_of("/?")) return {};  // has a scheme
    std::string out;
    if (ref.front() != '/') {
        std::string_view base = page_target.substr(0, page_target.find('?'));
        out.assign(base.substr(0, base.rfind('/') + 1));
        if (out.empty()) out = "/";
    }
    // Undo the one entity that is common in attribute values.
    for (size_t i = 0; i < ref.size(); ++i) {
        if (ref[i] == '&' && ref.substr(i, 5) == "&amp;") {
            out += '&';
            i += 4;
        } else {
            out += ref[i];
        }
    }
    for (char c : out)
        if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return {};  // cannot go on a request line
    return out;
}

}  // namespace

std::vector<std::string> extract_assets(std::string_view html, std::string_view page_target) {
    std::vector<std::string> out;
    size_t i = 0;
    while (out.size() < kMaxAssets) {
        size_t lt = html.find('<', i);
        if (lt == std::string_view::npos) break;
        if (html.substr(lt, 4) == "<!--") {
            size_t end = html.find("-->", lt + 4);
            if (end == std::string_view::npos) break;
            i = end + 3;
            continue;
        }
        Tag t = read_tag(html, lt);
        i = std::max(t.end, lt + 1);
        std::string_view ref;
        if (iequals(t.name, "link") && has_token(t.rel, "stylesheet")) ref = t.href;
        else if (iequals(t.name, "script") || iequals(t.name, "img")) ref = t.src;
        if (iequals(t.name, "script")) {  // its content is not HTML
            size_t close = ifind(html, "</script", i);
            i = close == std::string_view::npos ? html.size() : close;
        }
        if (ref.empty()) continue;
        std::string target = resolve(ref, page_target);
        if (!target.empty() && std::find(out.begin(), out.end(), target) == out.end())
            out.push_back(std::move(target));
    }
    return out;
}

std::vector<std::string> fixed_assets() { return {"/bootstrap.css", "/servers.jpg"}; }

}  // namespace kiln::bench
