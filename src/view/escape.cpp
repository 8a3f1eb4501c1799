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

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    append_html_escaped(out, text);
    return out;
}

}  // namespace kiln
