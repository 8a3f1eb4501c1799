// kiln views: the runtime kilnc-generated templates call, and the helpers templates use.
// A template compiles to a struct whose members are its parameters; render(out)
// appends the page to a std::string, normally the response body, so rendering costs
// no allocation beyond the body growing:
//     kiln::render(res, views::posts::index{.posts = posts, .title = "Posts"});
// Output is escaped by default, for the HTML context each <%= %> stands in (kilnc
// decides at build time, see "Contexts" below). Only kiln::Html values (from the
// helpers below or raw()) and rendered views go out verbatim, in element text, as does
// <%== %> anywhere.
//
// Template file -> C++ name (kilnc, namespace root "views" unless kiln_add_views says
// otherwise): <views dir>/posts/index.html -> struct ::views::posts::index, declared in
// "views/posts/index.hpp"; "views.hpp" includes every template of a target. In each
// path segment '-' and '.' become '_', a leading digit gets a '_' in front (404 -> _404),
// a C++ keyword or std/kiln gets '_' appended (new -> new_); other characters, and
// names that would be reserved identifiers (_Upper, a__b), are refused by kilnc.
//
// Printing a value of your own type: give it an ADL-visible `to_html(const T&)` that
// returns anything printable (text, which is escaped, or kiln::Html, which is not).
//
// The template language (compiled by tools/kilnc):
//   <% stmt %>  C++ statements   <%= expr %>  escaped   <%== expr %>  raw   <%# comment %>
//   "<%%" prints "<%"; "%%>" inside a tag is "%>". A line holding only a <% %>, <%# %>
//   or <%@ %> tag produces no output (its indentation and line break vanish).
//   At the top, before any content:
//   <%@ param TYPE NAME %>, <%@ param TYPE NAME = DEFAULT %>: a struct member, in order;
//       a member without default is a reference (const& unless TYPE is one), so leaving
//       it out of the initializer is a compile error. Names render, render_body,
//       content and kiln_* are reserved.
//   <%@ include "file.hpp" %> or <%@ include <header> %>: in the generated header,
//       found through the target's include directories (not next to the template).
//   <%@ layout "layouts/app" .title = title %>: render inside that layout, given these
//       designated initializers for its members (in its declaration order).
//   Anywhere: <%@ render "_form" .post = post %> renders a partial (a name without '/'
//   is next to this template); <%@ yield %> (or printing `content`) makes the template
//   a layout: its struct gets a last member `kiln::view::Content content`, the page.
//   Template names are relative to the views directory, without ".html".
//
// Contexts (contextual auto-escaping, tools/kilnc/escape_contexts.hpp): kilnc follows
// the template's literal HTML and picks the escaper of each <%= %> from where it lands:
//   element text, <title>, <textarea>   & < > " ' as entities (append); markup allowed
//   quoted attribute value, ' or "      the same (append_attr)
//   href, src, action, formaction, ...  whole value: an unsafe scheme (javascript:,
//                                       data:, ...) becomes "#" (append_url); after the
//                                       start (path, query, fragment): percent-encoded as
//                                       one component, "a&b=1" -> "a%26b%3D1" (append_url_part)
//   <script> body                       a JS literal: strings quoted, with " ' ` < > & $ /
//                                       \ controls U+2028/9 escaped; numbers, true/false,
//                                       null for nothing (append_js)
//   on* attribute (onclick="...")       the same literal, attribute-escaped (append_js_attr)
// Refused with file:line:col and a hint: a value in <style> or a style attribute (CSS),
// in an unquoted attribute value, inside a tag or an element name, in an HTML comment,
// in srcdoc, inside a quoted JS string or regex (the value brings its own quotes), before
// the path of a <script src>, <base href> or stylesheet <link href> (its origin), after
// a literal scheme other than http, https, mailto, tel, or before a ':' (it would supply
// the scheme). Partials and <%@ yield %> only in element text. Markup values (kiln::Html,
// views) outside element text, or inside <svg>, <math> or <noscript>, fail to compile.
// Code blocks are opaque except for their braces: each branch of an if/else or switch
// starts from the context before it, loops are followed until no new context appears,
// and a value reached in contexts needing different escapers is refused; keep each
// branch's tags and attributes closed. <%== %> is the one way out: never escaped, and
// refused only where a layout prints its page with it (<%== content %>, judged as yield).
// Pure functions over the caller's strings; no global state.
#pragma once
#include <charconv>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <kiln/escape.hpp>
#include <kiln/response.hpp>

namespace kiln {

// Markup known to be safe to send as it is: printed verbatim even by <%= %>.
class Html {
public:
    Html() = default;
    // The one way in: the caller vouches that `markup` is safe HTML.
    static Html trusted(std::string markup) {
        Html h;
        h.text_ = std::move(markup);
        return h;
    }
    std::string_view str() const { return text_; }
    bool operator==(const Html&) const = default;

private:
    std::string text_;
};

// Date and time text in a fixed buffer (no allocation); prints like a string.
struct DateText {
    char data[32];
    uint8_t size = 0;
    std::string_view view() const { return {data, size}; }
    operator std::string_view() const { return view(); }
};

// Helpers for templates (generated code has `using namespace kiln::helpers`).
inline namespace helpers {

// Marks text as trusted markup, the visible opt-out from escaping.
Html raw(std::string_view markup);

// Percent-encodes every byte but A-Z a-z 0-9 - . _ ~ (a query value or path segment).
std::string url_encode(std::string_view text);

// True unless `href` names a scheme other than http, https, mailto or tel (after the
// tab/newline/control-character stripping browsers do), so "javascript:" is false.
bool is_safe_href(std::string_view href);

// <a href="href">text</a> with both escaped; an unsafe href (see is_safe_href) becomes "#".
Html link_to(std::string_view href, std::string_view text);

// Form fields the framework reads: the CSRF token (kiln::csrf_protect) and the
// method an HTML form means (POST with _method=PUT, PATCH or DELETE; see App::handle).
inline constexpr std::string_view kCsrfField = "_csrf";
inline constexpr std::string_view kMethodField = "_method";

// <input type="hidden" name="_csrf" value="token"> with the token escaped.
Html csrf_field(std::string_view token);

// Opens a form: method "get" -> <form action=".." method="get">; "post" -> method="post"
// plus csrf_field(token); any other method (put, patch, delete) -> method="post", a
// hidden _method input with the method upper-cased, and the token. Unsafe action -> "#".
Html form_open(std::string_view action, std::string_view csrf_token, std::string_view method = "post");
inline Html form_close() { return Html::trusted("</form>"); }

// "2024-03-09 14:05" in UTC. Times outside the years 0001..9999 are clamped to them.
DateText format_datetime(int64_t unix_seconds);
DateText format_datetime(std::chrono::system_clock::time_point t);
// RFC 3339 in UTC, whole seconds: "2024-03-09T14:05:07Z"; clamped like format_datetime.
DateText format_rfc3339(int64_t unix_seconds);
DateText format_rfc3339(std::chrono::system_clock::time_point t);

}  // namespace helpers

namespace view {

// A rendered template: anything with `void render(std::string&) const`.
template <class T>
concept View = requires(const T& v, std::string& out) {
    { v.render(out) } -> std::same_as<void>;
};

// A layout's page content: a non-owning reference to something that renders into a
// string. Valid only while the referenced callable lives (generated code passes a
// lambda within one full-expression).
class Content {
public:
    template <class F>
        requires std::invocable<const F&, std::string&> && (!std::same_as<std::remove_cvref_t<F>, Content>)
    Content(const F& fn)  // NOLINT: implicit on purpose, `.content = lambda`
        : obj_(&fn), call_([](const void* o, std::string& out) { (*static_cast<const F*>(o))(out); }) {}
    void render(std::string& out) const { call_(obj_, out); }

private:
    const void* obj_;
    void (*call_)(const void*, std::string&);
};

template <class T>
inline constexpr bool is_optional = false;
template <class T>
inline constexpr bool is_optional<std::optional<T>> = true;

template <class T>
concept HasToHtml = requires(const T& v) { to_html(v); };

template <class T>
void append_number(std::string& out, T v) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    if (ec == std::errc()) out.append(buf, static_cast<size_t>(end - buf));
}

// <%= v %>: text is escaped; numbers, bool ("true"/"false"), kiln::Html, views and
// to_html() results are printed; an empty optional or a null char* prints nothing.
template <class T>
void append(std::string& out, const T& v) {
    if constexpr (std::is_same_v<T, Html>) {
        out.append(v.str());
    } else if constexpr (View<T>) {
        v.render(out);
    } else if constexpr (is_optional<T>) {
        if (v) append(out, *v);
    } else if constexpr (HasToHtml<T>) {
        append(out, to_html(v));
    } else if constexpr (std::is_same_v<T, bool>) {
        out.append(v ? "true" : "false");
    } else if constexpr (std::is_same_v<T, const char*> || std::is_same_v<T, char*>) {
        if (v) append_html_escaped(out, std::string_view(v));  // a null pointer prints nothing
    } else if constexpr (std::is_same_v<T, char>) {
        append_html_escaped(out, std::string_view(&v, 1));
    } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
        append_html_escaped(out, std::string_view(v));
    } else if constexpr (std::is_integral_v<T> || std::is_floating_point_v<T>) {
        append_number(out, v);
    } else {
        static_assert(sizeof(T) == 0,
                      "kiln: this type cannot be printed by a template; give it a "
                      "to_html(const T&) found by ADL (see kiln/view.hpp)");
    }
}

// Contextual printing: for each <%= v %>, kilnc calls the function for the HTML context
// the value stands in (append() above in element text). Each prints what append() would,
// escaped for its context; an empty optional or null char* prints nothing (null in a
// script). Markup (kiln::Html, views) is refused at compile time outside element text:
// print its text, or use <%== %> if you vouch for it.
enum class Context : uint8_t { Attr, Url, UrlPart, Js, JsAttr };

// A number in a script: a JS number literal (NaN, Infinity); a negative one gets a space
// in front, so `x -<%= n %>` cannot become `x --1`.
template <class T>
void append_js_number(std::string& out, T v) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(v)) {
            out.append("NaN");
            return;
        }
        if (std::signbit(v)) out += ' ';
        if (std::isinf(v)) {
            out.append(v > 0 ? "Infinity" : "-Infinity");
            return;
        }
    } else if constexpr (std::is_signed_v<T>) {
        if (v < 0) out += ' ';
    }
    append_number(out, v);
}

template <Context C>
void append_text_in(std::string& out, std::string_view text) {
    if constexpr (C == Context::Attr) append_html_escaped(out, text);
    else if constexpr (C == Context::Url) append_safe_url(out, text);
    else if constexpr (C == Context::UrlPart) append_url_component(out, text);
    else if constexpr (C == Context::Js) append_js_string(out, text, "\"");
    else append_js_string(out, text, "&quot;");  // JsAttr: the literal's quotes, attribute-escaped
}

template <Context C, class T>
void append_in(std::string& out, const T& v) {
    constexpr bool js = C == Context::Js || C == Context::JsAttr;
    if constexpr (std::is_same_v<T, Html> || View<T>) {
        static_assert(sizeof(T) == 0,
                      "kiln: markup (kiln::Html, a view, a to_html() returning Html) can only be printed in "
                      "element text; in an attribute, URL or script print its text, or use <%== %> if you vouch "
                      "for it");
    } else if constexpr (is_optional<T>) {
        if (v) append_in<C>(out, *v);
        else if constexpr (js) out.append("null");
    } else if constexpr (HasToHtml<T>) {
        append_in<C>(out, to_html(v));
    } else if constexpr (std::is_same_v<T, bool>) {
        out.append(v ? "true" : "false");
    } else if constexpr (std::is_same_v<T, const char*> || std::is_same_v<T, char*>) {
        if (v) append_text_in<C>(out, std::string_view(v));
        else if constexpr (js) out.append("null");
    } else if constexpr (std::is_same_v<T, char>) {
        append_text_in<C>(out, std::string_view(&v, 1));
    } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
        append_text_in<C>(out, std::string_view(v));
    } else if constexpr (std::is_integral_v<T> || std::is_floating_point_v<T>) {
        if constexpr (js) {
            append_js_number(out, v);
        } else if constexpr (C == Context::UrlPart) {
            char buf[64];  // "1e+21": the '+' would read as a space in a query
            auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
            if (ec == std::errc()) append_url_component(out, std::string_view(buf, static_cast<size_t>(end - buf)));
        } else {
            append_number(out, v);
        }
    } else {
        static_assert(sizeof(T) == 0,
                      "kiln: this type cannot be printed by a template; give it a "
                      "to_html(const T&) found by ADL (see kiln/view.hpp)");
    }
}

// In a quoted attribute value: escaped as in text.
template <class T>
void append_attr(std::string& out, const T& v) {
    append_in<Context::Attr>(out, v);
}
// As the whole value of a URL attribute (href="<%= url %>"): an unsafe scheme becomes "#".
template <class T>
void append_url(std::string& out, const T& v) {
    append_in<Context::Url>(out, v);
}
// Later in a URL (path, query, fragment): percent-encoded, one component.
template <class T>
void append_url_part(std::string& out, const T& v) {
    append_in<Context::UrlPart>(out, v);
}
// In a <script>: a JS literal (string, number, true/false, null).
template <class T>
void append_js(std::string& out, const T& v) {
    append_in<Context::Js>(out, v);
}
// In an event-handler attribute (onclick="..."): a JS literal, attribute-escaped.
template <class T>
void append_js_attr(std::string& out, const T& v) {
    append_in<Context::JsAttr>(out, v);
}

// <%== v %>: text goes out unescaped, on purpose; anything else as append().
template <class T>
void append_raw(std::string& out, const T& v) {
    if constexpr (std::is_same_v<T, const char*> || std::is_same_v<T, char*>)
        out.append(v ? std::string_view(v) : std::string_view());
    else if constexpr (std::is_convertible_v<const T&, std::string_view> && !std::is_same_v<T, Html> && !View<T>)
        out.append(std::string_view(v));
    else
        append(out, v);
}

}  // namespace view

// Renders `page` as the HTML body of `res` (replacing any body), Content-Type text/html.
template <view::View V>
void render(Response& res, const V& page) {
    res.html({});
    page.render(res.body());
}

// Renders `page` into a new string.
template <view::View V>
std::string render_to_string(const V& page) {
    std::string out;
    page.render(out);
    return out;
}

}  // namespace kiln
