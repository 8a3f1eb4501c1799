// Fuzzes path normalization and the query helpers. On Ok the normalized path is
// absolute, has no empty, "." or ".." segment, and is a fixed point (when it holds no
// '%': decoding twice would be wrong, so "%25" legitimately survives as "%"). A path
// that path_needs_normalizing() lets through unchanged must already be normal.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "http/url.hpp"

using namespace kiln::http;

namespace {

void check_normal(std::string_view p) {
    FUZZ_CHECK(!p.empty() && p[0] == '/');
    FUZZ_CHECK(p.find("//") == p.npos);
    size_t i = 1;
    while (i <= p.size()) {
        size_t slash = p.find('/', i);
        std::string_view seg = p.substr(i, slash == p.npos ? p.npos : slash - i);
        FUZZ_CHECK(seg != "." && seg != "..");
        if (slash == p.npos) break;
        i = slash + 1;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view raw(reinterpret_cast<const char*>(data), size);

    std::string out;
    PathStatus s = normalize_path(raw, out);
    if (s == PathStatus::Ok) {
        check_normal(out);
        FUZZ_CHECK(out.size() <= raw.size() + 1);
        if (out.find('%') == out.npos) {
            std::string again;
            FUZZ_CHECK(normalize_path(out, again) == PathStatus::Ok);
            FUZZ_CHECK(again == out);
        }
    }
    if (!path_needs_normalizing(raw)) {
        FUZZ_CHECK(s == PathStatus::Ok);
        FUZZ_CHECK(out == raw);
    }

    std::string comp;
    if (decode_component(raw, comp, size > 0 && (data[0] & 1))) FUZZ_CHECK(comp.size() <= raw.size());
    for_each_query_pair(raw, [&](std::string_view name, std::string_view value) {
        FUZZ_CHECK(name.data() >= raw.data() && name.data() + name.size() <= raw.data() + raw.size());
        FUZZ_CHECK(value.empty() || (value.data() > raw.data() && value.data() + value.size() <= raw.data() + raw.size()));
        FUZZ_CHECK(name.find('&') == name.npos && value.find('&') == value.npos);
    });
    return 0;
}
