// Secrets from the kernel's CSPRNG (getrandom): session ids, CSRF tokens, the
// generated cookie key. Throws std::runtime_error if the kernel refuses (never on a
// running Linux once the pool is seeded).
#pragma once
#include <cstddef>
#include <string>

namespace kiln::util {

void random_bytes(void* out, size_t n);
// n random bytes as 2n lower-case hex digits.
std::string random_hex(size_t n);
// Lower-case hex of `n` bytes into out[0 .. 2n).
void to_hex(const void* bytes, size_t n, char* out);

}  // namespace kiln::util
