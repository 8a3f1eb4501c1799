#include "kilnc/html_state.hpp"

#include <algorithm>

namespace kiln::kilnc {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

void keep_last(std::string& s, char c, size_t n) {
    s += c;
    if (s.size() > n) s.erase(0, s.size() - n);
}

// Attributes whose value the browser reads as one URL (and may follow or run). Lists of
// URLs (srcset, ping) are plain attributes: their URLs only fetch images or receive a
// POST, never run a script, and percent-encoding would break their separators.
bool is_url_attribute(std::string_view name) {
    for (std::string_view a : {"href", "src", "action", "formaction", "cite", "poster", "background", "data",
                               "codebase", "longdesc", "usemap", "manifest", "icon", "lowsrc", "dynsrc", "archive",
                               "classid", "profile"})
        if (name == a) return true;
    return false;
}

// Attributes that a client-side library evaluates as JavaScript: Alpine (x-on:click,
// @click, x-data, x-init...), Vue (v-on:, v-bind:, :href, #slot), htmx (hx-on*, and
// its data-hx- spelling), AngularJS (ng-*, ng:*, ng_*, and data- before them),
// Knockout (data-bind). Not Alpine's x-transition classes, WebKit's x-webkit-airplay,
// or SVG's font attributes (v-alphabetic...).
bool runs_in_a_library(std::string_view name, bool in_svg) {
    if (name.starts_with("x-transition") || name.starts_with("x-webkit-") || (in_svg && name.starts_with("v-")))
        return false;
    for (std::string_view p : {"@", ":", "#", "x-", "v-", "ng-", "ng:", "ng_", "data-ng-", "data-ng:", "data-ng_",
                               "hx-on", "data-hx-on"})
        if (name.starts_with(p)) return true;
    return name == "data-bind";
}

// htmx's hx-vals and hx-vars: JSON, or JavaScript after "js:", read as a script.
bool holds_script_values(std::string_view name) {
    return name == "hx-vals" || name == "hx-vars" || name == "data-hx-vals" || name == "data-hx-vars";
}

// The schemes a value may follow (the ones is_safe_href and link_to let through).
bool is_safe_scheme(std::string_view s) { return s == "http" || s == "https" || s == "mailto" || s == "tel"; }

// What a character reference in an attribute value stands for, as far as kilnc's
// scanners care: its ASCII bytes, "\x80" for any other character, empty if it is no
// reference kilnc knows (`known` false). Every name HTML decodes to ASCII is here
// (from the WHATWG table, case and all); only the legacy few count without their ';'
// (and then not before '=': a browser leaves "&amp=" in a value as written).
struct Decoded {
    char bytes[3] = {};
    uint8_t size = 0;
    bool known = false;
    std::string_view view() const { return {bytes, size}; }
};

Decoded decoded(std::string_view bytes) {
    Decoded d;
    d.size = static_cast<uint8_t>(std::min<size_t>(bytes.size(), 3));
    for (size_t i = 0; i < d.size; ++i) d.bytes[i] = bytes[i];
    d.known = true;
    return d;
}

Decoded decode_reference(std::string_view ref, char next) {
    const bool semicolon = next == ';';
    if (starts_with(ref, "&#")) {
        bool hex = ref.size() > 2 && (ref[2] == 'x' || ref[2] == 'X');
        long v = 0;
        size_t i = hex ? 3 : 2, digits = 0;
        for (; i < ref.size(); ++i, ++digits) {
            char c = lower(ref[i]);
            int d = is_digit(c) ? c - '0' : (hex && c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
            if (d < 0) return {};
            if (v < 0x110000) v = v * (hex ? 16 : 10) + d;
        }
        if (digits == 0) return {};
        // The JavaScript scanner must see JavaScript's own line ends and its no-break
        // space as such (UTF-8); any other character past ASCII is one byte past it.
        if (v == 0x2028) return decoded("\xe2\x80\xa8");
        if (v == 0x2029) return decoded("\xe2\x80\xa9");
        if (v == 0xa0) return decoded("\xc2\xa0");
        const char byte = (v > 0 && v < 0x80) ? static_cast<char>(v) : '\x80';
        return decoded(std::string_view(&byte, 1));
    }
    static constexpr std::pair<std::string_view, std::string_view> kNamed[] = {
        {"quot", "\""},  {"QUOT", "\""},    {"apos", "'"},     {"amp", "&"},      {"AMP", "&"},
        {"lt", "<"},      {"LT", "<"},        {"gt", ">"},       {"GT", ">"},       {"colon", ":"},
        {"sol", "/"},     {"bsol", "\\"},   {"grave", "`"},    {"DiacriticalGrave", "`"},
        {"lpar", "("},    {"rpar", ")"},      {"semi", ";"},     {"num", "#"},      {"quest", "?"},
        {"equals", "="},  {"lsqb", "["},      {"lbrack", "["},   {"rsqb", "]"},     {"rbrack", "]"},
        {"lcub", "{"},    {"lbrace", "{"},    {"rcub", "}"},     {"rbrace", "}"},   {"Tab", "\t"},
        {"NewLine", "\n"}, {"dollar", "$"},  {"excl", "!"},     {"percnt", "%"},   {"ast", "*"},
        {"midast", "*"},  {"plus", "+"},      {"comma", ","},    {"period", "."},   {"commat", "@"},
        {"Hat", "^"},     {"lowbar", "_"},    {"UnderBar", "_"}, {"verbar", "|"},   {"vert", "|"},
        {"VerticalLine", "|"}, {"fjlig", "fj"}, {"nbsp", "\xc2\xa0"},
    };
    std::string_view name = ref.substr(1);
    if (!semicolon) {  // the legacy names, unless '=' follows
        if (next == '=') return {};
        for (std::string_view legacy : {"quot", "QUOT", "amp", "AMP", "lt", "LT", "gt", "GT", "nbsp"})
            if (name == legacy) return decode_reference(ref, ';');
        return {};
    }
    for (auto [n, bytes] : kNamed)
        if (name == n) return decoded(bytes);
    return {};
}

Verdict refuse(std::string message) { return {Escaper::Text, std::move(message)}; }

// A <script> type the browser runs as JavaScript, or reads as JSON (its value: trimmed,
// lower case; parameters make it neither). Anything else is data for some other reader.
std::string_view trimmed(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

bool runs_as_script(std::string_view type) {
    type = trimmed(type);
    // (Not "importmap" or "speculationrules": a value there would choose where code
    // comes from, or what the browser fetches and prerenders.)
    for (std::string_view t : {"", "module", "application/json", "application/ld+json",
                               "text/javascript", "application/javascript", "application/ecmascript",
                               "application/x-ecmascript", "application/x-javascript", "text/ecmascript",
                               "text/jscript", "text/livescript", "text/x-ecmascript", "text/x-javascript"})
        if (type == t) return true;
    return false;
}

// The URL written so far fixes its origin: a path has begun after a literal
// authority ("https://cdn.example/", "//cdn.example/"), or the URL is a path of the
// page's own origin ("/assets/", "js/": a first segment written, so that no value can
// make it "//host"). A value ('\x01') before that could name a host. With a scheme,
// only "scheme://host/" counts (on a page of another scheme "https:x" is a host).
bool origin_written(std::string_view url) {
    while (!url.empty() && static_cast<unsigned char>(url.front()) <= 0x20) url.remove_prefix(1);
    std::string clean(url);
    for (char& c : clean)
        if (c == '\\') c = '/';  // as URL parsers read it in http(s) URLs
    std::string_view u = clean;
    size_t colon = u.find(':');
    const bool scheme = colon != u.npos && u.substr(0, colon).find_first_of("/?#\x01") == u.npos;
    if (scheme) u.remove_prefix(colon + 1);
    if (starts_with(u, "//")) {
        size_t path = u.find_first_of("/?#", 2);
        size_t value = u.find('\x01');
        return path != u.npos && path > 2 && (value == u.npos || value > path);
    }
    if (scheme || u.empty() || u[0] == '\x01') return false;
    if (u[0] == '/') return u.size() > 1 && u[1] != '/' && u[1] != '\x01';  // "/x": the first segment written
    return true;  // "js/...": relative to the page
}

Verdict unquoted(const std::string& attr) {
    return refuse("unquoted attribute value: a value in " + attr + "=<%= %> could add attributes; quote it: " + attr +
                  "=\"<%= ... %>\"");
}

const char kStylesheetOrigin[] =
    "a value before the path of a <link rel=stylesheet> href would choose where the page's style comes from "
    "(a stylesheet can restyle the page and read its attributes out, which is why <style> takes no values): "
    "write the origin or a path in the template (href=\"/assets/<%= name %>\"), or print a URL you vouch for "
    "with <%== %>";

// Whether a <link>'s rel or as, as read (lower case, its first 64 bytes; '\x01' for a
// value), holds the token `word`, or a value, a character reference or the bytes past 64
// may make it.
bool may_hold_token(std::string_view list, std::string_view word) {
    if (list.find_first_of("\x01&") != list.npos || list.size() >= 64) return true;
    size_t i = 0;
    while (i < list.size()) {
        while (i < list.size() && is_space(list[i])) ++i;
        size_t b = i;
        while (i < list.size() && !is_space(list[i])) ++i;
        if (list.substr(b, i - b) == word) return true;
    }
    return false;
}

const char kRefresh[] =
    "a value in the content of a refresh <meta> (http-equiv=\"refresh\"): a browser goes to the URL it names, "
    "which no escaper makes safe; redirect from the handler (res.redirect) instead";

const char kCharRef[] =
    "a value right after '&' would be read as part of a character reference: end the reference with ';'";

}  // namespace

HtmlState HtmlState::lost() {
    HtmlState h;
    h.mode_ = Mode::Lost;
    return h;
}

void HtmlState::feed(std::string_view literal, std::vector<LateError>& late) {
    for (char c : literal) {
        // A browser's input stream makes CR LF and a lone CR one LF before it reads
        // anything (a '\' then CR LF continues a JavaScript string, as '\' LF does).
        if (c == '\n' && after_cr_) {
            after_cr_ = false;
            continue;
        }
        after_cr_ = c == '\r';
        if (after_cr_) c = '\n';
        if (noscript_ && noscript_parts(c)) {
            *this = lost();
            return;
        }
        step(c, late);
    }
}

// A <noscript> is followed as markup, which a browser without scripts reads; one with
// scripts reads its content as raw text up to the first "</noscript". Where that comes
// while the markup reading is not at an end tag of its own (in an attribute value, a
// comment, a script), the two readings part: true when c completes it there.
bool HtmlState::noscript_parts(char c) {
    static constexpr std::string_view kEnd = "</noscript";
    if (lower(c) != kEnd[noscript_match_]) noscript_match_ = 0;
    if (lower(c) != kEnd[noscript_match_]) return false;
    if (noscript_match_ == 0) noscript_lt_text_ = mode_ == Mode::Text || mode_ == Mode::TagOpen;  // (TagOpen: "<<")
    if (++noscript_match_ < kEnd.size()) return false;
    noscript_match_ = 0;
    return !noscript_lt_text_;
}

void HtmlState::step(char c, std::vector<LateError>& late) {
    switch (mode_) {
        case Mode::Text:
            if (c == '<') mode_ = Mode::TagOpen;
            return;
        case Mode::TagOpen:
            if (is_alpha(c)) {
                mode_ = Mode::TagName;
                end_tag_ = false;
                tag_.assign(1, lower(c));
            } else if (c == '/') {
                mode_ = Mode::EndTagOpen;
            } else if (c == '!') {
                mode_ = Mode::Declaration;
                recent_.clear();
            } else if (c == '?') {
                mode_ = Mode::BogusComment;
            } else {
                mode_ = Mode::Text;  // "a < b": not a tag; c may be another '<'
                step(c, late);
            }
            return;
        case Mode::EndTagOpen:
            if (is_alpha(c)) {
                mode_ = Mode::TagName;
                end_tag_ = true;
                tag_.assign(1, lower(c));
            } else {
                mode_ = c == '>' ? Mode::Text : Mode::BogusComment;
            }
            return;
        case Mode::TagName:
            if (is_space(c) || c == '/') mode_ = Mode::BeforeAttrName, slash_ = c == '/';
            else if (c == '>') close_tag();
            else tag_ += lower(c);
            return;
        case Mode::BeforeAttrName:
            if (c == '>') close_tag();
            else if (!is_space(c) && c != '/') mode_ = Mode::AttrName, attr_.assign(1, lower(c));
            slash_ = c == '/';  // "/ >" closes nothing
            return;
        case Mode::AttrName:
        case Mode::AfterAttrName:
            slash_ = c == '/';
            if (c == '=') mode_ = Mode::BeforeAttrValue;
            else if (c == '>') close_tag();
            else if (c == '/') mode_ = Mode::BeforeAttrName;
            else if (is_space(c)) mode_ = Mode::AfterAttrName;
            else if (mode_ == Mode::AttrName) attr_ += lower(c);
            else mode_ = Mode::AttrName, attr_.assign(1, lower(c));  // `<input disabled name=..`
            return;
        case Mode::BeforeAttrValue:
            if (c == '"' || c == '\'') {
                start_value(c);
            } else if (c == '>') {
                attr_.clear();
                close_tag();
            } else if (!is_space(c)) {
                start_value(0);
                step(c, late);  // the value's first byte
            }
            return;
        case Mode::AttrValue:
            if (collects_type() && !(quote_ ? c == quote_ : is_space(c) || c == '>') && type_.size() < 64)
                type_ += lower(c);
            if (quote_ ? c == quote_ : is_space(c) || c == '>') {
                end_attr(late);
                if (c == '>') close_tag();
                else mode_ = Mode::BeforeAttrName;
            } else {
                value_byte(c, late);
            }
            return;
        case Mode::Declaration:  // after "<!": a comment, CDATA, or a declaration up to '>'
            recent_ += c;
            if (recent_ == "--") {
                mode_ = Mode::Comment;
                recent_.clear();
            } else if (recent_ == "[CDATA[") {
                mode_ = Mode::Cdata;
                recent_.clear();
            } else if (!starts_with("--", recent_) && !starts_with("[CDATA[", recent_)) {
                mode_ = c == '>' ? Mode::Text : Mode::BogusComment;
                recent_.clear();
            }
            return;
        case Mode::Comment:
            // Ends at "-->" or "--!>", or right away at "<!-->" and "<!--->" (recent_ holds
            // fewer than two bytes only at the start; later it keeps the last three).
            if (c == '>' &&
                (recent_.empty() || recent_ == "-" || ends_with(recent_, "--") || ends_with(recent_, "--!"))) {
                mode_ = Mode::Text;
                recent_.clear();
            } else {
                keep_last(recent_, c, 3);
            }
            return;
        case Mode::Cdata:
            // In foreign content (<svg>, <math>) a CDATA section ends at "]]>"; in HTML
            // it is a bogus comment, ended by its first '>'. Where that '>' is not the
            // one of "]]>" inside an <svg> or <math>, kilnc cannot tell which it is.
            if (c == '>') {
                if (ends_with(recent_, "]]") || (svg_ == 0 && math_ == 0)) {
                    mode_ = Mode::Text;
                    recent_.clear();
                } else {
                    *this = lost();
                }
            } else {
                keep_last(recent_, c, 2);
            }
            return;
        case Mode::BogusComment:
            if (c == '>') mode_ = Mode::Text;
            return;
        case Mode::RawText: raw_text(c); return;
        case Mode::Lost: return;
    }
}

// Inside an <svg> or <math>, start tags are read as foreign content: <script>, <style>,
// <title> and the other raw-text names are elements like any other, whose text is
// markup, and `/>` closes an element. Unless the tag is one that leaves foreign
// content (<p>, <div>, ...), which kilnc does not follow: the content is only "maybe
// foreign", and counting an <svg> the browser has closed only makes kilnc stricter.
//
// The other way round must not happen: inside an HTML integration point (<desc>,
// <foreignObject>; <mi>, <mo>, <mn>, <ms>, <mtext>, <annotation-xml>) tags are HTML,
// and while an HTML element is open there a browser ignores </svg> and </math>.
// kilnc keeps the elements opened there (a few names deep); where it cannot tell
// (a misnested end tag, too many, a tag that is foreign again), it stops counting:
// the content stays maybe foreign for good.
namespace {
bool is_integration_point(std::string_view tag) {
    for (std::string_view t : {"desc", "foreignobject", "mi", "mo", "mn", "ms", "mtext", "annotation-xml"})
        if (tag == t) return true;
    return false;
}

bool is_void(std::string_view tag) {
    for (std::string_view t : {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
                               "track", "wbr", "param", "keygen", "basefont", "bgsound", "frame"})
        if (tag == t) return true;
    return false;
}
}  // namespace

void HtmlState::pin_foreign() {
    if (svg_) svg_ = kDeep;
    if (math_) math_ = kDeep;
    in_point_ = false;
    point_tag_.clear();
    point_html_.clear();
}

void HtmlState::count_foreign(bool self_closing) {
    const bool root = tag_ == "svg" || tag_ == "math";
    if (in_point_) {
        if (!end_tag_) {
            if (root || is_integration_point(tag_) || point_html_.size() + tag_.size() + 1 > 64) {
                if (root) (tag_ == "svg" ? svg_ : math_) = kDeep;  // (<math><mi><svg>: an svg too)
                return pin_foreign();
            }
            if (!is_void(tag_)) point_html_.append(tag_).push_back(' ');  // `<b/>` opens a <b> in HTML
            return;
        }
        if (!point_html_.empty()) {  // only the innermost may end here
            if (!ends_with(point_html_, " " + tag_ + " ") && point_html_ != tag_ + " ") return pin_foreign();
            point_html_.resize(point_html_.size() - tag_.size() - 1);
            return;
        }
        // Only the point's own end tag leaves it, or </svg> / </math> closing it with
        // the rest. Another point's (a stray </mi> in a <desc>) a browser ignores.
        if (is_integration_point(tag_) && tag_ != point_tag_) return pin_foreign();
        if (!root && tag_ != point_tag_) return;  // (a browser may close more: kilnc stays stricter)
        in_point_ = false;
        point_tag_.clear();
        if (!root) return;
    } else if ((svg_ || math_) && !end_tag_ && !self_closing && is_integration_point(tag_)) {
        in_point_ = true;
        point_tag_ = tag_;
        return;
    }
    uint8_t* open = tag_ == "svg" ? &svg_ : tag_ == "math" ? &math_ : nullptr;
    if (!open || *open == kDeep) return;
    if (!end_tag_ && !self_closing) ++*open;
    else if (end_tag_ && *open > 0) --*open;
}

void HtmlState::close_tag() {
    const bool self_closing = slash_;
    slash_ = false;
    count_foreign(self_closing);
    // 1: a <select> is open; 2: a <template> was opened in it, where </select> is
    // ignored: kilnc no longer knows, and keeps it open.
    if (tag_ == "select" && !end_tag_) select_ = std::max<uint8_t>(select_, 1);
    else if (select_ == 1 && ((tag_ == "select" && end_tag_) || (tag_ == "textarea" && !end_tag_))) select_ = 0;
    else if (select_ && tag_ == "template" && !end_tag_) select_ = 2;
    type_read_ = false;
    meta_refresh_ = false;
    meta_value_ = kNone;
    link_ = 0;
    link_value_ = kNone;
    Raw raw = Raw::None;
    if (!end_tag_) {
        if (tag_ == "script") raw = Raw::Script;
        else if (tag_ == "style") raw = Raw::Style;
        else if (tag_ == "title" || tag_ == "textarea") raw = Raw::Rcdata;
        else if (tag_ == "xmp" || tag_ == "iframe" || tag_ == "noembed" || tag_ == "noframes")
            raw = Raw::Rawtext;
        else if (tag_ == "plaintext") raw = Raw::Plaintext;
        else if (tag_ == "noscript") noscript_ = true;  // markup, and raw text with scripts: see noscript_parts
    } else if (tag_ == "noscript") {
        noscript_ = false;  // (a nested one's end tag ends both readings' first)
        noscript_match_ = 0;
    }
    end_tag_ = false;
    attr_.clear();
    if (raw == Raw::None) {
        mode_ = Mode::Text;
        tag_.clear();
        module_script_ = false;
        return;
    }
    mode_ = Mode::RawText;
    raw_ = raw;
    recent_.clear();
    js_ = {};
    js_.module(raw == Raw::Script && module_script_);
    module_script_ = false;
    script_comment_ = false;
    if (raw != Raw::Script) foreign_script_ = false;
    // An HTML parser reads raw text up to the end tag; in foreign content, or after
    // `<script/>` there, what follows is markup. Both agree only on plain text.
    ambiguous_ = self_closing || svg_ > 0 || math_ > 0 || (select_ && raw != Raw::Script);
}

// In ambiguous raw text, a '<' that starts markup (a tag, an end tag other than the
// element's own, "<!", "<?"): the two readings part there.
bool HtmlState::markup_in_ambiguous_raw_text() const {
    size_t lt = recent_.rfind('<');
    if (lt == recent_.npos || lt + 1 == recent_.size()) return false;
    std::string_view tail = std::string_view(recent_).substr(lt + 1);
    if (is_alpha(tail[0]) || tail[0] == '!' || tail[0] == '?') return true;
    if (tail[0] != '/' || tail.size() == 1) return false;
    return !is_alpha(tail[1]) || !starts_with(tag_, tail.substr(1));  // "</" then its own name, so far
}

// The body of a raw-text element ends only at "</name" followed by a space, '/' or '>'
// (any case); markup and character references inside it are not markup.
void HtmlState::raw_text(char c) {
    const bool delimiter = is_space(c) || c == '/' || c == '>';
    const bool end_tag = ends_with(recent_, tag_) && recent_.size() >= tag_.size() + 2 &&
                         std::string_view(recent_).substr(recent_.size() - tag_.size() - 2, 2) == "</";
    if (raw_ != Raw::Plaintext && delimiter && end_tag) {
        raw_ = Raw::None;
        recent_.clear();
        js_ = {};
        script_comment_ = false;
        foreign_script_ = false;
        ambiguous_ = false;
        end_tag_ = true;
        if (c == '>') {
            close_tag();  // (which also counts it inside an <svg>'s <foreignObject>)
        } else {
            mode_ = Mode::BeforeAttrName;  // the end tag's (ignored) attributes
        }
        return;
    }
    if (ambiguous_) {  // plain text or lost: nothing to follow in between
        keep_last(recent_, lower(c), 12);
        if (markup_in_ambiguous_raw_text()) *this = lost();
        return;
    }
    if (raw_ == Raw::Script) {
        // "<!--" then "<script" inside a script puts the HTML parser in its "double
        // escaped" state, where "</script>" no longer ends the element. kilnc does not
        // follow that: values after it are refused, which is safe.
        if (script_comment_ && delimiter && ends_with(recent_, "<script")) {
            *this = lost();
            return;
        }
        if (!foreign_script_) js_.feed(c);
    }
    keep_last(recent_, lower(c), 12);  // "</noscript" and "<!--" fit
    if (raw_ == Raw::Script) {
        if (ends_with(recent_, "<!--")) script_comment_ = true;
        else if (ends_with(recent_, "-->")) script_comment_ = false;
    }
}

void HtmlState::start_value(char quote) {
    mode_ = Mode::AttrValue;
    quote_ = quote;
    std::string_view name = attr_;
    if (starts_with(name, "xlink:")) name.remove_prefix(6);  // SVG's xlink:href
    // A lazy loader's data-src or data-href (or data-url) becomes that attribute: a URL,
    // checked as one (a consent manager's <script type="text/plain" data-src> too).
    if (name == "data-src" || name == "data-href") name.remove_prefix(5);
    else if (name == "data-url" || name == "data-uri") name = "href";
    // In an <svg>, <set to="..."> and <animate> may give an href its value: a URL.
    const bool animates = svg_ > 0 && (name == "to" || name == "from" || name == "by");
    if (name == "xmlns" || starts_with(name, "xmlns:") || is_url_attribute(name) || animates) attr_kind_ = Attr::Url;
    else if (svg_ > 0 && name == "values") attr_kind_ = Attr::UrlList;
    else if (starts_with(name, "on") || holds_script_values(name)) attr_kind_ = Attr::Js;  // every event handler
    else if (name == "style") attr_kind_ = Attr::Css;
    else if (name == "srcdoc") attr_kind_ = Attr::Html;
    else if (runs_in_a_library(name, svg_ > 0)) attr_kind_ = Attr::Library;
    else attr_kind_ = Attr::Plain;
    // Where code comes from: a value may not choose the origin of a script or of the
    // page's base URL, whatever its scheme.
    // A <link>'s href, if its rel loads a stylesheet (before or after it: see end_attr).
    code_url_ = attr_kind_ == Attr::Url && ((tag_ == "script" && (name == "src" || name == "href")) ||
                                            (tag_ == "base" && name == "href") ||  // (an SVG script's is href)
                                            (tag_ == "link" && name == "href"));
    url_text_.clear();
    recent_.clear();
}

// A <script>'s first type attribute (a browser ignores a second), a <meta>'s http-equiv
// and a <link>'s rel and as: their values, read as they are written.
bool HtmlState::collects_type() const {
    return (tag_ == "script" && attr_ == "type" && !type_read_) || (tag_ == "meta" && attr_ == "http-equiv") ||
           (tag_ == "link" && (attr_ == "rel" || attr_ == "as"));
}

// This <link> may load a stylesheet: its rel says so, or it preloads one (as=style),
// or it has an event handler (the usual `onload="this.rel='stylesheet'"`).
bool HtmlState::link_style() const {
    constexpr uint8_t preloads_style = kLinkPreload | kLinkAsStyle;
    return (link_ & (kLinkStylesheet | kLinkHandler)) || (link_ & preloads_style) == preloads_style;
}

void HtmlState::end_attr(std::vector<LateError>& late) {
    HtmlState fresh;
    const bool type = tag_ == "script" && attr_ == "type" && !type_read_;
    fresh.foreign_script_ = foreign_script_ || (type && !runs_as_script(type_));
    fresh.module_script_ = module_script_ || (type && trimmed(type_) == "module");
    fresh.type_read_ = type_read_ || type;
    // A refresh: the browser goes to the URL its content names after the delay, which
    // no escaper makes safe (a quote or "url=" in the value hides its scheme).
    // (An http-equiv a value writes may be one, as may one with a character reference:
    // "&#82;efresh" is decoded.)
    fresh.meta_refresh_ = meta_refresh_ || (tag_ == "meta" && attr_ == "http-equiv" &&
                                            (trimmed(type_) == "refresh" || type_.find_first_of("\x01&") != type_.npos));
    fresh.meta_value_ = meta_value_;
    if (fresh.meta_refresh_ && !meta_refresh_ && meta_value_ != kNone)
        late.push_back({meta_value_, kRefresh});
    // A stylesheet's origin, as a script's: a rel, as or handler after the href judges
    // its value late.
    fresh.link_ = link_;
    if (tag_ == "link" && attr_ == "rel" && may_hold_token(type_, "stylesheet")) fresh.link_ |= kLinkStylesheet;
    if (tag_ == "link" && attr_ == "rel" && may_hold_token(type_, "preload")) fresh.link_ |= kLinkPreload;
    if (tag_ == "link" && attr_ == "as" && may_hold_token(type_, "style")) fresh.link_ |= kLinkAsStyle;
    if (tag_ == "link" && starts_with(attr_, "on")) fresh.link_ |= kLinkHandler;
    fresh.link_value_ = link_value_;
    if (fresh.link_style() && !link_style() && link_value_ != kNone) late.push_back({link_value_, kStylesheetOrigin});
    fresh.tag_ = std::move(tag_);
    fresh.end_tag_ = end_tag_;
    fresh.svg_ = svg_;
    fresh.math_ = math_;
    fresh.in_point_ = in_point_;
    fresh.point_tag_ = std::move(point_tag_);
    fresh.point_html_ = std::move(point_html_);
    fresh.select_ = select_;
    fresh.noscript_ = noscript_;
    fresh.noscript_match_ = noscript_match_;
    fresh.noscript_lt_text_ = noscript_lt_text_;
    fresh.after_cr_ = after_cr_;
    *this = std::move(fresh);  // forget everything about the value, so equal tags compare equal
}

// Attribute values are decoded before the browser reads them as a URL or a script, so
// the URL and script scanners see `&colon;` as ':'.
void HtmlState::value_byte(char c, std::vector<LateError>& late) {
    if (!recent_.empty()) {  // inside a character reference
        // A numeric one ends at the first byte that is not its digit, as browsers read
        // it ("&#58alert" is ":alert"); a named one takes letters and digits.
        const bool numeric = starts_with(recent_, "&#");
        const bool hex = numeric && recent_.size() > 2 && (recent_[2] == 'x' || recent_[2] == 'X');
        const bool more = !numeric ? is_alnum(c) || (c == '#' && recent_ == "&")
                          : recent_.size() == 2 ? is_digit(c) || c == 'x' || c == 'X'
                          : hex ? is_digit(c) || (lower(c) >= 'a' && lower(c) <= 'f')
                                : is_digit(c);
        if (more && numeric) {
            // Leading zeros change nothing, and past 32 bytes a number is no code
            // point anyway: neither is kept ("&#000...58;" is still ':').
            const bool zero = c == '0' && ends_with(recent_, "0") &&
                              recent_.find_first_not_of('0', hex ? 3 : 2) == recent_.npos;
            if (!zero && recent_.size() < 32) recent_ += c;
            return;
        }
        if (more && recent_.size() < 32) {  // (a longer name is none HTML knows)
            recent_ += c;
            return;
        }
        const bool semicolon = c == ';';
        const Decoded d = decode_reference(recent_, c);
        if (!d.known) {
            // A name kilnc does not know, ended by ';': HTML may know it (as a character
            // that is not ASCII), and an event handler's scanner could part from the
            // browser's there. Its values are refused from here on.
            if (semicolon && !numeric && recent_.size() > 1 && attr_kind_ == Attr::Js) unknown_reference_ = true;
            for (char r : recent_) decoded_byte(r, late);  // not a reference: its bytes as written
        }
        recent_.clear();
        if (d.known) {
            for (char b : d.view()) decoded_byte(b, late);
            if (semicolon) return;
        }
    }
    if (c == '&') recent_ = "&";
    else decoded_byte(c, late);
}

void HtmlState::decoded_byte(char c, std::vector<LateError>& late) {
    // Tabs and line ends are dropped by URL parsers: not kept. Past the bound the URL
    // is unknown ('\x01'), as after a value.
    if (code_url_ && c != '\t' && c != '\n' && c != '\r') url_text_ += url_text_.size() < 256 ? c : '\x01';
    if (attr_kind_ == Attr::Url) url_byte(c, late);
    else if (attr_kind_ == Attr::Js) js_.feed(c);
}

// Follows the start of a URL as the browser parses it: leading spaces and controls
// dropped, tabs and newlines ignored, then a scheme (a letter, then letters, digits,
// + - .) if a ':' ends it.
void HtmlState::url_byte(char c, std::vector<LateError>& late) {
    if (url_ == Url::Rest) return;
    if (url_ == Url::Start) {
        if (static_cast<unsigned char>(c) <= 0x20) return;
        url_ = Url::Scheme;
    }
    if (c == '\t' || c == '\n' || c == '\r') return;
    if (c == ':') {
        url_ = Url::Rest;
        if (scheme_value_ != kNone) {
            late.push_back({scheme_value_, "this value would be part of the URL's scheme (a ':' follows it): write "
                                           "the scheme in the template, as in " +
                                               attr_ + "=\"https://<%= host %>/\""});
            scheme_value_ = kNone;
        } else if (!scheme_.empty()) {
            unsafe_scheme_ = !is_safe_scheme(scheme_);
        }
        if (!unsafe_scheme_) scheme_.clear();  // kept for the message
        return;
    }
    bool first = scheme_.empty() && scheme_value_ == kNone;
    if (first ? is_alpha(c) : (is_alnum(c) || c == '+' || c == '-' || c == '.')) {
        if (scheme_.size() < 32) scheme_ += lower(c);
        return;
    }
    url_ = Url::Rest;  // no scheme: a relative URL
    scheme_.clear();
    scheme_value_ = kNone;
}

Verdict HtmlState::value() const {
    if (noscript_ && noscript_match_ > 0)
        return refuse("a value right after '<' or a part of \"</noscript\" inside a <noscript> could end it for a "
                      "browser with scripts, which reads its content as raw text: put a space between them");
    switch (mode_) {
        case Mode::Text:
            // Inside an <svg> or <math>, markup (a view, kiln::Html) would be read by rules
            // it was not judged by (a partial's <set to=...> animating an href); inside a
            // <noscript>, as raw text up to its first "</noscript" by a browser with
            // scripts, even in an attribute. Escaped as in an attribute, the same for
            // text, it does not compile.
            return {svg_ || math_ || noscript_ ? Escaper::Attr : Escaper::Text, {}};
        case Mode::TagOpen:
        case Mode::EndTagOpen:
        case Mode::TagName:
            return refuse("a value right after '<' would name an element: write the element's name in the template");
        case Mode::BeforeAttrName:
        case Mode::AttrName:
        case Mode::AfterAttrName:
            return refuse("a value inside the tag <" + tag_ +
                          "> would add attributes: write the attribute in the template and print only its value, "
                          "in quotes (with <% if %> around an optional attribute)");
        case Mode::BeforeAttrValue: return unquoted(attr_);
        case Mode::AttrValue: return attr_value();
        case Mode::Comment:
            return refuse("a value inside an HTML comment <!-- -->: move it out, or use a template comment <%# %>");
        case Mode::Declaration:
        case Mode::Cdata:
        case Mode::BogusComment: return refuse("a value inside a <!...> or <?...> declaration: move it out");
        case Mode::RawText: return raw_text_value();
        case Mode::Lost:
            return refuse("kilnc cannot follow the HTML context here (after a <script> holding \"<!--\" and "
                          "\"<script\", markup inside a <script>, <style> or <title> within an <svg> or <math>, a "
                          "\"</noscript\" inside an attribute, a comment or a script within a <noscript>, a "
                          "'>' inside <![CDATA[ there, or in a loop whose body keeps changing the context): "
                          "simplify that markup, or print the value with <%== %> if you vouch for it");
    }
    return {Escaper::Text, {}};
}

Verdict HtmlState::raw_text_value() const {
    // Where the readings differ, text escaped as in an attribute is text in both; a
    // script is not (an entity in it is decoded in foreign content, not in HTML).
    if (ambiguous_ && raw_ == Raw::Script)
        return refuse("a value inside a <script> within an <svg> or <math>, or after <script ... />: a browser may "
                      "read the script as markup there; pass the value in a data- attribute, and write "
                      "<script ...></script>");
    if (raw_ == Raw::Style)
        return refuse("a value inside <style> is not escaped by kilnc (CSS): set a class on the element "
                      "(class=\"<%= ... %>\"), or print a constant you vouch for with <%== %>");
    if (raw_ == Raw::Script && foreign_script_)
        return refuse("a value inside a <script> whose type is not JavaScript or JSON (a client-side template, read "
                      "as HTML by its library; an import map or speculation rules, which choose where code comes "
                      "from) is not escaped for what reads it: pass it in a data- attribute, or write it in the "
                      "template");
    // A negative number is printed " -1" (see append_js_number): after "</script" its
    // space ends the element; after "<script", in a "<!--", it starts the double
    // escaped state.
    if (raw_ == Raw::Script && (ends_with(recent_, "</script") || ends_with(recent_, "<script")))
        return refuse("a value right after \"<script\" or \"</script\" inside a script could end it, or change how "
                      "a browser reads it: write \"<\\/script\", or put the value apart");
    if (raw_ == Raw::Script) return js_value(Escaper::Js, "a script");
    // <title>, <textarea> and the like: text, but "</ti" + "tle" + ">" would end the
    // element early.
    size_t lt = recent_.rfind('<');
    if (lt != recent_.npos && starts_with("</" + tag_, std::string_view(recent_).substr(lt)))
        return refuse("a value right after '<' could end the <" + tag_ + "> element: put a space between them");
    // Escaped as in an attribute: the same for text, and markup (kiln::Html, which would
    // print as is) does not compile: inside <title> or <textarea> its tags show as text.
    return {Escaper::Attr, {}};
}

Verdict HtmlState::attr_value() const {
    if (!quote_) return unquoted(attr_);
    switch (attr_kind_) {
        case Attr::Plain:
            if (meta_refresh_ && tag_ == "meta" && attr_ == "content") return refuse(kRefresh);
            return {Escaper::Attr, {}};
        case Attr::Css:
            return refuse("a value inside a style attribute is not escaped by kilnc (CSS): set a class instead "
                          "(class=\"<%= ... %>\"), or print a constant you vouch for with <%== %>");
        case Attr::UrlList:
            return refuse("a value in an SVG animation's values list could make a link's href a javascript: URL, "
                          "which kilnc checks only as a whole value: write the list in the template");
        case Attr::Library:
            return refuse("a value inside attribute '" + attr_ +
                          "', which a client-side library runs as JavaScript (Alpine's x-* and @..., Vue's v-*, "
                          ":... and #..., htmx's hx-on, AngularJS's ng-*, Knockout's data-bind), is not escaped for "
                          "it: pass the value in a data- attribute and read it from there");
        case Attr::Html:
            return refuse("a value inside srcdoc (a whole HTML document) is not escaped by kilnc: serve that "
                          "document at its own URL and use src=\"<%= ... %>\"");
        case Attr::Url:
            if (!recent_.empty()) return refuse(kCharRef);
            if (code_url_ && tag_ == "link" && link_style() && !origin_written(url_text_))
                return refuse(kStylesheetOrigin);
            if (code_url_ && tag_ != "link" && !origin_written(url_text_))
                return refuse("a value before the path of a <" + tag_ + "> " + attr_ +
                              " would choose where code comes from: write the origin or a path in the template "
                              "(" + attr_ + "=\"/assets/<%= name %>\"), or print a URL you vouch for with <%== %>");
            if (url_ == Url::Start) return {Escaper::Url, {}};
            if (unsafe_scheme_)
                return refuse("a value inside a '" + scheme_ +
                              ":' URL: kilnc escapes values only in http, https, mailto and tel URLs; print the "
                              "whole URL as one value (" +
                              attr_ + "=\"<%= url %>\", an unsafe scheme becomes \"#\"), or call a script function "
                                      "from an event handler");
            return {Escaper::UrlPart, {}};
        case Attr::Js:
            if (!recent_.empty()) return refuse(kCharRef);
            if (unknown_reference_)
                return refuse("a value in an event handler after a character reference kilnc does not decode: write "
                              "that character itself, or as a numeric reference (&#...;)");
            return js_value(Escaper::JsAttr, "an event handler");
    }
    return {Escaper::Text, {}};
}

Verdict HtmlState::js_value(Escaper escaper, std::string_view where) const {
    switch (js_.spot()) {
        case JsSpot::String:
            return refuse("a value inside a quoted JavaScript string: kilnc prints a value in " + std::string(where) +
                          " as a whole string literal, quotes included, so remove the quotes around <%= %>");
        case JsSpot::Regex:
            return refuse("a value inside a JavaScript regular expression: build it with new RegExp(<%= ... %>)");
        case JsSpot::UnsureComment:
            return refuse("a value in a script after a \"-->\" that characters past ASCII begin its line with: "
                          "JavaScript may read them as spaces (U+00A0, U+3000...), which makes the rest of that line "
                          "a comment, or not; write plain spaces there");
        case JsSpot::Unsure:
            return refuse("a value on a line after a '/' that kilnc cannot tell a division from a regular "
                          "expression by (after ')', '}', \"++\", or of, yield or await, which may be names: `if (a) "
                          "/re/` is one, `f(a) / 2` the other), where the two readings can part; put the value on a "
                          "line of its own");
        case JsSpot::Code:
        case JsSpot::Comment: break;  // in a comment the literal is as harmless as the comment
    }
    return {escaper, {}};
}

void HtmlState::after_value(size_t value) {
    after_cr_ = false;  // an LF after the value is a line of its own
    if (mode_ == Mode::AttrValue && collects_type()) type_ += '\x01';  // not a type kilnc knows
    if (mode_ == Mode::AttrValue && tag_ == "meta" && attr_ == "content" && meta_value_ == kNone) meta_value_ = value;
    if (mode_ == Mode::AttrValue) {
        recent_.clear();  // a reference the value ends (refused above for URLs and scripts)
        // (A <link>'s rel may come later and make this a stylesheet's origin.)
        if (code_url_ && tag_ == "link" && link_value_ == kNone && !origin_written(url_text_)) link_value_ = value;
        if (code_url_ && url_text_.size() < 257) url_text_ += '\x01';  // what the value wrote is unknown
        if (attr_kind_ == Attr::Url && url_ != Url::Rest) {
            url_ = Url::Scheme;  // the value may have begun a scheme: see url_byte's ':'
            if (scheme_value_ == kNone) scheme_value_ = value;
        } else if (attr_kind_ == Attr::Js) {
            js_.after_value();
        }
    } else if (mode_ == Mode::RawText) {
        if (raw_ == Raw::Script && !foreign_script_) js_.after_value();
        recent_.clear();  // an escaped value holds no '<': no end tag spans it
    }
}

std::string HtmlState::where() const {
    switch (mode_) {
        case Mode::Text: return "element text";
        case Mode::AttrValue: return "the value of attribute '" + attr_ + "'";
        case Mode::Comment: return "an HTML comment";
        case Mode::Declaration:
        case Mode::Cdata:
        case Mode::BogusComment: return "a <!...> declaration";
        case Mode::RawText: return "a <" + tag_ + "> element";
        case Mode::Lost: return "HTML kilnc cannot follow";
        default: return tag_.empty() ? "a tag" : "the tag <" + tag_ + ">";
    }
}

std::string HtmlState::markup_error(std::string_view what) const {
    if (mode_ == Mode::Text && (svg_ || math_))
        return std::string(what) + " would be judged as HTML, but it stands inside an <svg> or <math> element, where a "
                                   "browser reads markup otherwise: keep the whole <svg> or <math> in one template";
    if (mode_ == Mode::Text && noscript_)
        return std::string(what) + " stands inside a <noscript>, which a browser with scripts reads as raw text up to "
                                   "its first \"</noscript\", wherever it comes in the markup: write that markup in "
                                   "the template";
    if (mode_ == Mode::Text) return {};
    return std::string(what) + " renders markup, which belongs in element text, not in " + where();
}

std::string HtmlState::end_error() const {
    if (mode_ == Mode::Text && (svg_ == kDeep || math_ == kDeep))
        return "the template ends where kilnc cannot tell whether an <svg> or <math> it opened has ended (an element "
               "left open or misnested inside its <desc>, <foreignObject> or <mi>, or more than two levels nested): "
               "close each element where it was opened";
    if (mode_ == Mode::Text && (svg_ || math_))
        return "the template ends inside an <svg> or <math> element: close it in the template that opens it "
               "(rendered into another template, the next markup would stand there)";
    if (mode_ == Mode::Text && noscript_)
        return "the template ends inside a <noscript>: close it in the template that opens it (rendered into "
               "another template, the next markup would stand there, read as raw text by a browser with scripts)";
    if (mode_ == Mode::Text) return {};
    return "the template ends in " + where() +
           ": close every tag, attribute, comment and script it opens, on every path through its code (rendered "
           "into another template, the next value would stand there)";
}

}  // namespace kiln::kilnc
