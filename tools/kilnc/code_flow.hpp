// How the C++ of a <% %> block opens and closes blocks, so that kilnc can follow which
// template text may run after which (escape_contexts.cpp): `if (x) {`, `} else {`,
// `for (...) {`, `switch (k) {`, `case K:`, `break;`, `if (x) continue;`, `return;`, `}`.
// A lexical scan, not a C++ parser: string and character literals and comments are
// skipped, a '{' is classified by the words of its statement, and anything it does not
// recognise is a plain block (run once, in order). What it cannot follow is refused: a
// block that ends in a control statement without its '{' (`<% if (x) %>` governs the
// template text after it), `goto`, and preprocessor conditionals. Pure.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace kiln::kilnc {

enum class FlowKind : uint8_t {
    Open,   // a '{'; see Block
    Close,  // a '}'
    Case,   // a `case ...:` or `default:` label
    Break,          // a statement `break;`
    Continue,       // a statement `continue;`
    Return,         // a statement `return ...;`: the template ends here
    MaybeBreak,     // a statement that may break: `if (x) break;`
    MaybeContinue,  // `if (x) continue;`
    MaybeReturn,    // `if (x) return;`
    Refused,        // what the scan cannot follow (FlowEvent::why says what)
};

enum class Block : uint8_t {
    Plain,   // runs once: `{`, a struct's braces
    If,      // may run or not: `if (...) {`, `try {`
    ElseIf,  // an alternative that may run or not: `else if (...) {`, `catch (...) {`
    Else,    // the last alternative: `else {`
    Loop,    // runs any number of times: for, while, do, and lambda bodies
    Switch,  // `switch (...) {`, whose case labels are entry points
};

struct FlowEvent {
    FlowKind kind;
    Block block = Block::Plain;  // Open only
    const char* why = nullptr;   // Refused only
};

std::vector<FlowEvent> scan_code_flow(std::string_view code);

}  // namespace kiln::kilnc
