// Splits template source into text and tags. Pure: no I/O; linear in the input.
//   <% code %>   <%= escaped %>   <%== raw %>   <%# comment %>   <%@ directive %>
//   "<%%" in text is a literal "<%"; "%%>" inside a tag is a literal "%>".
// A code, comment or directive tag alone on its line (only spaces or tabs around it)
// takes the whole line with it: its indentation and line break produce no output.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kilnc/diagnostic.hpp"

namespace kiln::kilnc {

enum class TokenKind : uint8_t { Text, Code, Output, RawOutput, Comment, Directive };

struct Token {
    TokenKind kind;
    std::string text;    // Text: the literal bytes; a tag: what stands between its markers
    Pos pos;             // the first byte of the token ('<' for a tag)
    Pos body_pos;        // a tag: the first byte after the opening marker
    std::string indent;  // a tag: spaces and tabs that put code at body_pos's column
};

struct LexResult {
    std::vector<Token> tokens;
    std::optional<Diagnostic> error;  // set: tokens is incomplete
};

LexResult lex(std::string_view source);

// Whitespace reproducing the display column after `line_prefix` (tabs kept, one space
// per UTF-8 character otherwise), so that the C++ compiler's columns are the template's.
// At most kMaxIndent: past it a diagnostic's column is short, its line still right. (Every
// tag keeps its indent: a long one-line template, minified markup, made it quadratic.)
inline constexpr size_t kMaxIndent = 256;
std::string indent_for(std::string_view line_prefix);

}  // namespace kiln::kilnc
