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
// bytes below 0x20 and DEL as \u00hh. Bytes from 0x80 up pass through, as nginx's
// escape=json does: the literal is valid JSON exactly when `s` is valid UTF-8.
void append_json_string(std::string& out, std::string_view s);

}  // namespace kiln::server
