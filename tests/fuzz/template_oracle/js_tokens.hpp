// The template oracle's JavaScript tokens (kilnc's own reading is tools/kilnc/js_state.cpp,
// which this must not share): enough of ECMAScript's lexical grammar to tell a string
// literal from code. A value printed in a script must leave the script's tokens as they
// were, except inside string literals; comparing the tokens of a page rendered with a
// plain value and with a hostile one shows whether it did.
// A '/' starts a regular expression or divides as the previous token suggests (the
// grammar needs the parser to be sure); "<!--", and "-->" first on a line, begin a
// comment in a classic script (not in a module). A template literal's substitutions are
// read as code. At a literal, comment or substitution the text does not finish, the
// reading gives up: nullopt.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::oracle {

struct JsToken {
    enum Kind : uint8_t { Word, String, Punct } kind;  // Word: a name, a number or a regular expression
    std::string text;                                 // empty for String: its contents do not count
    bool operator==(const JsToken&) const = default;
};

std::optional<std::vector<JsToken>> js_tokens(std::string_view script, bool module = false);

}  // namespace kiln::oracle
