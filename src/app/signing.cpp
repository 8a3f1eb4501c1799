#include "app/signing.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <charconv>
#include <stdexcept>

namespace kiln::app {
namespace {
constexpr size_t kMacBytes = 32;
constexpr size_t kMacChars = 43;  // base64url of 32 bytes, unpadded

std::string mac_text(std::string_view secret, std::string_view context, std::string_view value) {
    if (secret.empty()) throw std::logic_error("signed cookies need a secret (config `secret` or KILN_SECRET)");
    std::string msg;
    msg.reserve(context.size() + 1 + value.size());
    msg.append(context).append(1, '=').append(value);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
              reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), mac, &len) || len != kMacBytes)
        throw std::runtime_error("HMAC-SHA256 failed");
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    out.reserve(kMacChars);
    uint32_t acc = 0;
    int bits = 0;
    for (unsigned i = 0; i < len; ++i) {
        acc = (acc << 8) | mac[i];
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out.push_back(kAlphabet[(acc >> bits) & 63]);
        }
    }
    if (bits > 0) out.push_back(kAlphabet[(acc << (6 - bits)) & 63]);
    return out;
}
}  // namespace

std::string sign(std::string_view secret, std::string_view context, std::string_view value, int64_t expires_at) {
    std::string out(value);
    out.append(1, '.').append(std::to_string(expires_at));
    std::string mac = mac_text(secret, context, out);
    out.append(1, '.').append(mac);
    return out;
}

std::optional<std::string_view> verify(std::string_view secret, std::string_view context, std::string_view signed_value,
                                       int64_t now) {
    if (signed_value.size() < kMacChars + 1 || signed_value[signed_value.size() - kMacChars - 1] != '.')
        return std::nullopt;
    std::string_view signed_part = signed_value.substr(0, signed_value.size() - kMacChars - 1);
    std::string expected = mac_text(secret, context, signed_part);
    if (CRYPTO_memcmp(expected.data(), signed_value.data() + signed_part.size() + 1, kMacChars) != 0) return std::nullopt;
    // Signed, so well-formed unless the secret signed garbage: still checked.
    size_t dot = signed_part.rfind('.');
    if (dot == std::string_view::npos) return std::nullopt;
    std::string_view expiry = signed_part.substr(dot + 1);
    int64_t expires_at = 0;
    auto [end, ec] = std::from_chars(expiry.data(), expiry.data() + expiry.size(), expires_at);
    if (ec != std::errc() || end != expiry.data() + expiry.size() || now >= expires_at) return std::nullopt;
    return signed_part.substr(0, dot);
}

}  // namespace kiln::app
