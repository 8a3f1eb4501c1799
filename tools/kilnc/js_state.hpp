// Where a template's literal JavaScript leaves off: a lexical scanner fed one byte at a
// time (a <script> body, or an on* attribute value after entity decoding), so kilnc can
// tell whether a <%= %> stands where an expression may go or inside a string, template
// literal or regular expression. It only lints: the value is printed as a complete,
// quoted JS string literal whatever this says (view::append_js), so a scanner that
// guesses wrong (regex or division after ')') gives a false error, never unsafe output.
// A plain value type, compared with == when kilnc merges the states of code branches.
#pragma once
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

private:
    enum class Mode : uint8_t { Code, DqString, SqString, Template, LineComment, BlockComment, Regex, RegexClass };
    void code(char c);
    void end_word();
    void slash(char c);  // resolves a '/' seen just before c

    Mode mode_ = Mode::Code;
    bool escaped_ = false;        // in a string, template or regex: the previous byte was '\'
    bool pending_slash_ = false;  // Code: a '/' whose meaning the next byte decides
    bool divides_ = false;        // Code: a '/' here would divide (a value precedes it)
    char prev_ = 0;               // the byte before, for "${", "*/"
    std::string braces_;          // open '{' of code ('{') and of "${" substitutions ('$')
    std::string word_;            // the identifier or number being read
};

}  // namespace kiln::kilnc
