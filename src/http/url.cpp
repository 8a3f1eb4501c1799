#include "http/url.hpp"

#include "http/chars.hpp"

namespace kiln::http {

bool path_needs_normalizing(std::string_view raw) {
    for (size_t i = 0; i < raw.size(); ++i) {
        char c = raw[i];
        if (c == '%') return true;
        if (c == '/' && i + 1 < raw.size() && (raw[i + 1] == '/' || raw[i + 1] == '.')) return true;
    }
    return raw.empty() || raw[0] != '/';
}

bool decode_component(std::string_view in, std::string& out, bool plus_is_space) {
    out.clear();
    out.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        char c = in[i];
        if (c == '%') {
            int hi = i + 2 < in.size() ? chars::hex_digit(in[i + 1]) : -1;
            int lo = hi >= 0 ? chars::hex_digit(in[i + 2]) : -1;
            if (lo < 0) return false;
            out.push_back(static_cast<char>(hi * 16 + lo));
            i += 2;
        } else {
            out.push_back(plus_is_space && c == '+' ? ' ' : c);
        }
    }
    return true;
}

PathStatus normalize_path(std::string_view raw, std::string& out) {
    out.clear();
    out.reserve(raw.size() + 1);
    out.push_back('/');
    // Walk decoded bytes; a segment is finished at each '/'.
    size_t seg_start = 1;  // index in out where the current segment begins
    auto finish_segment = [&](bool at_end) {
        std::string_view seg(out.data() + seg_start, out.size() - seg_start);
        if (seg == "." || seg == "..") {
            bool dotdot = seg.size() == 2;  // decide before resize: seg views `out`
            out.resize(seg_start);  // drop the segment itself
            if (dotdot && seg_start > 1) {
                size_t prev = out.rfind('/', seg_start - 2);
                out.resize(prev + 1);  // drop the previous segment, keep its leading '/'
            }
            seg_start = out.size();
            return;
        }
        if (seg.empty()) return;  // merge "//"
        if (!at_end) {
            out.push_back('/');
            seg_start = out.size();
        }
    };
    for (size_t i = 0; i < raw.size(); ++i) {
        char c = raw[i];
        if (c == '%') {
            int hi = i + 2 < raw.size() ? chars::hex_digit(raw[i + 1]) : -1;
            int lo = hi >= 0 ? chars::hex_digit(raw[i + 2]) : -1;
            if (lo < 0) return PathStatus::BadEscape;
            c = static_cast<char>(hi * 16 + lo);
            if (c == '\0') return PathStatus::NulByte;
            if (c == '/') return PathStatus::EncodedSlash;
            i += 2;
        }
        if (c == '/') finish_segment(false);
        else out.push_back(c);
    }
    finish_segment(true);
    return PathStatus::Ok;
}

}  // namespace kiln::http
