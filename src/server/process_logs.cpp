#include "server/process_logs.hpp"

#include "util/log.hpp"

namespace kiln::server {

LogFile& error_log() {
    static LogFile file;
    return file;
}

std::string open_error_log(const ServerOptions& o, LogOwner owner) {
    if (o.error_log == "stderr") return {};
    if (std::string e = error_log().open(o.error_log, "error log", owner); !e.empty()) return e;
    util::set_log_fd(error_log().fd());
    return {};
}

// SIGUSR1: logrotate moved the files; start new ones under the same names.
void reopen_logs(LogFile* access) {
    for (LogFile* f : {access, &error_log()}) {
        if (!f) continue;
        if (std::string e = f->reopen(); !e.empty()) util::log(util::LogLevel::Error, "%s", e.c_str());
    }
}

}  // namespace kiln::server
