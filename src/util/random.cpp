#include "util/random.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace kiln::util {

void random_bytes(void* out, size_t n) {
    auto* p = static_cast<unsigned char*>(out);
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(p + got, n - got, 0);
        if (r > 0) got += static_cast<size_t>(r);
        else if (errno != EINTR) throw std::runtime_error(std::string("getrandom failed: ") + std::strerror(errno));
    }
}

void to_hex(const void* bytes, size_t n, char* out) {
    static constexpr char kHex[] = "0123456789abcdef";
    const auto* p = static_cast<const unsigned char*>(bytes);
    for (size_t i = 0; i < n; ++i) {
        out[2 * i] = kHex[p[i] >> 4];
        out[2 * i + 1] = kHex[p[i] & 15];
    }
}

std::string random_hex(size_t n) {
    std::string raw(n, '\0');
    random_bytes(raw.data(), n);
    std::string out(2 * n, '\0');
    to_hex(raw.data(), n, out.data());
    return out;
}

}  // namespace kiln::util
