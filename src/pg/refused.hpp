// Statements the shared, pipelined connection must not carry. Every coroutine of a
// loop sends its statements there, each its own implicit transaction: one that opens
// a transaction block, leaves pipeline mode (COPY), waits for notifications or changes
// the session would change them for all.
#pragma once
#include <string>
#include <string_view>

namespace kiln::pg::detail {

// Why `sql` is refused on the shared connection; "" if it is not. Looks at its first
// keyword (after blanks and comments): the server refuses what hides later (a second
// statement in one string is a syntax error in the extended protocol); and anywhere
// in the text for what changes_session() finds, and for any set_config (a local one
// reaches the SELECTs sent beside it, which share its implicit transaction).
std::string refusal(std::string_view sql);

// Whether `sql`, run inside a transaction, may change its session beyond the commit:
// SET (not LOCAL, TRANSACTION or CONSTRAINTS), RESET, DISCARD, PREPARE, DEALLOCATE,
// LISTEN, UNLISTEN, LOAD, DECLARE ... WITH HOLD, CREATE [OR REPLACE] TEMP..., SELECT
// ... INTO TEMP, a set_config whose is_local is not a literal true, or a session-level
// advisory lock, anywhere in the text. Errs on the side of true (a word in a string
// literal counts).
bool changes_session(std::string_view sql);

}  // namespace kiln::pg::detail
