// App::run: reads the settings, then either serves as a worker of a supervisor
// (started by exec with its sockets inherited), or prepares the node (logs,
// session store, listening sockets, privileges, the secret) and serves alone or
// supervises worker processes (server/supervisor.hpp), which land here again.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <kiln/app.hpp>
#include <kiln/redis.hpp>
#include <kiln/server.hpp>

#include "app/app_impl.hpp"
#include "app/ws_bus.hpp"
#include "server/config.hpp"
#include "server/fd_limit.hpp"
#include "server/stats.hpp"
#include "server/topics_redis.hpp"
#include "server/listeners.hpp"
#include "server/privileges.hpp"
#include "server/process_logs.hpp"
#include "server/secret_handoff.hpp"
#include "server/serve.hpp"
#include "server/rate_segment.hpp"
#include "server/session_segment.hpp"
#include "server/supervisor.hpp"
#include "server/ticket_segment.hpp"
#include "server/tls_setup.hpp"
#include "util/log.hpp"
#include "util/random.hpp"

namespace kiln {
namespace {

// `--routes`: one line per route, "METHOD  PATTERN", an App::files mount as
// "GET  /prefix/*path (files: DIR)"; the app exits 0 without serving.
void print_routes(const std::vector<RouteInfo>& routes) {
    size_t width = 0;
    for (const RouteInfo& r : routes) width = std::max(width, r.method.size());
    for (const RouteInfo& r : routes) {
        std::printf("%-*s  %s", static_cast<int>(width), r.method.c_str(), r.pattern.c_str());
        if (!r.files_dir.empty()) std::printf(" (files: %s)", r.files_dir.c_str());
        std::putchar('\n');
    }
}

int refuse(const std::string& why) {
    std::fprintf(stderr, "kiln: %s\n", why.c_str());
    return 2;
}

// How many processes and loops, from the settings and the cores.
struct Plan {
    unsigned processes;  // 0: no supervisor
    unsigned threads;    // loops per process
    bool prefork;
    size_t loops() const { return prefork ? 1 : static_cast<size_t>(std::max(1u, processes)) * threads; }
};

std::string plan(const ServerOptions& o, Plan* out) {
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    out->prefork = o.mpm == Mpm::Prefork;
    // Prefork processes each hold one connection, so there are more of them.
    out->processes = o.workers >= 0 ? static_cast<unsigned>(o.workers) : out->prefork ? 4 * cores : cores;
    if (out->prefork && out->processes == 0) return "--mpm prefork needs worker processes (--workers >= 1)";
    out->threads = out->prefork ? 1 : o.threads ? o.threads : std::max(1u, cores / std::max(1u, out->processes));
    return {};
}

std::string resolve_user(const ServerOptions& o, server::Identity* id) {
    if (!o.group.empty() && o.user.empty()) return "group '" + o.group + "' given without a user";
    if (o.user.empty()) return {};
    if (std::string e = server::resolve_identity(o.user, o.group, id); !e.empty()) return e;
    if (geteuid() != 0) return "switching to user '" + o.user + "' needs root";
    return {};
}

// Log files created as root go to the user the workers run as (they reopen them):
// handed over by descriptor, never by path, so no link can redirect it. The
// access log is opened here only to fail now, not in every worker.
std::string open_logs(const ServerOptions& o, const server::Identity& id) {
    server::LogOwner owner{id.uid, id.gid};
    server::LogFile access_probe;
    std::string e = server::open_error_log(o, owner);
    if (e.empty() && o.access_log != "off") e = access_probe.open(o.access_log, "access log", owner);
    if (e.empty() && !o.user.empty()) e = server::error_log().hand_to(owner);
    if (e.empty() && !o.user.empty()) e = access_probe.hand_to(owner);
    return e;
}

// The set-up the app asked for (App::on_node_start, on_worker_start); "" or why the
// start stops.
std::string run_hooks(const std::vector<App::StartHook>& hooks, const ServerOptions& o, const char* which) {
    for (const App::StartHook& hook : hooks) {
        try {
            hook(o);
        } catch (const std::exception& e) {
            return std::string(which) + " set-up failed: " + e.what();
        } catch (...) {
            return std::string(which) + " set-up failed";
        }
    }
    return {};
}

}  // namespace

int App::run(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--routes") == 0) {
            print_routes(route_list());
            return 0;
        }
    }
    ServerOptions options;
    int status = 0;
    if (!parse_server_flags(argc, argv, &options, &status)) return status;
    return run(options);
}

int App::run(const ServerOptions& options) {
    util::set_log_enabled(options.log_errors);
    util::LogLevel level = util::LogLevel::Info;
    util::parse_log_level(options.log_level, &level);
    util::set_log_level(level);
    std::signal(SIGPIPE, SIG_IGN);
    if (std::string e = server::check_options(options); !e.empty()) return refuse(e);
    bool force_secure = server::cookie_needs_secure(options.session_cookie);
    impl_->session_options = {options.session_cookie,
                              force_secure ? SessionOptions::Secure::Always : options.session_secure};
    impl_->secret = options.secret;
    impl_->settings = options.app_settings;
    if (options.session_store == "redis" && !has_session_store()) {
        redis::SessionStoreOptions so;
        so.prefix = options.redis_prefix;
        so.idle_timeout_s = options.session_idle_timeout_s;
        so.max_age_s = options.session_max_age_s;
        so.max_bytes = options.session_max_bytes;
        session_store(redis::session_store(redis::options_from(options), so));
    }
    server::SessionSegment sessions;  // the default session store's memory
    server::RateSegment rates;        // limits.rate's table, when it is on

    // A worker: everything was prepared by the supervisor.
    int ready_fd = -1;
    if (server::FdGroups fds = server::inherited_listeners(&ready_fd); !fds.empty()) {
        // Taken (the memfd closed, the variables gone) even when the app's options
        // came from code rather than load_config_env: processes a handler starts must
        // not inherit the memfd and the passwords in it.
        (void)server::take_env_secrets();
        if (std::string e = server::open_error_log(options, {}); !e.empty()) return refuse(e);
        if (std::string e = server::check_inherited(options, fds); !e.empty()) return refuse(e);
        if (!has_session_store()) {
            // Refused, not served without sessions (every session use a 500, every
            // form a 403): a reload then fails, and the old workers go on.
            if (std::string e = sessions.adopt_from_env(); !e.empty()) return refuse(e);
            impl_->store = sessions.store();
        } else {
            server::SessionSegment::drop_env();
        }
        if (impl_->secret.empty()) impl_->secret = server::take_env_secrets().generated;
        ServerOptions worker_options = options;
        if (options.tls_self_signed) worker_options.tls_generated_pem = server::take_env_secrets().tls_pem;
        server::TicketSegment tickets;  // the node's TLS ticket keys, when it has TLS
        bool shared_tickets = tickets.adopt_from_env();
        // Taken even when off (a reload turned it off): not for a handler's children.
        const bool rate_table = rates.adopt_from_env();
        // Refused, not served unlimited: a reload that turns it on then fails, and says why.
        if (options.rate > 0 && !rate_table)
            return refuse("limits.rate is on, but no rate table came from the supervisor: the table is made once, "
                          "when the node starts, if limits.rate is on then (and laid out by the kiln it started "
                          "as); restart the node to turn it on");
        if (rate_table && rates.table()->slots() != options.rate_table_slots)
            util::log(util::LogLevel::Warn, "limits.rate_table = %zu: the node keeps its %zu slots until it restarts",
                      options.rate_table_slots, rates.table()->slots());
        server::block_stop_signals(true);  // before the hooks: the threads they start inherit it
        if (std::string e = run_hooks(impl_->worker_start, options, "worker"); !e.empty()) {
            util::log(util::LogLevel::Error, "%s", e.c_str());
            return 2;
        }
        if (options.topics_store == "redis") {
            server::share_topics_through_redis(options);  // publish() reaches every node's workers
        } else {  // the node's other workers, through the bus (its slots: the statistics cells)
            int cell = -1;
            unsigned cells = 0;
            const char* dir = std::getenv(server::kEnvBusDir);
            if (server::SharedStats::peek_env(&cell, &cells) && cell >= 0) {
                if (dir && *dir)
                    app::place_ws_bus(dir, static_cast<unsigned>(cell), cells);
                else if (!dir)  // (an empty one: the supervisor could not make it, and said why)
                    util::log(util::LogLevel::Error, "the supervisor, started from an older kiln, names no process bus "
                              "directory: publish() will not reach the other worker processes until it restarts");
            }
        }
        ::unsetenv(server::kEnvBusDir);  // not for a handler's children
        int status = server::serve(*this, impl_->store, worker_options, fds, ready_fd, true, rates.table(),
                                   shared_tickets ? &tickets : nullptr);
        app::close_ws_bus();
        return status;
    }

    Plan p;
    if (std::string e = plan(options, &p); !e.empty()) return refuse(e);
    ServerOptions opts = options;
    opts.workers = static_cast<int>(p.processes);
    opts.threads = p.threads;
    if (p.prefork) opts.watchdog_timeout_ms = opts.request_timeout_ms;  // a handler past it stops its loop
    server::Identity identity;
    if (std::string e = resolve_user(opts, &identity); !e.empty()) return refuse(e);
    if (std::string e = open_logs(opts, identity); !e.empty()) return refuse(e);
    if (geteuid() == 0 && opts.user.empty())
        util::log(util::LogLevel::Warn, "started as root without `user` (--user): the workers, and every handler, "
                  "run as root; name an unprivileged user to run as once the ports are bound");
    server::raise_fd_limit(opts.max_connections);  // before any worker: they inherit it
    if (!has_session_store()) {  // before binding: a bad session.* setting fails fast
        if (std::string e = sessions.create(opts); !e.empty()) return refuse(e);
        impl_->store = sessions.store();
    }
    if (opts.rate > 0) {
        if (std::string e = rates.create(opts); !e.empty()) return refuse(e);
    }
    if (opts.tls_self_signed) {  // one pair for the node: every worker presents the same
        std::string err;
        opts.tls_generated_pem = net::make_self_signed_pem(&err);
        if (opts.tls_generated_pem.empty()) return refuse(err);
    }
    if (std::string e = server::check_tls_listeners(opts); !e.empty()) return refuse(e);
    server::TicketSegment tickets;
    if (server::tls_configured(opts)) {  // before binding: a bad certificate fails fast, naming its file
        if (std::string e = tickets.create(); !e.empty()) return refuse(e);
        std::string err;
        auto tls = server::make_tls_context(opts, &err);
        if (!tls) return refuse(err);
        for (size_t i = 0; i < tls->size(); ++i) {
            std::string names;
            for (const std::string& n : tls->names(i)) names += (names.empty() ? "" : ", ") + n;
            util::log(util::LogLevel::Info, "tls: certificate %zu for %s", i + 1, names.empty() ? "(no names)" : names.c_str());
        }
    }
    server::Bound bound;
    // A unix socket is made 0660: its user and group may connect (a proxy running
    // in the group), no one else, whatever the umask would have given; 0600 under a
    // umask that shuts the group out (077). No thread runs yet: the umask is ours.
    const mode_t umask_was = ::umask(0117);
    if ((umask_was & 0060) == 0060) ::umask(0177);
    std::string bind_error = server::bind_listeners(opts, p.loops(), !p.prefork, &bound);
    ::umask(umask_was);
    if (!bind_error.empty()) return refuse(bind_error);
    opts.port = bound.addresses.front().port;
    std::fprintf(stderr, "kiln: listening on %s with %u worker%s of %u thread%s (%s)\n", bound.where.c_str(),
                 p.processes, p.processes == 1 ? "" : "s", p.threads, p.threads == 1 ? "" : "s", std::string(mpm_name(opts.mpm)).c_str());
    server::warn_of_unlimited_listeners(opts, bound);
    if (!opts.user.empty()) {
        // A unix socket bound as root is root's: the app user and group could not
        // connect to it (a proxy in the group). lchown does not follow the socket's
        // own name (a link put in its place is what changes owner).
        std::string e;
        for (const server::Bound::Address& a : bound.addresses)
            if (e.empty() && a.is_unix && ::lchown(a.host.c_str(), identity.uid, identity.gid) != 0)
                e = "listener unix:" + a.host + ": cannot give it to " + opts.user + ": " + std::strerror(errno);
        if (e.empty()) e = server::drop_privileges(identity);
        // The workers read the certificate and key as the user they run as: a key
        // only root may read (certbot's) passed the check above, and would have
        // made every worker exit, again and again. (A lone server loads it again
        // right after: the same files, read twice at its start.)
        if (e.empty() && server::tls_configured(opts) && !server::make_tls_context(opts, &e))
            e += " (read as the user " + opts.user + ", whom the server runs as: it must be able to read the files)";
        if (!e.empty()) {
            server::close_fd_groups(bound.fds);
            bound.remove_unix_files();
            return refuse(e);
        }
    }
    server::EnvSecrets handoff = server::take_env_secrets();
    handoff.generated.clear();
    handoff.tls_pem = opts.tls_generated_pem;
    if (impl_->secret.empty()) {  // one random key for every worker, handed down with the others
        impl_->secret = handoff.generated = util::random_hex(32);
        if (opts.session_store == "redis" || opts.topics_store == "redis")  // one node of several, most likely
            util::log(util::LogLevel::Warn, "no `secret` configured: using a random one; signed cookies will not "
                      "survive a restart, and other nodes will refuse this node's (give every node the same secret)");
        else
            util::log(util::LogLevel::Info, "no `secret` configured: using a random one; signed cookies will not "
                      "survive a restart");
    }

    if (p.processes > 0) {
        // The supervisor takes these through a signalfd: blocked before the hooks, so
        // a thread a hook starts inherits them blocked. Else the kernel would hand them
        // to that thread: SIGHUP (a reload) or SIGTERM would kill the node at once, and
        // a SIGCHLD would be dropped, its worker neither reaped nor replaced. (A stop
        // signal during the hooks is taken when they are done.)
        sigset_t taken;
        sigemptyset(&taken);
        for (int s : {SIGCHLD, SIGHUP, SIGTERM, SIGINT, SIGUSR1}) sigaddset(&taken, s);
        pthread_sigmask(SIG_BLOCK, &taken, nullptr);
    } else {
        server::block_stop_signals(false);  // a lone server's, likewise
    }
    std::string hook_error = run_hooks(impl_->node_start, opts, "node");
    if (hook_error.empty() && p.processes == 0) hook_error = run_hooks(impl_->worker_start, opts, "worker");
    if (!hook_error.empty()) {
        server::close_fd_groups(bound.fds);
        bound.remove_unix_files();
        return refuse(hook_error);
    }

    int status;
    if (p.processes == 0) {
        if (opts.topics_store == "redis") server::share_topics_through_redis(opts);
        status = server::serve(*this, impl_->store, opts, bound.fds, -1, false, rates.table(),
                               tickets.fd() >= 0 ? &tickets : nullptr);
        server::close_fd_groups(bound.fds);
    } else {
        std::string err;
        int secret_fd = server::make_secret_memfd(handoff, &err);
        if (secret_fd < 0) {
            server::close_fd_groups(bound.fds);
            bound.remove_unix_files();
            return refuse(err);
        }
        server::Supervisor supervisor(opts, std::move(bound.fds));
        supervisor.inherit(secret_fd, server::kEnvSecretFd);
        if (sessions.fd() >= 0) supervisor.inherit(sessions.fd(), server::kEnvSessionFd);
        if (rates.fd() >= 0) supervisor.inherit(rates.fd(), server::kEnvRateFd);
        if (tickets.fd() >= 0) {
            supervisor.inherit(tickets.fd(), server::kEnvTicketFd);
            supervisor.set_periodic(uint64_t{opts.tls_ticket_rotate_s} * 1000, [&tickets] { tickets.rotate(); });
        }
        supervisor.set_reopen_logs([] { server::reopen_logs(nullptr); });
        status = supervisor.run();
        ::close(secret_fd);
    }
    bound.remove_unix_files();
    return status;
}

}  // namespace kiln
