#include "util/log.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>

namespace kiln::util {
namespace {
std::atomic<bool> g_enabled{true};
}

void set_log_enabled(bool on) { g_enabled.store(on, std::memory_order_relaxed); }

void log(LogLevel level, const char* fmt, ...) {
    if (!g_enabled.load(std::memory_order_relaxed)) return;
    char line[2048];
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    tm t;
    gmtime_r(&ts.tv_sec, &t);
    static constexpr const char* kNames[] = {"error", "warn", "info"};
    int n = std::snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02dZ [%s] [%d] ", t.tm_year + 1900,
                          t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                          kNames[static_cast<int>(level)], static_cast<int>(getpid()));
    va_list ap;
    va_start(ap, fmt);
    int m = std::vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
    va_end(ap);
    size_t len = static_cast<size_t>(n) + (m < 0 ? 0 : std::min<size_t>(m, sizeof line - n - 2));
    line[len++] = '\n';
    ssize_t ignored = ::write(STDERR_FILENO, line, len);
    (void)ignored;
}

}  // namespace kiln::util
