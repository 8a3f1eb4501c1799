// URL helpers of kiln/view.hpp (url_encode and the href scheme check behind link_to)
// and the URL escapers of kiln/escape.hpp that kilnc's generated code calls.
#include <kiln/escape.hpp>
#include <kiln/view.hpp>

namespace kiln {
namespace {

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != b[i]) return false;
    return true;
}

}  // namespace

inline namespace helpers {

std::string url_encode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    append_url_component(out, text);
    return out;
}

bool is_safe_href(std::string_view href) {
    // What a browser's URL parser sees: leading C0 controls and spaces dropped, tabs
    // and newlines removed anywhere ("java\tscript:" is still javascript:).
    size_t i = 0;
    while (i < href.size() && static_cast<unsigned char>(href[i]) <= 0x20) ++i;
    std::string scheme;
    for (; i < href.size(); ++i) {
        char c = href[i];
        if (c == '\t' || c == '\n' || c == '\r') continue;
        if (c == ':') break;
        bool ok = scheme.empty() ? is_alpha(c) : (is_alpha(c) || is_digit(c) || c == '+' || c == '-' || c == '.');
        if (!ok) return true;  // no scheme: a relative reference
        scheme += c;
    }
    if (i == href.size() || scheme.empty()) return true;  // no ':', or one first: a relative reference
    for (std::string_view allowed : {"http", "https", "mailto", "tel"})
        if (iequals(scheme, allowed)) return true;
    return false;
}

}  // namespace helpers

void append_url_component(std::string& out, std::string_view text) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    size_t run = 0;  // start of the current run of bytes kept as they are
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~') continue;
        auto b = static_cast<unsigned char>(c);
        const char enc[3] = {'%', kHex[b >> 4], kHex[b & 15]};
        out.append(text.substr(run, i - run));
        out.append(enc, 3);
        run = i + 1;
    }
    out.append(text.substr(run));
}

void append_safe_url(std::string& out, std::string_view url) {
    if (is_safe_href(url)) append_html_escaped(out, url);
    else out += '#';
}

}  // namespace kiln
