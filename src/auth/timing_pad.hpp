// A log-in's time must not tell whether its address has an account. An unknown one
// is checked against a decoy hashed at today's cost; a known one against its stored
// hash, made at the cost of its last log-in. After the cost is raised, a dormant
// account's hash checks faster than the decoy, so a log-in with a wrong password
// would show that the address is known. The difference is made up with a hash of
// its own (Argon2's time grows with passes × memory).
#pragma once
#include <optional>
#include <string_view>

#include <kiln/auth.hpp>

namespace kiln::auth {

// The cost an Argon2id hash string was made at ("$argon2id$v=19$m=65536,t=2,p=1$..."),
// or nullopt for another kind of string.
std::optional<PasswordCost> cost_of(std::string_view hash);

// The extra hash that brings checking a hash made at `stored` up to the time of one
// made at `current` (passes × memory of the difference, in no more memory than
// `current`'s); nullopt when it needs none (or less than Argon2's smallest).
std::optional<PasswordCost> timing_pad(const PasswordCost& stored, const PasswordCost& current);

}  // namespace kiln::auth
