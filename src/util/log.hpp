// Minimal error log for the engine: one line per call, written with a single
// write(2) so lines from different threads never interleave. The full logging
// system (levels, files, access log) belongs to src/server.
#pragma once
#include <cstdarg>

namespace kiln::util {

enum class LogLevel { Error, Warn, Info };

void log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void set_log_enabled(bool on);

}  // namespace kiln::util
