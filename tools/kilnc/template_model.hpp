// The parsed form of one template: what parser.cpp builds and codegen.cpp turns into
// C++. Plain values; every piece of user C++ keeps its template position so the
// generated code can point the C++ compiler back at it (#line).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kilnc/diagnostic.hpp"
#include "kilnc/names.hpp"

namespace kiln::kilnc {

// User C++ from the template, with where it starts and the whitespace that puts it
// at the same column.
struct CodeSpan {
    std::string code;
    Pos pos;
    std::string indent;
};

struct Param {
    std::string type;           // as written: "const std::vector<Post>&", "std::string_view"
    std::string name;
    std::string default_value;  // empty: the parameter is required
    Pos pos;
};

struct Include {
    std::string target;  // with its delimiters: "\"models/post.hpp\"" or "<vector>"
    Pos pos;
};

// <%@ layout "name" .a = x %> or <%@ render "name" .a = x %>: the other template and
// the designated initializers of its struct.
struct TemplateRef {
    TemplateName name;
    CodeSpan init;
    Pos pos;
};

enum class NodeKind : uint8_t { Text, Code, Output, RawOutput, Render, Yield };

// How an Output (<%= %>) is escaped, from the HTML context it stands in (set by
// escape_contexts.cpp; each names a kiln::view::append_* function in kiln/view.hpp).
enum class Escaper : uint8_t {
    Text,     // element text (also <title>, <textarea>): append
    Attr,     // a quoted attribute value: append_attr
    Url,      // the whole value of a URL attribute (href, src, ...): append_url, scheme checked
    UrlPart,  // later in a URL (path, query, fragment): append_url_part, percent-encoded
    Js,       // a <script> body: append_js, a JS literal
    JsAttr,   // an event-handler attribute (on*): append_js_attr, a JS literal, attribute-escaped
};

struct Node {
    NodeKind kind;
    std::string text;  // Text: the literal output
    CodeSpan code;     // Code, Output, RawOutput: the C++; Render: the initializers
    TemplateName ref;  // Render: the partial
    Pos pos;
    Escaper escaper = Escaper::Text;  // Output only
};

struct Template {
    TemplateName name;
    std::vector<Param> params;
    std::vector<Include> includes;
    std::optional<TemplateRef> layout;
    bool is_layout = false;              // has <%@ yield %> or <%== content %>
    std::vector<TemplateName> partials;  // each rendered partial once, for #include
    std::vector<Node> body;              // adjacent text is merged into one node
};

}  // namespace kiln::kilnc
