// Where a template's literal JavaScript leaves off: a lexical scanner fed one byte at a
// time (a <script> body, or an on* attribute value after entity decoding), so kilnc can
// tell whether a <%= %> stands where an expression may go or inside a string, template
// literal or regular expression. The value is printed as a complete, quoted JS string
// literal (view::append_js); inside a string the browser has open, its quotes would
// close that string, so the scanner must not lose sync. It follows the grammar's rules
// for '/' (where it must guess, it doubts to the line's end: see JsSpot::Unsure),
// keywords as property names (`a.return / 2`), numbers ("1./2"), postfix ++ and --, HTML-like comments of classic
// scripts (`<!--` anywhere, `-->` first on a line but for spaces and comments) and
// U+2028/U+2029 as line ends. A string cannot hold a line end: one that seems to is a
// reading that fails, and the scanner goes on in code.
// A plain value type, compared with == when kilnc merges the states of code branches.
#pragma once
#include <compare>
#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::kilnc {

// What a value printed at the current position would be part of. Unsure: on a line
// after a '/' whose meaning kilnc had to guess (after ')', '}', "++", or a word with
// bytes past ASCII: `if (a) /"/.test(s)` is a regex, `f(a) / 2` a division): the two
// readings can part until the line ends.
// UnsureComment: after a "-->" that bytes past ASCII begin its line with (spaces to
// JavaScript or not: a comment to the line's end, or code), for the rest of the script.
enum class JsSpot : uint8_t { Code, String, Regex, Comment, Unsure, UnsureComment };

class JsState {
public:
    // A module script: "<!--" and "-->" are no comments there.
    void module(bool on) { module_ = on; }
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

    bool ends_line(char c) const;
    void line_end();  // a line terminator was read (in code, a comment or a string)

    // After a ')' then '/' taken for a division: Line until the line ends; Script for
    // good once that line holds what could carry either reading onto the next one (a
    // '`', "/*", a '\' before the line's end).
    enum class Doubt : uint8_t { None, Line, Script };
    Mode mode_ = Mode::Code;
    Doubt doubt_ = Doubt::None;
    bool module_ = false;
    bool unsure_ = false;         // Code: a '/' now may divide or begin a regex (see code())
    bool slash_unsure_ = false;   // Code: the pending '/' came where unsure_ was set
    bool after_dot_ = false;      // Code: the word being read follows '.' (a property name)
    bool word_unicode_ = false;   // Code: the word being read holds bytes past ASCII
    bool backslash_before_ = false;  // the byte before this one was '\'
    char last_ = 0;               // the byte before, whatever the mode
    bool escaped_ = false;        // in a string, template or regex: the previous byte was '\'
    bool pending_slash_ = false;  // Code: a '/' whose meaning the next byte decides
    bool divides_ = false;        // Code: a '/' here would divide (a value precedes it)
    char prev_ = 0;               // the byte before, for "${", "*/"
    std::string tail_;            // Code and line comments: the last bytes (up to 4), for
                                  // "++", "<!--", "-->" and U+2028/U+2029
    uint8_t line_bytes_ = 0;      // Code: bytes other than spaces since the line began (up to 4, + line_unicode_)
    uint8_t line_unicode_ = 0;    // Code: of those, bytes past ASCII before any other (up to 5)
    bool comment_doubt_ = false;  // a "-->" after such bytes: see JsSpot::UnsureComment
    bool escaped_cr_ = false;     // the escaped byte was a CR: an LF next is part of the same escape
    std::string braces_;          // open '{' of code ('{') and of "${" substitutions ('$')
    std::string word_;            // the identifier or number being read
};

}  // namespace kiln::kilnc
