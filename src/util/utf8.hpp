// UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates, nothing past
// U+10FFFF. Shared by the form reader (lengths in characters) and the JSON writer
// (what it may copy through).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln::utf8 {

// The length (1 to 4) of the well-formed character starting at s[i], or 0 if the
// bytes there are not one; its code point in *code_point if given (and it is one).
// REQUIRES: i < s.size().
size_t sequence_at(std::string_view s, size_t i, uint32_t* code_point = nullptr);

// Where sequence_at(s, i) is 0: how many bytes from i form the "maximal subpart" of
// an ill-formed sequence (Unicode 15, 3.9, U+FFFD substitution): the bytes that
// could still have begun a character, at least one. Each such run becomes one
// U+FFFD when text is repaired. REQUIRES: i < s.size().
size_t invalid_run(std::string_view s, size_t i);

}  // namespace kiln::utf8
