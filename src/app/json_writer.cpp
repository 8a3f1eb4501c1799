#include <kiln/json_writer.hpp>

#include <cmath>

#include "util/utf8.hpp"

namespace kiln {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Appends s as a JSON string, quoted and escaped. Runs of plain bytes are copied
// in one append.
void append_string(std::string& out, std::string_view s) {
    out += '"';
    size_t run = 0;  // start of the bytes not yet copied
    size_t i = 0;
    while (i < s.size()) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            ++i;
            continue;
        }
        if (c >= 0x80) {
            size_t len = utf8::sequence_at(s, i);
            if (len > 0) {
                i += len;
                continue;
            }
        }
        out.append(s.data() + run, i - run);
        if (c >= 0x80) {  // one U+FFFD for each ill-formed run, as nlohmann's dump(replace)
            out += "\xEF\xBF\xBD";
            i += utf8::invalid_run(s, i);
            run = i;
            continue;
        }
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                out += "\\u00";  // the other control characters
                out += kHex[c >> 4];
                out += kHex[c & 0xF];
        }
        run = ++i;
    }
    out.append(s.data() + run, s.size() - run);
    out += '"';
}

}  // namespace

JsonWriter& JsonWriter::open(char c) {
    separate();
    out_ += c;
    need_comma_ = false;
    return *this;
}

JsonWriter& JsonWriter::close(char c) {
    out_ += c;
    need_comma_ = true;
    return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
    separate();
    append_string(out_, name);
    out_ += ':';
    need_comma_ = false;
    return *this;
}

JsonWriter& JsonWriter::null() {
    separate();
    out_ += "null";
    return *this;
}

JsonWriter& JsonWriter::value(bool v) {
    separate();
    out_ += v ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view v) {
    separate();
    append_string(out_, v);
    return *this;
}

JsonWriter& JsonWriter::number(double v) {
    if (!std::isfinite(v)) return null();
    separate();
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest exact form
    out_.append(buf, end);
    return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
    separate();
    out_ += json;
    return *this;
}

}  // namespace kiln
