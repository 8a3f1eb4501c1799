#include "server/fd_limit.hpp"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

#include "util/log.hpp"

namespace kiln::server {
namespace {
// What a worker holds besides its connections: listeners, epoll, eventfds and timers,
// log files, database and Redis connections, files being sent or uploaded.
constexpr rlim_t kHeadroom = 128;
}  // namespace

void raise_fd_limit(size_t max_connections) {
    rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
    if (lim.rlim_cur < lim.rlim_max) {
        rlim_t was = lim.rlim_cur;
        lim.rlim_cur = lim.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
            util::log(util::LogLevel::Warn, "cannot raise the open-file limit from %llu to %llu: %s",
                      static_cast<unsigned long long>(was), static_cast<unsigned long long>(lim.rlim_max),
                      std::strerror(errno));
            lim.rlim_cur = was;
        }
    }
    const auto limit = static_cast<unsigned long long>(lim.rlim_cur);
    if (lim.rlim_cur == RLIM_INFINITY) return;
    if (max_connections > 0 && lim.rlim_cur < max_connections + kHeadroom)
        util::log(util::LogLevel::Warn, "the open-file limit (RLIMIT_NOFILE) is %llu, too low for limits.max_connections "
                  "(%zu) and the %llu descriptors a worker needs besides: connections past it are refused without "
                  "an answer; raise the hard limit (LimitNOFILE= in a systemd unit, ulimit -Hn)",
                  limit, max_connections, static_cast<unsigned long long>(kHeadroom));
    else
        util::log(util::LogLevel::Info, "open-file limit %llu: at most about %llu connections per worker process", limit,
                  limit > kHeadroom ? limit - kHeadroom : 0);
}

}  // namespace kiln::server
