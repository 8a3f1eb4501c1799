// Request-target helpers: percent-decoding and path normalization. Pure functions.
// The decoded path is what routing and static files see: it is always absolute,
// has no "." or ".." segments and no empty segments, so it can never climb above "/".
#pragma once
#include <string>
#include <string_view>

namespace kiln::http {

enum class PathStatus { Ok, BadEscape, NulByte, EncodedSlash };

// True if `raw` must go through normalize_path (it has '%', a dot segment or "//");
// otherwise the raw path is already normal and can be used as is, without a copy.
bool path_needs_normalizing(std::string_view raw);

// Decodes %XX escapes, merges repeated slashes and resolves "." and ".." (also
// encoded), never above the root. Writes the result to `out`. A trailing slash is
// kept. An encoded slash (%2F) is EncodedSlash, refused as Apache and Tomcat refuse
// it by default: "/a%2Fb" is one segment to a proxy matching raw paths and two to
// us, and that difference is how a proxy's rule is walked around.
PathStatus normalize_path(std::string_view raw, std::string& out);

// Decodes one URL component (query names/values); '+' is a space when plus_is_space.
// Returns false on a malformed escape; `out` then holds a partial result.
bool decode_component(std::string_view in, std::string& out, bool plus_is_space);

// Calls fn(name, value) with the raw (still encoded) pieces of "a=1&b=2".
template <class Fn>
void for_each_query_pair(std::string_view q, Fn&& fn) {
    while (!q.empty()) {
        size_t amp = q.find('&');
        std::string_view pair = q.substr(0, amp);
        q = amp == q.npos ? std::string_view() : q.substr(amp + 1);
        if (pair.empty()) continue;
        size_t eq = pair.find('=');
        fn(pair.substr(0, eq), eq == pair.npos ? std::string_view() : pair.substr(eq + 1));
    }
}

}  // namespace kiln::http
