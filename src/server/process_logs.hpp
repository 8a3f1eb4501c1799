// The process's own log files: the error log (util::log writes to it once it is
// open) and, through the caller, the access log. Reopened together on SIGUSR1
// (logrotate moved them). One per process, for its whole life.
#pragma once
#include <string>

#include <kiln/server.hpp>

#include "server/log_file.hpp"

namespace kiln::server {

LogFile& error_log();
// Opens `log.error` unless it is stderr and sends util::log there; "" or why not.
std::string open_error_log(const ServerOptions& o, LogOwner owner);
// SIGUSR1: new files under the same names (the access log if there is one).
void reopen_logs(LogFile* access);

}  // namespace kiln::server
