// The error log: one line per call ("2026-11-22T07:00:00Z [error] [pid] text"),
// written with a single write(2) so lines from different threads and processes
// never interleave. Lines below the configured level are dropped before any
// formatting. The destination is a file descriptor the server layer sets up
// (stderr by default, stdout, or a file reopened on SIGUSR1).
#pragma once
#include <cstdarg>
#include <string>

namespace kiln::util {

enum class LogLevel { Error, Warn, Info };

void log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void set_log_enabled(bool on);
void set_log_level(LogLevel most_verbose);
// "error", "warn" or "info"; false for anything else.
bool parse_log_level(const std::string& name, LogLevel* out);
// Sends lines to fd (not owned; stays open for the process's life).
void set_log_fd(int fd);

}  // namespace kiln::util
