#include "auth/timing_pad.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace kiln::auth {
namespace {

// The number after `key` ("m=", "t=") in the parameters field, or nullopt.
std::optional<uint64_t> number_after(std::string_view params, std::string_view key) {
    size_t at = 0;
    for (;;) {  // each parameter starts the field or follows a comma
        at = params.find(key, at);
        if (at == std::string_view::npos) return std::nullopt;
        if (at == 0 || params[at - 1] == ',') break;
        at += key.size();
    }
    uint64_t n = 0;
    const char* first = params.data() + at + key.size();
    auto [end, ec] = std::from_chars(first, params.data() + params.size(), n);
    if (ec != std::errc() || end == first) return std::nullopt;
    return n;
}

}  // namespace

std::optional<PasswordCost> cost_of(std::string_view hash) {
    constexpr std::string_view kPrefix = "$argon2id$v=19$";
    if (!hash.starts_with(kPrefix)) return std::nullopt;
    std::string_view params = hash.substr(kPrefix.size());
    params = params.substr(0, params.find('$'));
    std::optional<uint64_t> kib = number_after(params, "m="), passes = number_after(params, "t=");
    if (!kib || !passes || *kib == 0 || *passes == 0 || *kib > (uint64_t{4} << 20)) return std::nullopt;
    return PasswordCost{.passes = *passes, .memory = static_cast<size_t>(*kib) * 1024};
}

std::optional<PasswordCost> timing_pad(const PasswordCost& stored, const PasswordCost& current) {
    // In KiB × passes; a stored cost past 2^32 passes or 4 GiB cannot be (cost_of).
    uint64_t have = stored.passes * (stored.memory / 1024), want = current.passes * (current.memory / 1024);
    if (have >= want) return std::nullopt;
    uint64_t diff = want - have;
    if (diff < 8) return std::nullopt;  // below Argon2's smallest: nothing to tell
    // Never more memory than today's cost takes (a pad must not hold more than a
    // hash does): passes over at most that much.
    uint64_t kib = std::min<uint64_t>(diff, current.memory / 1024);
    uint64_t passes = (diff + kib - 1) / kib;
    return PasswordCost{.passes = passes, .memory = static_cast<size_t>(kib) * 1024};
}

}  // namespace kiln::auth
