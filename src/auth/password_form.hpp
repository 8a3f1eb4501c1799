// What Accounts asks of a password's Unicode beyond its normal form.
#pragma once

#include <string_view>

namespace kiln::auth {

// Whether `text` (UTF-8) holds a code point this build's Unicode tables (utf8proc's)
// leave unassigned (general category Cn, noncharacters included). Its normal form may
// change once a later Unicode assigns it (RFC 8265 refuses such code points in
// passwords for that reason): a password hashed normalized so today could be locked
// out by an upgrade of the library. Text that is not UTF-8: false (Accounts refuses
// it on its own).
bool has_unassigned(std::string_view text);

}  // namespace kiln::auth
