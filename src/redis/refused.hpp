// Commands a pool connection must not carry. Every coroutine of a loop shares its
// connections, pipelined, replies matched to commands by order: a command that
// changes the connection (pub/sub, MONITOR, a transaction, SELECT) or holds it
// (BLPOP) would break that for all of them.
#pragma once
#include <string>
#include <string_view>

namespace kiln::redis::detail {

// Why the command in `wire` (RESP, as Args writes it) is refused; "" if it is not.
std::string refusal(std::string_view wire);

// Whether the command's receivers see the order of its calls (PUBLISH, SPUBLISH): a
// pool sends every one of them on the same connection, so one publisher's messages
// arrive in the order it published them.
bool keeps_order(std::string_view wire);

}  // namespace kiln::redis::detail
