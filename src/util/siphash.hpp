// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed 64-bit hash of short inputs.
// Where a client chooses what is hashed (its address, for a table slot), an unkeyed
// hash lets it pick inputs that collide; with a secret key it cannot.
#pragma once
#include <cstddef>
#include <cstdint>

namespace kiln::util {

struct SipKey {
    uint64_t k0, k1;
};

uint64_t siphash24(const SipKey& key, const void* data, size_t n);

}  // namespace kiln::util
