// kiln::CookieOptions: the attributes of a cookie a response sets (RFC 6265).
// Defaults are the safe ones: Path=/, HttpOnly, SameSite=Lax. Request::cookie reads
// cookies; Response::cookie sets them; the signed forms add an HMAC-SHA256 over the
// name and value with the app's secret (config `secret`), so a client can read but
// not forge them.
#pragma once
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>

namespace kiln {

enum class SameSite : uint8_t { Unset, Strict, Lax, None };

struct CookieOptions {
    std::optional<int64_t> max_age;  // seconds; unset: a browser-session cookie
    std::optional<time_t> expires;   // absolute expiry (Max-Age wins where both are set)
    std::string domain;              // empty: this host only
    std::string path = "/";
    bool secure = false;             // also forced on by SameSite=None and Partitioned
    bool http_only = true;
    SameSite same_site = SameSite::Lax;
    bool partitioned = false;
};

}  // namespace kiln
