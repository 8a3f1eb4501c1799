#include "util/siphash.hpp"


namespace kiln::util {
namespace {

constexpr uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

struct State {
    uint64_t v0, v1, v2, v3;

    void round() {
        v0 += v1;
        v1 = rotl(v1, 13) ^ v0;
        v0 = rotl(v0, 32);
        v2 += v3;
        v3 = rotl(v3, 16) ^ v2;
        v0 += v3;
        v3 = rotl(v3, 21) ^ v0;
        v2 += v1;
        v1 = rotl(v1, 17) ^ v2;
        v2 = rotl(v2, 32);
    }

    void absorb(uint64_t m) {
        v3 ^= m;
        round();
        round();
        v0 ^= m;
    }
};

uint64_t little_endian(const unsigned char* p, size_t n) {
    uint64_t m = 0;
    for (size_t i = 0; i < n; ++i) m |= static_cast<uint64_t>(p[i]) << (8 * i);
    return m;
}

}  // namespace

uint64_t siphash24(const SipKey& key, const void* data, size_t n) {
    // The four words start as the key xored with "somepseudorandomlygeneratedbytes".
    State s{key.k0 ^ 0x736f6d6570736575ull, key.k1 ^ 0x646f72616e646f6dull, key.k0 ^ 0x6c7967656e657261ull,
            key.k1 ^ 0x7465646279746573ull};
    const auto* p = static_cast<const unsigned char*>(data);
    size_t whole = n & ~size_t{7};
    for (size_t i = 0; i < whole; i += 8) s.absorb(little_endian(p + i, 8));
    // The last block: the bytes left over, and the length's low byte on top.
    s.absorb(little_endian(p + whole, n - whole) | (static_cast<uint64_t>(n & 0xff) << 56));
    s.v2 ^= 0xff;
    for (int i = 0; i < 4; ++i) s.round();
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

}  // namespace kiln::util
