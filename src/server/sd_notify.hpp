// systemd's readiness protocol (sd_notify), without libsystemd: when the service
// manager gave NOTIFY_SOCKET, the supervisor (or a lone server) tells it READY=1
// once every worker serves, RELOADING=1 at SIGHUP and READY=1 again when the new
// workers serve, STOPPING=1 at a stop. With Type=notify, systemctl start returns
// when the node really serves. Without NOTIFY_SOCKET, nothing is sent.
#pragma once
#include <string_view>

namespace kiln::server {

void sd_notify(std::string_view state);

}  // namespace kiln::server
