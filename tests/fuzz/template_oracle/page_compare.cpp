#include "template_oracle/page_compare.hpp"

#include <gumbo.h>

#include <cstdint>
#include <memory>

#include "template_oracle/js_tokens.hpp"

namespace kiln::oracle {

namespace {

using Doc = std::unique_ptr<GumboOutput, void (*)(GumboOutput*)>;

Doc parse(std::string_view html) {
    GumboOptions options = kGumboDefaultOptions;
    options.max_errors = 0;
    return Doc(gumbo_parse_with_options(&options, html.data(), html.size()),
               [](GumboOutput* o) { gumbo_destroy_output(&kGumboDefaultOptions, o); });
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

std::string_view trim(std::string_view s) {  // ASCII white space and C0 controls, as the URL parser strips
    while (!s.empty() && static_cast<unsigned char>(s.front()) <= 0x20) s.remove_prefix(1);
    while (!s.empty() && static_cast<unsigned char>(s.back()) <= 0x20) s.remove_suffix(1);
    return s;
}

std::string_view str(const char* s) { return s ? std::string_view(s) : std::string_view(); }

std::string tag_name(const GumboElement& e) {
    if (e.tag != GUMBO_TAG_UNKNOWN) return gumbo_normalized_tagname(e.tag);
    GumboStringPiece piece = e.original_tag;
    gumbo_tag_from_original_text(&piece);
    return lower(std::string_view(piece.data ? piece.data : "", piece.length));
}

const GumboAttribute* attribute(const GumboElement& e, const char* name) {
    return gumbo_get_attribute(&e.attributes, name);
}

// A URL attribute's value as the URL parser reads it: without leading and trailing
// controls and spaces, and without tabs and line breaks anywhere.
std::string url_chars(std::string_view url) {
    std::string s;
    for (char c : trim(url))
        if (c != '\t' && c != '\n' && c != '\r') s += c;
    return s;
}

// The scheme of a URL (url_chars already applied) ("" for none), lower case.
std::string scheme_of(const std::string& s) {
    auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    if (s.empty() || !alpha(s[0])) return "";
    for (size_t i = 1; i < s.size(); ++i) {
        char c = s[i];
        if (c == ':') return lower(std::string_view(s).substr(0, i));
        if (!alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return "";
    }
    return "";
}

// Where a URL's code comes from: its scheme and host ("|" for a path on the page's own
// origin), as the URL parser reads them: tabs and line breaks dropped; in a URL of a
// special scheme (or none) '\\' is '/', and the host follows any run of slashes (none
// needed after a special scheme, which on a page of another scheme names a host).
std::string origin(std::string_view url) {
    std::string u = url_chars(url);
    std::string s = scheme_of(u);
    bool special = s.empty();
    for (std::string_view sp : {"http", "https", "ws", "wss", "ftp", "file"}) special = special || s == sp;
    std::string rest = u.substr(s.empty() ? 0 : s.size() + 1);
    if (special)
        for (char& c : rest)
            if (c == '\\') c = '/';
    size_t slashes = rest.find_first_not_of('/');
    if (slashes == rest.npos) slashes = rest.size();
    bool host = s.empty() ? slashes >= 2 : special || slashes >= 2;
    if (!host) return s + "|";
    size_t end = rest.find_first_of("/?#", slashes);
    return s + "|" + lower(std::string_view(rest).substr(slashes, end == rest.npos ? rest.npos : end - slashes));
}

bool url_attribute(std::string_view name, GumboNamespaceEnum ns, std::string_view tag) {
    if (name.substr(0, 6) == "xlink:") name.remove_prefix(6);  // (Gumbo names SVG's "href" already)
    for (std::string_view a : {"href", "src", "action", "formaction", "poster", "background", "cite", "codebase",
                               "classid", "archive", "longdesc", "usemap", "manifest", "icon", "lowsrc", "dynsrc",
                               "profile"})
        if (name == a) return true;
    if (name == "data") return tag == "object";
    // SVG's animation elements set another attribute (an href) to these.
    return ns == GUMBO_NAMESPACE_SVG && (name == "to" || name == "from" || name == "by" || name == "values");
}

bool html_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }

std::string_view skip_spaces(std::string_view s) {
    while (!s.empty() && html_space(s.front())) s.remove_prefix(1);
    return s;
}

// The URL a refresh <meta>'s content names (HTML's shared declarative refresh steps):
// the delay (digits and dots), then white space, ';' or ','; an optional "url=", an
// optional quote. Empty when there is none.
std::string_view refresh_url(std::string_view content) {
    std::string_view u = skip_spaces(content);
    size_t delay = u.find_first_not_of("0123456789.");
    if (delay == 0 || delay == u.npos) return {};
    u.remove_prefix(delay);
    if (!html_space(u.front()) && u.front() != ';' && u.front() != ',') return {};
    u = skip_spaces(u);
    if (!u.empty() && (u.front() == ';' || u.front() == ',')) u = skip_spaces(u.substr(1));
    if (lower(u.substr(0, 3)) == "url") {
        std::string_view rest = skip_spaces(u.substr(3));
        if (!rest.empty() && rest.front() == '=') u = skip_spaces(rest.substr(1));
    }
    if (!u.empty() && (u.front() == '"' || u.front() == '\'')) u.remove_prefix(1);
    return u;
}

bool has_token(const GumboElement& e, const char* name, std::string_view token) {
    const GumboAttribute* a = attribute(e, name);
    std::string list = a ? " " + lower(str(a->value)) + " " : "";
    for (char& c : list)
        if (html_space(c)) c = ' ';
    return list.find(" " + std::string(token) + " ") != list.npos;
}

// A <link> that loads a stylesheet: its rel says so, it preloads one, or a handler of
// its may make it one (`onload="this.rel='stylesheet'"`).
bool stylesheet(const GumboElement& e) {
    if (has_token(e, "rel", "stylesheet") || (has_token(e, "rel", "preload") && has_token(e, "as", "style")))
        return true;
    for (unsigned i = 0; i < e.attributes.length; ++i)
        if (str(static_cast<const GumboAttribute*>(e.attributes.data[i])->name).substr(0, 2) == "on") return true;
    return false;
}

enum class Script : uint8_t { Inert, Classic, Module };

Script script_kind(const GumboElement& e) {  // by a <script>'s type string, as HTML reads it
    const GumboAttribute* type = attribute(e, "type");
    const GumboAttribute* language = attribute(e, "language");
    std::string t;
    if (type) t = lower(trim(str(type->value)));
    else if (language && !str(language->value).empty()) t = "text/" + lower(str(language->value));
    for (std::string_view js : {"", "module", "application/json", "application/ld+json", "importmap",
                                "speculationrules", "text/javascript", "application/javascript",
                                "application/ecmascript", "application/x-ecmascript", "application/x-javascript",
                                "text/ecmascript", "text/jscript", "text/livescript", "text/x-ecmascript",
                                "text/x-javascript", "text/javascript1.0", "text/javascript1.1",
                                "text/javascript1.2", "text/javascript1.3", "text/javascript1.4",
                                "text/javascript1.5"})
        if (t == js) return t == "module" ? Script::Module : Script::Classic;
    return Script::Inert;
}

std::string child_text(const GumboElement& e) {
    std::string s;
    for (unsigned i = 0; i < e.children.length; ++i) {
        auto* c = static_cast<const GumboNode*>(e.children.data[i]);
        if (c->type == GUMBO_NODE_TEXT || c->type == GUMBO_NODE_WHITESPACE || c->type == GUMBO_NODE_CDATA)
            s += str(c->v.text.text);
    }
    return s;
}

std::string same_js(std::string_view plain, std::string_view hostile, bool module = false) {
    auto a = js_tokens(plain, module);
    if (!a) return "";  // outside what the oracle reads
    auto b = js_tokens(hostile, module);
    if (!b) return "the value makes the JavaScript unreadable (an unfinished literal or comment)";
    if (*a != *b) return "the value changes the JavaScript outside string literals";
    return "";
}

std::string same_url(std::string_view plain, std::string_view hostile) {
    std::string sa = scheme_of(url_chars(plain)), sb = scheme_of(url_chars(hostile));
    if (sa != sb) return "the value changes the URL's scheme from \"" + sa + "\" to \"" + sb + "\"";
    if ((sb == "javascript" || sb == "vbscript" || sb == "data") && plain != hostile)
        return "a value inside a " + sb + ": URL";
    return "";
}

// Nesting past this is not judged (the walks recurse).
constexpr int kMaxDepth = 256;

// Compares two parsed pages node by node; the first difference, with where it is.
// (Its recursion is as deep as the plain page, which count_marked has bounded.)
struct Walk {
    std::string where;

    std::string fail(const std::string& what) const { return what + " at " + where; }

    std::string attributes(const GumboElement& a, const GumboElement& b, const std::string& tag) {
        if (a.attributes.length != b.attributes.length) return fail("the value adds or removes attributes");
        const GumboAttribute* equiv = attribute(b, "http-equiv");
        bool refresh = tag == "meta" && equiv && lower(trim(str(equiv->value))) == "refresh";
        for (unsigned i = 0; i < a.attributes.length; ++i) {
            auto* x = static_cast<const GumboAttribute*>(a.attributes.data[i]);
            auto* y = static_cast<const GumboAttribute*>(b.attributes.data[i]);
            std::string_view name = str(x->name), va = str(x->value), vb = str(y->value);
            if (name != str(y->name) || x->attr_namespace != y->attr_namespace)
                return fail("the value changes an attribute's name");
            std::string at = "[" + std::string(name) + "]";
            std::string why;
            if (name == "style" || name == "srcdoc") {
                if (va != vb) why = "the value reaches a " + std::string(name) + " attribute";
            } else if ((name.size() > 2 && name.substr(0, 2) == "on") || name == "hx-vals" || name == "hx-vars" ||
                       name == "data-hx-vals" || name == "data-hx-vars") {
                why = same_js(va, vb);
            } else if (url_attribute(name, a.tag_namespace, tag)) {
                why = same_url(va, vb);
                bool code = (tag == "script" && (name == "src" || name == "href" || name == "xlink:href")) ||
                            (tag == "base" && name == "href") || (tag == "link" && name == "href" && stylesheet(b));
                if (why.empty() && code && origin(va) != origin(vb))
                    why = "the value chooses where code comes from (" + origin(vb) + ")";
            } else if (refresh && name == "content") {
                why = same_url(refresh_url(va), refresh_url(vb));
            }
            if (!why.empty()) return fail(why + " " + at);
        }
        return "";
    }

    std::string element(const GumboElement& a, const GumboElement& b) {
        std::string tag = tag_name(a);
        if (a.tag != b.tag || a.tag_namespace != b.tag_namespace || tag != tag_name(b))
            return fail("the value changes an element (<" + tag + "> against <" + tag_name(b) + ">)");
        size_t length = where.size();
        where += where.empty() ? tag : " > " + tag;
        if (std::string why = attributes(a, b, tag); !why.empty()) return why;
        if (Script kind = tag == "script" ? script_kind(a) : Script::Inert; kind != Script::Inert) {
            if (std::string why = same_js(child_text(a), child_text(b), kind == Script::Module); !why.empty())
                return fail(why);
        } else if (tag == "style" && child_text(a) != child_text(b)) {
            return fail("the value reaches a <style>");
        }
        if (std::string why = children(a.children, b.children); !why.empty()) return why;
        where.resize(length);
        return "";
    }

    std::string children(const GumboVector& a, const GumboVector& b) {
        if (a.length != b.length) return fail("the value adds or removes nodes");
        for (unsigned i = 0; i < a.length; ++i)
            if (std::string why = node(*static_cast<const GumboNode*>(a.data[i]),
                                       *static_cast<const GumboNode*>(b.data[i]));
                !why.empty())
                return why;
        return "";
    }

    std::string node(const GumboNode& a, const GumboNode& b) {
        if (a.type != b.type) return fail("the value changes a node's kind");
        switch (a.type) {
            case GUMBO_NODE_DOCUMENT: {
                const GumboDocument& x = a.v.document;
                const GumboDocument& y = b.v.document;
                if (x.has_doctype != y.has_doctype || str(x.name) != str(y.name) ||
                    str(x.public_identifier) != str(y.public_identifier) ||
                    str(x.system_identifier) != str(y.system_identifier))
                    return fail("the value changes the doctype");
                return children(x.children, y.children);
            }
            case GUMBO_NODE_ELEMENT:
            case GUMBO_NODE_TEMPLATE: return element(a.v.element, b.v.element);
            case GUMBO_NODE_COMMENT:
            case GUMBO_NODE_CDATA:
                if (str(a.v.text.text) != str(b.v.text.text)) return fail("the value reaches a comment or CDATA");
                return "";
            case GUMBO_NODE_TEXT:
            case GUMBO_NODE_WHITESPACE: return "";
        }
        return "";
    }
};

// Counts the HTML elements under n carrying the attribute `marker` (if any); false where
// the page is not judged: it holds a <frameset> (which drops text and keeps white space,
// so the hostile value's spaces would be nodes the plain one has not) or nests past
// kMaxDepth.
bool count_marked(const GumboNode& n, const char* marker, size_t& count, int depth = 0) {
    if (n.type != GUMBO_NODE_ELEMENT && n.type != GUMBO_NODE_TEMPLATE && n.type != GUMBO_NODE_DOCUMENT) return true;
    if (depth > kMaxDepth) return false;
    const GumboVector& children = n.type == GUMBO_NODE_DOCUMENT ? n.v.document.children : n.v.element.children;
    if (n.type != GUMBO_NODE_DOCUMENT) {
        if (n.v.element.tag == GUMBO_TAG_FRAMESET) return false;
        count += marker && n.v.element.tag_namespace == GUMBO_NAMESPACE_HTML && attribute(n.v.element, marker);
    }
    for (unsigned i = 0; i < children.length; ++i)
        if (!count_marked(*static_cast<const GumboNode*>(children.data[i]), marker, count, depth + 1)) return false;
    return true;
}

}  // namespace

Comparison compare_pages(std::string_view plain, std::string_view hostile, const char* marker) {
    // Gumbo drops a NUL in an attribute's name where HTML makes it U+FFFD (so
    // `"\0onclick=` would be a handler to it, not to a browser): such a page is not judged.
    Comparison c;
    if (plain.find('\0') != plain.npos) return c;
    Doc a = parse(plain);
    if (!count_marked(*a->document, marker, c.marked)) return c;
    // (Only the plain page is checked: a <frameset> or nesting the hostile value alone
    // brings is a difference the walk finds, and it goes no deeper than the plain page.)
    Doc b = parse(hostile);
    c.judged = true;
    c.difference = Walk{}.node(*a->document, *b->document);
    return c;
}

}  // namespace kiln::oracle
