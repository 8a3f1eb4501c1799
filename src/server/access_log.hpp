// The access log: AccessLog is one loop's writer of access lines, "combined"
// (Apache/nginx) or "json", into a LogFile (server/log_file.hpp). Lines go into its
// own buffer, written out when it passes 32 KiB and once a second, so the hot path
// takes no lock and makes no syscall. On a pipe (stdout under systemd or a container)
// a line is kept within PIPE_BUF (4096 bytes), so the lines of several workers never
// interleave: the longest of the client's fields are cut, each ending in "...", and a
// JSON line says "truncated":true. A file keeps every line whole.
#pragma once
#include <ctime>
#include <string>

#include "http/server.hpp"
#include "net/loop.hpp"
#include "server/log_file.hpp"

namespace kiln::server {

enum class AccessLogFormat { Combined, Json };

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
