#include "util/log.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <ctime>

namespace kiln::util {
namespace {
std::atomic<bool> g_enabled{true};
std::atomic<int> g_level{static_cast<int>(LogLevel::Info)};
std::atomic<int> g_fd{STDERR_FILENO};
}  // namespace

void set_log_enabled(bool on) { g_enabled.store(on, std::memory_order_relaxed); }
void set_log_level(LogLevel most_verbose) { g_level.store(static_cast<int>(most_verbose), std::memory_order_relaxed); }
void set_log_fd(int fd) { g_fd.store(fd, std::memory_order_relaxed); }

bool parse_log_level(const std::string& name, LogLevel* out) {
    if (name == "error") *out = LogLevel::Error;
    else if (name == "warn") *out = LogLevel::Warn;
    else if (name == "info") *out = LogLevel::Info;
    else return false;
    return true;
}

void log(LogLevel level, const char* fmt, ...) {
    if (!g_enabled.load(std::memory_order_relaxed)) return;
    if (static_cast<int>(level) > g_level.load(std::memory_order_relaxed)) return;
    char line[2048];
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    tm t;
    gmtime_r(&ts.tv_sec, &t);
    static constexpr const char* kNames[] = {"error", "warn", "info"};
    int n = std::snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02dZ [%s] [%d] ", t.tm_year + 1900,
                          t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                          kNames[static_cast<int>(level)], static_cast<int>(getpid()));
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    int m = std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t msg_len = m < 0 ? 0 : std::min<size_t>(static_cast<size_t>(m), sizeof msg - 1);
    // One event, one line: control bytes in the message (an exception's text, a
    // request target) become \xHH, so no one can forge or split a log line.
    size_t len = static_cast<size_t>(n);
    for (size_t i = 0; i < msg_len && len + 5 < sizeof line; ++i) {
        auto c = static_cast<unsigned char>(msg[i]);
        if (c >= 0x20 && c != 0x7f) {
            line[len++] = static_cast<char>(c);
            continue;
        }
        static constexpr char kHex[] = "0123456789ABCDEF";
        line[len++] = '\\';
        line[len++] = 'x';
        line[len++] = kHex[c >> 4];
        line[len++] = kHex[c & 15];
    }
    line[len++] = '\n';
    ssize_t ignored = ::write(g_fd.load(std::memory_order_relaxed), line, len);
    (void)ignored;
}

}  // namespace kiln::util
