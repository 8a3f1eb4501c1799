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

}  // namespace kiln::redis::detail
