// Fuzzes the context escapers kilnc's generated code calls (kiln/view.hpp append_attr,
// append_url, append_url_part, append_js, append_js_attr, and append for text): the
// input is one value, printed into every context, and each result is decoded back the
// way a browser reads that context (entity decoding for text and attributes, then the
// URL's scheme; percent-decoding for URL parts; a JS string-literal decoder for scripts)
// and must give the value back, or "#" for a URL whose scheme is refused. No result may
// hold its context's terminator: '<' in text, a quote in an attribute, "</script", a
// line break or an unescaped quote in a JS literal, a URL delimiter in a URL part. The
// decoders here are written independently of the escapers. With 8 bytes or more, the
// first 8 are also a double and an int64 printed as JS numbers and URL parts.
#include <kiln/view.hpp>

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"

namespace {

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int hex_value(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

// HTML character-reference decoding as a browser does it for the references an escaper
// may write; any other '&' in escaped output is a failure (the browser might decode it).
std::string html_decode(std::string_view s) {
    static constexpr std::pair<std::string_view, char> kRefs[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}};
    std::string out;
    for (size_t i = 0; i < s.size();) {
        if (s[i] != '&') {
            out += s[i++];
            continue;
        }
        bool known = false;
        for (auto [ref, c] : kRefs) {
            if (s.substr(i, ref.size()) == ref) {
                out += c;
                i += ref.size();
                known = true;
                break;
            }
        }
        FUZZ_CHECK(known);
    }
    return out;
}

// Text and quoted attribute values: no markup, no quote of either kind, round trip.
void check_html(std::string_view value, std::string_view out) {
    FUZZ_CHECK(out.find_first_of("<>\"'") == std::string_view::npos);
    FUZZ_CHECK(html_decode(out) == value);
}

// The scheme a browser's URL parser finds (lower case), "" if it finds none: leading
// C0 controls and spaces dropped, tabs and newlines removed anywhere.
std::string url_scheme(std::string_view url) {
    size_t i = 0;
    while (i < url.size() && static_cast<unsigned char>(url[i]) <= 0x20) ++i;
    std::string scheme;
    for (; i < url.size(); ++i) {
        char c = url[i];
        if (c == '\t' || c == '\n' || c == '\r') continue;
        if (c == ':') return scheme;
        bool alpha = (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
        bool ok = alpha || (!scheme.empty() && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
        if (!ok) return "";
        scheme += lower(c);
    }
    return "";
}

std::string percent_decode(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out += s[i];
            continue;
        }
        FUZZ_CHECK(i + 2 < s.size() && is_hex(s[i + 1]) && is_hex(s[i + 2]));
        out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
        i += 2;
    }
    return out;
}

// A URL component: only unreserved bytes and %XX, and it decodes to the value.
void check_url_part(std::string_view value, std::string_view out) {
    for (char c : out) {
        bool alnum = (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
        FUZZ_CHECK(alnum || c == '-' || c == '.' || c == '_' || c == '~' || c == '%');
    }
    FUZZ_CHECK(percent_decode(out) == value);
}

void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

// A JS string literal "..." as a JS engine reads it. Checks on the way that nothing in
// it could end it, the script element or a line: no raw quote of any kind, '<', '>',
// '&', control byte or U+2028/2029, and every backslash starts a valid escape.
std::string js_decode(std::string_view lit) {
    FUZZ_CHECK(lit.size() >= 2 && lit.front() == '"' && lit.back() == '"');
    std::string_view body = lit.substr(1, lit.size() - 2);
    FUZZ_CHECK(body.find_first_of("\"'`<>&") == std::string_view::npos);
    FUZZ_CHECK(body.find("\xE2\x80\xA8") == std::string_view::npos);
    FUZZ_CHECK(body.find("\xE2\x80\xA9") == std::string_view::npos);
    std::string out;
    for (size_t i = 0; i < body.size(); ++i) {
        char c = body[i];
        FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20);
        if (c != '\\') {
            out += c;
            continue;
        }
        FUZZ_CHECK(i + 1 < body.size());
        char e = body[++i];
        switch (e) {
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'u': {
                FUZZ_CHECK(i + 4 < body.size());
                unsigned cp = 0;
                for (int k = 1; k <= 4; ++k) {
                    FUZZ_CHECK(is_hex(body[i + k]));
                    cp = cp * 16 + static_cast<unsigned>(hex_value(body[i + k]));
                }
                FUZZ_CHECK(cp < 0xD800 || cp > 0xDFFF);  // no surrogate halves
                append_utf8(out, cp);
                i += 4;
                break;
            }
            default: FUZZ_CHECK(!"unknown escape in a JS literal");
        }
    }
    return out;
}

bool contains_ci(std::string_view hay, std::string_view needle) {
    for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
        size_t k = 0;
        while (k < needle.size() && lower(hay[i + k]) == needle[k]) ++k;
        if (k == needle.size()) return true;
    }
    return false;
}

template <class F>
std::string printed(F&& print) {
    std::string out;
    print(out);
    return out;
}

// A number printed into a script must read back as the same number.
void check_js_number(std::string_view out, double expected) {
    FUZZ_CHECK(out.find_first_of("\"'<>&") == std::string_view::npos);
    if (std::isnan(expected)) {
        FUZZ_CHECK(out == "NaN");
        return;
    }
    if (std::signbit(expected)) {
        FUZZ_CHECK(!out.empty() && out[0] == ' ');  // `x -<%= n %>` never becomes `x --1`
        out.remove_prefix(1);
    }
    if (std::isinf(expected)) {
        FUZZ_CHECK(out == (expected > 0 ? "Infinity" : "-Infinity"));
        return;
    }
    std::string copy(out);
    char* end = nullptr;
    double back = std::strtod(copy.c_str(), &end);
    FUZZ_CHECK(end == copy.c_str() + copy.size());
    FUZZ_CHECK(back == expected && std::signbit(back) == std::signbit(expected));
}

void check_numbers(const uint8_t* data) {
    double d;
    int64_t n;
    std::memcpy(&d, data, 8);
    std::memcpy(&n, data, 8);
    check_js_number(printed([&](std::string& o) { kiln::view::append_js(o, d); }), d);
    check_js_number(printed([&](std::string& o) { kiln::view::append_js_attr(o, d); }), d);
    std::string js_int = printed([&](std::string& o) { kiln::view::append_js(o, n); });
    if (n < 0) {
        FUZZ_CHECK(js_int[0] == ' ');
        js_int.erase(0, 1);
    }
    int64_t back = 0;
    auto [p, ec] = std::from_chars(js_int.data(), js_int.data() + js_int.size(), back);
    FUZZ_CHECK(ec == std::errc() && p == js_int.data() + js_int.size() && back == n);

    char buf[64];
    auto [end, ec2] = std::to_chars(buf, buf + sizeof buf, d);
    FUZZ_CHECK(ec2 == std::errc());
    check_url_part(std::string_view(buf, static_cast<size_t>(end - buf)),
                   printed([&](std::string& o) { kiln::view::append_url_part(o, d); }));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view value(reinterpret_cast<const char*>(data), size);
    using namespace kiln::view;

    // Element text (the unchanged default) and quoted attribute values of both kinds.
    check_html(value, printed([&](std::string& o) { append(o, value); }));
    check_html(value, printed([&](std::string& o) { append_attr(o, value); }));

    // The whole value of a URL attribute: the value itself, or "#" if its scheme is not
    // one a value may have; after decoding, a browser finds no other scheme.
    std::string url = printed([&](std::string& o) { append_url(o, value); });
    std::string scheme = url_scheme(value);
    bool allowed = scheme.empty() || scheme == "http" || scheme == "https" || scheme == "mailto" || scheme == "tel";
    if (allowed) {
        check_html(value, url);
    } else {
        FUZZ_CHECK(url == "#");
    }

    // Later in a URL: one percent-encoded component ('&', '=', '?', '#', '/' all encoded).
    check_url_part(value, printed([&](std::string& o) { append_url_part(o, value); }));

    // A <script> body: a JS literal that decodes to the value and cannot end the element.
    std::string js = printed([&](std::string& o) { append_js(o, value); });
    FUZZ_CHECK(!contains_ci(js, "</script") && !contains_ci(js, "<!--"));
    FUZZ_CHECK(js_decode(js) == value);

    // An event handler: the same literal, attribute-escaped; the browser decodes the
    // attribute, then the JS.
    std::string handler = printed([&](std::string& o) { append_js_attr(o, value); });
    FUZZ_CHECK(handler.find_first_of("\"'<>") == std::string::npos);
    FUZZ_CHECK(js_decode(html_decode(handler)) == value);

    // Nothing at all: an empty optional prints nothing, or null in a script.
    const std::optional<std::string_view> none;
    FUZZ_CHECK(printed([&](std::string& o) { append_attr(o, none); }).empty());
    FUZZ_CHECK(printed([&](std::string& o) { append_js(o, none); }) == "null");

    if (size >= 8) check_numbers(data);
    return 0;
}
