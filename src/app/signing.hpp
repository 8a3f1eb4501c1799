// Signed values: value "." expiry "." base64url(HMAC-SHA256(secret, context "="
// value "." expiry)), where expiry is the Unix time after which the signature is
// worth nothing: a copied cookie stops working when its Max-Age says it should,
// whatever the client keeps. The context (a cookie's name) binds a signature to
// where it was issued, so a signed value cannot be moved to another cookie.
// Verification is constant-time.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::app {

// Without an expiry of its own a signed value lasts this long (400 days: the most
// any browser keeps a cookie, RFC 6265bis).
inline constexpr int64_t kSignedDefaultLifetime = 400LL * 24 * 60 * 60;

std::string sign(std::string_view secret, std::string_view context, std::string_view value, int64_t expires_at);
// The value inside `signed_value` if its signature is right and `now` is before
// its expiry, else nullopt.
std::optional<std::string_view> verify(std::string_view secret, std::string_view context, std::string_view signed_value,
                                       int64_t now);

}  // namespace kiln::app
