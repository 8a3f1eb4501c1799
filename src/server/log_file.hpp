// LogFile: where a log goes (stdout, stderr or a file opened O_APPEND), shared by
// every loop of the process; the access log and the error log each have one.
// reopen() swaps the file under the same fd (SIGUSR1, for logrotate). Writes to a
// pipe are cut at line ends in pieces of at most PIPE_BUF, so lines from several
// processes never interleave.
//
// A file is opened without following a symlink and must be a single-link regular
// file (or a FIFO or character device such as /dev/null). A process running as root
// also refuses a file whose directory someone other than root or the app user could
// write: they could swap the file for a link to /etc/shadow between two opens.
#pragma once
#include <sys/types.h>

#include <string>

namespace kiln::server {

// Who may own the log files and their directory besides root: the user the
// workers run as (--user), who must be able to reopen them.
struct LogOwner {
    uid_t uid = 0;
    gid_t gid = 0;
};

class LogFile {
public:
    // dest: "stdout", "stderr" or a path; what: "access log", for messages. As root,
    // `owner` (the app user) may own the directory; the file itself is not handed
    // over here (see hand_to). Returns "" or why it cannot be opened.
    std::string open(const std::string& dest, const char* what, LogOwner owner = {});
    // Gives the open file to `owner` (fchown on the descriptor, never the path).
    std::string hand_to(LogOwner owner);
    std::string reopen();  // same path again (no-op for stdout/stderr)
    void write(const char* data, size_t len) const;
    int fd() const { return fd_; }
    // A pipe or socket: only writes of at most PIPE_BUF bytes are kept whole.
    bool is_pipe() const { return pipe_; }
    LogFile() = default;
    LogFile(const LogFile&) = delete;
    LogFile& operator=(const LogFile&) = delete;
    ~LogFile();

private:
    int fd_ = -1;
    bool owned_ = false;
    bool pipe_ = false;
    std::string path_;
    const char* what_ = "log";
    LogOwner owner_;
};

}  // namespace kiln::server
