// A differential oracle for kilnc's contextual escaping (tests/fuzz/fuzz_template.cpp):
// for a template kilnc compiled, a few runs through its code (paths.hpp), each rendered
// twice, once with every value "a1" and once with a hostile string that carries what
// ends each context (quotes, "</script>", "-->", a javascript: scheme, line breaks...)
// or names another origin, each escaped by the function kilnc chose for it
// (kiln/escape.hpp, what the generated code calls). A partial or a layout's content
// prints an element (and the value as text), which the page must read as one. The two
// pages must agree in shape (page_compare.hpp). kilnc's reading of the HTML, the
// JavaScript and the C++ is judged by three independent ones: an HTML5 parser, a
// JavaScript tokenizer and a small grammar of statements.
#pragma once
#include <cstdint>
#include <string>

#include "kilnc/template_model.hpp"

namespace kiln::oracle {

// Empty when every run agrees (or the template's code is outside what paths.hpp reads);
// otherwise the difference, with both pages.
std::string check_escaping(const kilnc::Template& tpl, uint64_t seed);

// The hostile values (the plain one is "a1"): one ends every context it can, the other
// names another origin ("//evil.example/..."); each run uses one.
extern const char* const kHostileValue;
extern const char* const kHostileOrigin;

}  // namespace kiln::oracle
