// The access log's field escapers, apart from AccessLog so that they can be tested
// and fuzzed alone (tests/fuzz/fuzz_log_escape.cpp). Both append to `out`; neither
// lets through a byte that could end the field or the line (a control byte, DEL or
// a bare '"'), so a hostile header cannot forge a log line. Pure functions: any thread.
#pragma once
#include <string>
#include <string_view>

namespace kiln::server {

// A quoted field of the combined format: '"', '\', bytes below 0x20 and from 0x7f up
// become \xHH (upper-case hex). An empty field is written as "-", as Apache and nginx do.
void append_clf(std::string& out, std::string_view s);

// A JSON string literal, quotes included: '"' and '\' escaped, \n \r \t by name, other
// bytes below 0x20 and DEL as \u00hh, well-formed UTF-8 as it is. Each ill-formed run
// (a "maximal subpart", Unicode 15 §3.9) becomes \ufffd, so the line is always valid
// JSON for the tools that read it (nginx's escape=json passes such bytes through and
// leaves a line strict parsers refuse). The combined format keeps those bytes exactly.
void append_json_string(std::string& out, std::string_view s);

}  // namespace kiln::server
