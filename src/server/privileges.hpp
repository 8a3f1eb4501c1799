// Dropping root after the sockets are bound: port 80 as root, then run as an
// unprivileged user. Done once in the process that owns the sockets (the
// supervisor, or the single process), before any worker starts, so nothing runs
// as root afterwards; reloads need no privilege (workers inherit the sockets).
#pragma once
#include <sys/types.h>

#include <string>

namespace kiln::server {

struct Identity {
    uid_t uid = 0;
    gid_t gid = 0;
    std::string user;
};

// Looks the names up (group defaults to the user's primary group). Returns "" or why not.
std::string resolve_identity(const std::string& user, const std::string& group, Identity* out);
// setgroups/setgid/setuid, then checks that root cannot be regained. Returns "" or why not.
std::string drop_privileges(const Identity& id);

}  // namespace kiln::server
