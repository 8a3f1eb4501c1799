// Where a template's literal HTML leaves off, for contextual escaping: a simplified HTML
// tokenizer fed the literal text one byte at a time, which decides the escaper of each
// <%= %> (element text, quoted attribute, URL attribute at its start or after it, script,
// event handler) or why no escaper is safe there (CSS, unquoted attribute, inside a tag
// or comment, a value that would supply a URL scheme). Text it does not understand never
// stops it: it only answers for values, partials and yields. Values and raw output are
// assumed to leave the context as it was (escaped values cannot change it).
// A plain value type: equal states compare equal, so code branches can be merged.
#pragma once
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kilnc/js_state.hpp"
#include "kilnc/template_model.hpp"

namespace kiln::kilnc {

// What a <%= %> at some position gets: an escaper, or the reason none is safe.
struct Verdict {
    Escaper escaper = Escaper::Text;
    std::string error;  // non-empty: refused, with the hint
};

// An error found after the fact: literal text after value number `value` turned that
// value into part of a URL scheme (`<%= x %>:`).
struct LateError {
    size_t value;
    std::string message;
};

class HtmlState {
public:
    // Reads literal template text; a value this text turns into part of a URL scheme
    // is reported in `late`.
    void feed(std::string_view literal, std::vector<LateError>& late);
    Verdict value() const;
    // After a value (template node index `value`) was printed here.
    void after_value(size_t value);
    // Why a partial or the layout's content (markup) cannot be printed here; empty in
    // element text.
    std::string markup_error(std::string_view what) const;
    // Why a template cannot end here (it may be rendered into another, whose next value
    // would stand here); empty in element text.
    std::string end_error() const;
    bool operator==(const HtmlState&) const = default;
    auto operator<=>(const HtmlState&) const = default;  // any order, for a map of the states met
    // The bytes its strings hold (a tag or attribute name has no bound of its own):
    // what copying or comparing it costs, counted by the analysis.
    size_t bytes() const {
        return type_.size() + tag_.size() + attr_.size() + scheme_.size() + recent_.size() + point_html_.size() + point_tag_.size() + url_text_.size() +
               js_.bytes();
    }

    // A context kilnc cannot follow (after a <script> in the HTML parser's "double
    // escaped" state, or a loop whose body keeps changing the context): values refused.
    static HtmlState lost();

private:
    enum class Mode : uint8_t {
        Text, TagOpen, EndTagOpen, TagName, BeforeAttrName, AttrName, AfterAttrName, BeforeAttrValue, AttrValue,
        Declaration, Comment, Cdata, BogusComment, RawText, Lost,
    };
    enum class Raw : uint8_t { None, Rcdata, Rawtext, Script, Style, Plaintext };
    enum class Attr : uint8_t { Plain, Url, UrlList, Js, Css, Html, Library };
    enum class Url : uint8_t { Start, Scheme, Rest };

    void step(char c, std::vector<LateError>& late);
    void raw_text(char c);
    bool noscript_parts(char c);
    void start_value(char quote);
    void value_byte(char c, std::vector<LateError>& late);    // an attribute value byte, as written
    void decoded_byte(char c, std::vector<LateError>& late);  // after character references
    void url_byte(char c, std::vector<LateError>& late);
    void end_attr(std::vector<LateError>& late);
    bool collects_type() const;
    bool link_style() const;
    void close_tag();
    void count_foreign(bool self_closing);
    void pin_foreign();
    bool markup_in_ambiguous_raw_text() const;
    Verdict attr_value() const;
    Verdict raw_text_value() const;
    Verdict js_value(Escaper escaper, std::string_view where) const;
    std::string where() const;  // "a <script> element", for messages

    Mode mode_ = Mode::Text;
    Raw raw_ = Raw::None;
    Attr attr_kind_ = Attr::Plain;
    Url url_ = Url::Start;
    char quote_ = 0;          // AttrValue: '"', '\'' or 0 (unquoted)
    bool end_tag_ = false;    // the tag being read is an end tag
    bool unsafe_scheme_ = false;  // the URL's literal scheme is not http, https, mailto or tel
    bool script_comment_ = false;  // a <script> body inside "<!--" (see raw_text)
    bool foreign_script_ = false;  // this <script>'s type is not JavaScript or JSON (a client-side template)
    bool module_script_ = false;   // this <script>'s type is "module" (no HTML-like comments in it)
    // Raw text that a parser in foreign content reads as markup: a <script>, <style>,
    // <title>... inside an <svg> or <math>, or one written as `<script ... />`. Until
    // its end tag, markup loses the context (see raw_text) and a script refuses values.
    bool ambiguous_ = false;
    bool slash_ = false;      // the tag's last byte was a '/': a '>' now closes it (`<svg/>`)
    bool code_url_ = false;   // a <script src> or <base href>: its origin must be written in the template
    std::string url_text_;    // code_url_: the URL so far, decoded ('\x01' for a value), bounded
    bool type_read_ = false;     // this <script> tag's first type attribute was read
    bool meta_refresh_ = false;  // this <meta> tag says http-equiv="refresh"
    size_t meta_value_ = static_cast<size_t>(-1);  // the first value in this <meta>'s content
    // What this <link>'s attributes so far say (kLink* bits): see link_style().
    uint8_t link_ = 0;
    static constexpr uint8_t kLinkStylesheet = 1, kLinkPreload = 2, kLinkAsStyle = 4, kLinkHandler = 8;
    size_t link_value_ = static_cast<size_t>(-1);  // the first value before the origin of this <link>'s href
    bool unknown_reference_ = false;  // this event handler holds a named reference kilnc does not know
    // Inside a <select> (to its end tag), which ignores <title>, <style> and the like:
    // their text is markup there, so they are ambiguous as in foreign content.
    uint8_t select_ = 0;  // 1: open; 2: unknown, taken as open for good (see close_tag)
    // <svg> and <math> elements open (from kDeep on, never closed again: kilnc keeps
    // its states few, and takes the content as maybe foreign for good).
    uint8_t svg_ = 0, math_ = 0;
    static constexpr uint8_t kDeep = 3;
    // Inside a <noscript>: followed as markup (as a browser without scripts reads it), and
    // how far "</noscript" has been matched, from a '<' read in element text or not.
    bool noscript_ = false;
    uint8_t noscript_match_ = 0;
    bool noscript_lt_text_ = false;
    bool after_cr_ = false;  // the last byte fed was a CR (read as LF): an LF next is dropped
    bool in_point_ = false;   // inside an HTML integration point (<desc>, <foreignObject>, <mi>...)
    std::string point_tag_;   // in_point_: which one (only its own end tag leaves it)
    std::string point_html_;  // the HTML elements open there, innermost last ("b p ")
    std::string type_;     // a <script>'s type, <meta>'s http-equiv, <link>'s rel or as, as read (lower, bounded)
    std::string tag_;      // the tag being read; RawText: the element whose end tag ends it
    std::string attr_;     // the attribute being read
    std::string scheme_;   // Url::Scheme: what may be its scheme so far
    std::string recent_;   // the last bytes (comment and raw-text ends), or a character reference
    size_t scheme_value_ = kNone;  // a value printed where the URL's scheme may still be
    JsState js_;           // a <script> body or an on* attribute value
    static constexpr size_t kNone = static_cast<size_t>(-1);
};

}  // namespace kiln::kilnc
