// Signed values: value "." base64url(HMAC-SHA256(secret, context "=" value)).
// The context (a cookie's name) binds a signature to where it was issued, so a
// signed value cannot be moved to another cookie. Verification is constant-time.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace kiln::app {

std::string sign(std::string_view secret, std::string_view context, std::string_view value);
// The value inside `signed_value` if its signature is right, else nullopt.
std::optional<std::string_view> verify(std::string_view secret, std::string_view context, std::string_view signed_value);

}  // namespace kiln::app
