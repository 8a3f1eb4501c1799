// Log destinations and the access log. LogFile is a destination (stdout, stderr
// or a file opened O_APPEND) shared by every loop of the process; reopen() swaps
// the file under the same fd (SIGUSR1, for logrotate). Both the access log and
// the error log use one. AccessLog is one loop's writer of access lines,
// "combined" (Apache/nginx) or "json": lines go into its own
// buffer, written out when it passes 32 KiB and once a second, so the hot path
// takes no lock and makes no syscall. Writes to a pipe are cut at line ends in
// pieces of at most PIPE_BUF, so lines from several processes never interleave.
#pragma once
#include <ctime>
#include <string>

#include "http/server.hpp"
#include "net/loop.hpp"

namespace kiln::server {

enum class AccessLogFormat { Combined, Json };

class LogFile {
public:
    // dest: "stdout", "stderr" or a path; what: "access log", for messages.
    // Returns "" or why it cannot be opened.
    std::string open(const std::string& dest, const char* what);
    std::string reopen();  // same path again (no-op for stdout/stderr)
    void write(const char* data, size_t len) const;
    int fd() const { return fd_; }
    ~LogFile();

private:
    int fd_ = -1;
    bool owned_ = false;
    bool pipe_ = false;
    std::string path_;
    const char* what_ = "log";
};

class AccessLog final : public http::Observer {
public:
    AccessLog(net::Loop& loop, const LogFile& file, AccessLogFormat format);
    ~AccessLog();  // flushes
    void on_response(const Record& r) override;
    void flush();

private:
    void refresh_date(time_t now);
    net::Loop& loop_;
    const LogFile& file_;
    AccessLogFormat format_;
    std::string buf_;
    net::Timer tick_;
    time_t date_second_ = -1;
    std::string date_;  // "[22/Nov/2026:06:49:00 +0000]" or "2026-11-22T06:49:00Z"
};

}  // namespace kiln::server
