#include "server/privileges.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace kiln::server {

std::string resolve_identity(const std::string& user, const std::string& group, Identity* out) {
    std::vector<char> buf(16384);
    passwd pw, *pwp = nullptr;
    if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &pwp) != 0 || !pwp) return "no such user '" + user + "'";
    out->uid = pw.pw_uid;
    out->gid = pw.pw_gid;
    out->user = user;
    if (!group.empty()) {
        ::group gr, *grp = nullptr;
        if (getgrnam_r(group.c_str(), &gr, buf.data(), buf.size(), &grp) != 0 || !grp) return "no such group '" + group + "'";
        out->gid = gr.gr_gid;
    }
    return {};
}

std::string drop_privileges(const Identity& id) {
    if (geteuid() != 0) return "switching to user '" + id.user + "' needs root";
    if (initgroups(id.user.c_str(), id.gid) != 0) return std::string("initgroups: ") + std::strerror(errno);
    if (setgid(id.gid) != 0) return std::string("setgid: ") + std::strerror(errno);
    if (setuid(id.uid) != 0) return std::string("setuid: ") + std::strerror(errno);
    if (id.uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) return "root could be regained after setuid";
    return {};
}

}  // namespace kiln::server
