// Where a template's literal JavaScript leaves off: a lexical scanner fed one byte at a
// time (a <script> body, or an on* attribute value after entity decoding), so kilnc can
// tell whether a <%= %> stands where an expression may go or inside a string, template
// literal or regular expression. The value is printed as a complete, quoted JS string
// literal (view::append_js); inside a string the browser has open, its quotes would
// close that string, so the scanner must not lose sync. It follows the grammar's rules
// for '/' (after ')' it divides, a guess that can only refuse a value: a regex there
// starts no string), postfix ++ and --, HTML-like comments (`<!--` anywhere, `-->` at
// the start of a line) and U+2028/U+2029 as line ends.
// A plain value type, compared with == when kilnc merges the states of code branches.
#pragma once
#include <compare>
#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::kilnc {

// What a value printed at the current position would be part of.
enum class JsSpot : uint8_t { Code, String, Regex, Comment };

class JsState {
public:
    void feed(char c);
    JsSpot spot() const;
    // A value was printed here (a string, number or boolean literal).
    void after_value();
    bool operator==(const JsState&) const = default;
    auto operator<=>(const JsState&) const = default;
    size_t bytes() const { return tail_.size() + braces_.size() + word_.size(); }  // what its strings hold

private:
    enum class Mode : uint8_t { Code, DqString, SqString, Template, LineComment, BlockComment, Regex, RegexClass };
    void code(char c);
    void end_word();
    void slash(char c);  // resolves a '/' seen just before c
    void remember(char c);  // into tail_

    Mode mode_ = Mode::Code;
    bool escaped_ = false;        // in a string, template or regex: the previous byte was '\'
    bool pending_slash_ = false;  // Code: a '/' whose meaning the next byte decides
    bool divides_ = false;        // Code: a '/' here would divide (a value precedes it)
    char prev_ = 0;               // the byte before, for "${", "*/"
    std::string tail_;            // Code and line comments: the last bytes (up to 4), for
                                  // "++", "<!--", "-->" and U+2028/U+2029
    uint8_t line_bytes_ = 0;      // Code: bytes other than spaces since the line began (up to 4)
    std::string braces_;          // open '{' of code ('{') and of "${" substitutions ('$')
    std::string word_;            // the identifier or number being read
};

}  // namespace kiln::kilnc
