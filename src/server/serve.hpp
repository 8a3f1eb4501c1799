// Serves an app from this process: one event loop per thread, one per fd group
// (its listening sockets), until a stop signal, then drains (stop accepting,
// finish in-flight requests for up to drain_timeout, exit). In a worker only
// SIGTERM (from the supervisor) stops; Ctrl-C in a terminal reaches the whole
// process group, and the supervisor turns it into that SIGTERM. SIGUSR1 reopens
// the log files. Returns the exit status (kExitRecycled: prefork's budget spent).
#pragma once
#include <signal.h>

#include <kiln/app.hpp>
#include <kiln/server.hpp>
#include <kiln/session.hpp>

#include "http/rate_table.hpp"
#include "server/supervisor.hpp"  // FdGroups, kExitRecycled
#include "server/ticket_segment.hpp"

namespace kiln::server {

// The signals serve() takes (SIGTERM, SIGUSR1; a lone server's SIGINT and SIGHUP
// too; a worker ignores SIGINT and SIGHUP), blocked in the calling thread: called
// before the app's hooks, so a thread a hook starts inherits them blocked and the
// kernel never hands them to it (their default action would end the process).
sigset_t block_stop_signals(bool worker);

// ready_fd: the supervisor's pipe, written once every loop serves (-1: none).
// rate: limits.rate's table (null: no rate limit).
// tickets: the node's TLS session-ticket keys (null: no TLS); a lone server
// (worker false) rotates them itself, every tls.ticket_rotate_s.
int serve(const App& app, const SessionStore* sessions, const ServerOptions& opts, const FdGroups& fds, int ready_fd,
          bool worker, http::RateTable* rate = nullptr, TicketSegment* tickets = nullptr);

}  // namespace kiln::server
