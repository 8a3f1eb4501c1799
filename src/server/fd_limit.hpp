// The open-file limit (RLIMIT_NOFILE): every connection is a descriptor. A shell or
// systemd gives a process a soft limit of 1024 and a much higher hard one; the soft
// one would refuse connections past about a thousand per worker (accept: EMFILE).
// Raised once, before the workers start, so they inherit it.
#pragma once
#include <sys/types.h>

namespace kiln::server {

// Raises the soft limit to the hard one, and logs what a worker may hold: a warning
// when `max_connections` (limits.max_connections; 0, no cap) cannot fit under it.
void raise_fd_limit(size_t max_connections);

}  // namespace kiln::server
