#include <kiln/escape.hpp>

namespace kiln {

void append_html_escaped(std::string& out, std::string_view text) {
    size_t run = 0;  // start of the current run of bytes that need no escaping
    for (size_t i = 0; i < text.size(); ++i) {
        std::string_view rep;
        switch (text[i]) {
            case '&': rep = "&amp;"; break;
            case '<': rep = "&lt;"; break;
            case '>': rep = "&gt;"; break;
            case '"': rep = "&quot;"; break;
            case '\'': rep = "&#39;"; break;
            default: continue;
        }
        out.append(text.substr(run, i - run));
        out.append(rep);
        run = i + 1;
    }
    out.append(text.substr(run));
}

void append_js_string(std::string& out, std::string_view text, std::string_view quote) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    out.append(quote);
    size_t run = 0;  // start of the current run of bytes that need no escaping
    for (size_t i = 0; i < text.size(); ++i) {
        const auto b = static_cast<unsigned char>(text[i]);
        std::string_view rep;
        char code[7] = {'\\', 'u', '0', '0', kHex[b >> 4], kHex[b & 15], 0};  // backslash u 0 0 hex hex
        size_t width = 1;
        switch (b) {
            case '\\': rep = "\\\\"; break;
            case '/': rep = "\\/"; break;  // no "</script", no "*/" ending a comment, no regex end
            case '\n': rep = "\\n"; break;
            case '\r': rep = "\\r"; break;
            case '\t': rep = "\\t"; break;
            // Quotes of every kind (the literal may sit in any of them), HTML's specials,
            // and '$' (no "${" if the literal lands in a template string).
            case '"': case '\'': case '`': case '<': case '>': case '&': case '$': rep = code; break;
            case 0xE2:  // U+2028 and U+2029 end a line in older JavaScript
                if (i + 2 < text.size() && text[i + 1] == '\x80' &&
                    (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
                    rep = text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
                    width = 3;
                    break;
                }
                continue;
            default:
                if (b >= 0x20) continue;
                rep = code;  // other control bytes
        }
        out.append(text.substr(run, i - run));
        out.append(rep);
        i += width - 1;
        run = i + 1;
    }
    out.append(text.substr(run));
    out.append(quote);
}

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    append_html_escaped(out, text);
    return out;
}

}  // namespace kiln
