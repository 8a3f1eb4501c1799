// The cookie jar of one benchmark session (one batch): what a browser keeps
// between requests and across reconnects, reduced to what a session needs.
// Set-Cookie: the name=value pair is kept; attributes are ignored, except that
// Max-Age=0 (or negative) removes the cookie. Domain and path are not checked: the
// client talks to one origin. Owned by one batch, on one loop thread.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::bench {

class CookieJar {
public:
    enum class Change { None, Set, Removed };
    // Applies one Set-Cookie field value. Set: a new cookie or a new value; None:
    // the same value again, or a malformed field (ignored).
    Change apply(std::string_view set_cookie);

    // "Cookie: a=1; b=2\r\n", or "" when the jar is empty. Rebuilt only on change.
    const std::string& header_line() const { return line_; }
    size_t size() const { return cookies_.size(); }
    // Value of a cookie, or nullptr.
    const std::string* find(std::string_view name) const;

private:
    void rebuild();
    std::vector<std::pair<std::string, std::string>> cookies_;  // in order first set
    std::string line_;
};

}  // namespace kiln::bench
