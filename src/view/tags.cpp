// HTML-producing helpers of kiln/view.hpp: raw, link_to, csrf_field, form_open.
#include <kiln/escape.hpp>
#include <kiln/view.hpp>

namespace kiln {
inline namespace helpers {

Html raw(std::string_view markup) { return Html::trusted(std::string(markup)); }

Html link_to(std::string_view href, std::string_view text) {
    std::string out = "<a href=\"";
    append_safe_url(out, href);
    out += "\">";
    append_html_escaped(out, text);
    out += "</a>";
    return Html::trusted(std::move(out));
}

Html csrf_field(std::string_view token) {
    std::string out = "<input type=\"hidden\" name=\"";
    out += kCsrfField;
    out += "\" value=\"";
    append_html_escaped(out, token);
    out += "\">";
    return Html::trusted(std::move(out));
}

Html form_open(std::string_view action, std::string_view csrf_token, std::string_view method) {
    std::string upper;
    for (char c : method) upper += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    std::string out = "<form action=\"";
    append_safe_url(out, action);
    if (upper == "GET") {
        out += "\" method=\"get\">";
        return Html::trusted(std::move(out));
    }
    out += "\" method=\"post\">";
    if (upper != "POST") {
        out += "<input type=\"hidden\" name=\"";
        out += kMethodField;
        out += "\" value=\"";
        append_html_escaped(out, upper);
        out += "\">";
    }
    out += csrf_field(csrf_token).str();
    return Html::trusted(std::move(out));
}

}  // namespace helpers
}  // namespace kiln
