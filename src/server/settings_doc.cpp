#include "server/settings_doc.hpp"

#include <charconv>
#include <string>
#include <type_traits>

namespace kiln::server {
namespace {

template <class T>
std::string num(T v) {
    if constexpr (std::is_floating_point_v<T>) {
        char buf[32];
        auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
        return std::string(buf, end);
    } else {
        return std::to_string(v);
    }
}
std::string quoted(const std::string& s) { return "\"" + s + "\""; }
std::string or_off(const std::string& s) { return s.empty() ? "off" : quoted(s); }

// Every setting, once. The defaults are read from a default ServerOptions, so
// server.hpp's initializers are the only place they are written.
const std::vector<SettingDoc>& table() {
    using O = ServerOptions;
    static const std::vector<SettingDoc> docs = {
        {"listen", "--listen", "ADDR", "addresses: \"host:port\", \"[v6]:port\", \"unix:/path\"; an array for several "
         "(--host/--port set the first, --listen adds one); \"ADDR proxy_protocol\": its connections start with a "
         "PROXY protocol v1/v2 header (HAProxy's send-proxy); \"ADDR tls\": it speaks TLS",
         [](const O& o) { return quoted(o.host + ":" + std::to_string(o.port)); }},
        {"workers", "--workers", "N", "worker processes under a supervisor; 0: serve from this process",
         [](const O&) { return std::string("one per core (prefork: 4 per core)"); }},
        {"threads", "--threads", "N", "event-loop threads per process", [](const O&) { return std::string("cores / workers"); }},
        {"server.mpm", "--mpm", "MODEL", "\"event\", \"hybrid\" (handlers on a thread pool) or \"prefork\" (one "
         "connection per process)", [](const O& o) { return quoted(std::string(mpm_name(o.mpm))); }},
        {"server.name", "", "", "the Server header", [](const O& o) { return quoted(o.server_name); }},
        {"server.max_requests_per_worker", "--max-requests", "N", "prefork: recycle a process after this many (0: never)",
         [](const O& o) { return num(o.max_requests_per_worker); }},
        {"pool.threads", "--pool-threads", "N", "hybrid: handler threads per process", [](const O& o) { return num(o.pool_threads); }},
        {"pool.queue", "--pool-queue", "N", "hybrid: requests waiting for a thread; beyond, 503",
         [](const O& o) { return num(o.pool_queue); }},
        {"timeouts.header_ms", "--header-timeout", "MS", "to receive a request head (else 408)",
         [](const O& o) { return num(o.header_timeout_ms); }},
        {"timeouts.body_ms", "--body-timeout", "MS", "between two reads of a body (else 408)",
         [](const O& o) { return num(o.body_timeout_ms); }},
        {"timeouts.keepalive_ms", "--keepalive-timeout", "MS", "idle between requests",
         [](const O& o) { return num(o.keepalive_timeout_ms); }},
        {"timeouts.write_ms", "--write-timeout", "MS", "between two writes that make progress",
         [](const O& o) { return num(o.write_timeout_ms); }},
        {"timeouts.drain_ms", "--drain-timeout", "MS", "a graceful stop waits this long for requests in flight",
         [](const O& o) { return num(o.drain_timeout_ms); }},
        {"timeouts.lame_duck_ms", "--lame-duck", "MS", "after a stop signal, serve this long more with the health "
         "endpoint answering 503, so a balancer routes elsewhere first", [](const O& o) { return num(o.lame_duck_ms); }},
        {"timeouts.ready_ms", "--ready-timeout", "MS", "a worker must be ready by then (its on_worker_start hooks included): "
         "a reload's new workers, else the reload fails and the old workers serve on; a replacement, else it is "
         "killed and started again", [](const O& o) { return num(o.ready_timeout_ms); }},
        {"timeouts.handler_ms", "--handler-timeout", "MS", "a coroutine handler that has not begun its answer by then is cancelled: 504 (0: off)",
         [](const O& o) { return num(o.handler_timeout_ms); }},
        {"timeouts.watchdog_ms", "--watchdog-timeout", "MS", "a worker whose loop is stuck this long is replaced (0: off)",
         [](const O& o) { return num(o.watchdog_timeout_ms); }},
        {"timeouts.request_ms", "--request-timeout", "MS", "prefork: a handler running longer is killed",
         [](const O& o) { return num(o.request_timeout_ms); }},
        {"limits.max_request_line", "", "", "longer: 414", [](const O& o) { return num(o.max_request_line); }},
        {"limits.max_header_bytes", "", "", "a larger header section: 431", [](const O& o) { return num(o.max_header_bytes); }},
        {"limits.max_header_count", "", "", "more fields: 431", [](const O& o) { return num(o.max_header_count); }},
        {"limits.upload_spool_bytes", "", "", "upload temp files of one process together; past it 507",
         [](const O& o) { return num(o.upload_spool_bytes); }},
        {"limits.max_requests_per_connection", "", "", "after this many requests, a response says Connection: close (HTTP/2: a GOAWAY; 0: no cap)",
         [](const O& o) { return num(o.max_requests_per_connection); }},
        {"limits.max_connections", "", "", "open connections per worker process; beyond, 503 and closed, logged (0: no cap)",
         [](const O& o) { return num(o.max_connections); }},
        {"limits.max_connections_per_address", "", "",
         "open connections from one client address (an IPv6 client: its /64) per worker process; beyond, 503 and "
         "closed, logged (0: no cap)",
         [](const O& o) { return num(o.max_connections_per_address); }},
        {"limits.rate", "", "",
         "requests per second from one client address (an IPv6 client: its /64), all workers of the node together; beyond, 429 with "
         "Retry-After, and an HTTP/1.1 connection closed (0: no limit). Its table is made when the node starts: "
         "turning it on takes a restart (a reload that tries fails)",
         [](const O& o) { return num(o.rate); }},
        {"limits.rate_burst", "", "", "requests at once above limits.rate (0: as many as limits.rate, at least 1)",
         [](const O& o) { return num(o.rate_burst); }},
        {"limits.rate_table", "", "", "client addresses limits.rate tracks at once (a power of two; 16 bytes each); when full, a new "
         "address is let through unchecked and counted (kiln_rate_limit_unchecked_total)",
         [](const O& o) { return num(o.rate_table_slots); }},
        {"session.cookie", "", "", "the session cookie's name; __Host-/__Secure- names imply Secure",
         [](const O& o) { return quoted(o.session_cookie); }},
        {"session.secure", "--session-secure", "MODE", "the cookie's Secure: \"auto\" (when the request is HTTPS), "
         "\"always\", \"never\"", [](const O& o) {
             return quoted(o.session_secure == SessionOptions::Secure::Auto     ? "auto"
                           : o.session_secure == SessionOptions::Secure::Always ? "always"
                                                                                : "never");
         }},
        {"session.store", "--session-store", "STORE", "\"memory\" (this node's shared memory) or \"redis\" (redis.url, "
         "shared by every node)", [](const O& o) { return quoted(o.session_store); }},
        {"session.idle_timeout_s", "", "", "a session unused this long expires", [](const O& o) { return num(o.session_idle_timeout_s); }},
        {"session.max_age_s", "", "", "and any session after this long", [](const O& o) { return num(o.session_max_age_s); }},
        {"session.memory", "", "", "bytes for the shared-memory store (pages used as needed)",
         [](const O& o) { return num(o.session_memory); }},
        {"session.max_bytes", "", "", "one session's data", [](const O& o) { return num(o.session_max_bytes); }},
        {"secret", "", "", "key for signed cookies, at least 16 characters", [](const O&) { return std::string("random per start"); }},
        {"database.url", "--database-url", "URL", "PostgreSQL for kiln::pg: \"postgresql://user@127.0.0.1/db\" (empty: none)",
         [](const O& o) { return quoted(o.database_url); }},
        {"database.pool", "--database-pool", "N", "PostgreSQL connections per event loop thread",
         [](const O& o) { return num(o.database_pool); }},
        {"database.statement_timeout_ms", "", "", "a PostgreSQL statement running longer fails (0: the server's)",
         [](const O& o) { return num(o.database_statement_timeout_ms); }},
        {"database.reply_timeout_ms", "", "", "a PostgreSQL connection that owes answers and hears nothing this long "
         "is dropped: its queries fail (503) and it reconnects (0: wait for ever)",
         [](const O& o) { return num(o.database_reply_timeout_ms); }},
        {"database.max_queued", "", "", "queries one PostgreSQL connection carries at once, sent or waiting; past it "
         "a query fails at once with db::BusyError (503) (0: no limit)",
         [](const O& o) { return num(o.database_max_queued); }},
        {"tls.cert", "--tls-cert", "FILE", "PEM certificate (and chain): the listeners marked tls speak TLS, or "
         "host:port when none is marked", [](const O&) { return std::string("none"); }},
        {"tls.key", "--tls-key", "FILE", "PEM private key of tls.cert (empty: in tls.cert)", [](const O&) { return std::string(); }},
        {"tls.certificates", "", "", "more PEM files, each a certificate, its chain and its key: chosen by the "
         "client's SNI (the first of all is the default)", [](const O&) { return std::string("none"); }},
        {"tls.self_signed", "", "", "a throwaway certificate for localhost, made at start (flag --tls-self-signed)",
         [](const O& o) { return std::string(o.tls_self_signed ? "true" : "false"); }},
        {"tls.redirect_http", "", "", "requests on plain listeners get 308 to https:// (not /health, /metrics, nor "
         "what a trusted proxy says came over HTTPS)", [](const O& o) { return std::string(o.tls_redirect_http ? "true" : "false"); }},
        {"tls.ticket_rotate_s", "", "", "session-ticket keys (shared by the node's workers) are replaced this "
         "often; a ticket lives as long", [](const O& o) { return num(o.tls_ticket_rotate_s); }},
        {"compression.enabled", "", "", "compress text responses on the fly (gzip, br, zstd by Accept-Encoding)",
         [](const O& o) { return std::string(o.compression ? "true" : "false"); }},
        {"compression.min_size", "", "", "bodies smaller than this many bytes go as they are",
         [](const O& o) { return num(o.compression_min_size); }},
        {"compression.types", "", "", "the media types compressed (HTML, CSS, JS, JSON, SVG, XML, plain text, ...)",
         [](const O& o) {
             std::string all;
             for (const std::string& t : o.compression_types) all += (all.empty() ? "" : ", ") + t;
             return all;
         }},
        {"compression.gzip_level", "", "", "1 (fast) to 9 (small)", [](const O& o) { return num(o.compression_gzip_level); }},
        {"compression.brotli_level", "", "", "0 (fast) to 11 (small)", [](const O& o) { return num(o.compression_brotli_level); }},
        {"compression.zstd_level", "", "", "1 (fast) to 19 (small)", [](const O& o) { return num(o.compression_zstd_level); }},
        {"http2.enabled", "", "", "HTTP/2: h2c (prior knowledge, by its preface) on plain listeners, h2 by ALPN "
         "on TLS ones", [](const O& o) { return std::string(o.http2 ? "true" : "false"); }},
        {"http2.max_concurrent_streams", "", "", "streams a client may have open on one HTTP/2 connection",
         [](const O& o) { return num(o.http2_max_streams); }},
        {"topics.store", "--topics-store", "STORE", "kiln::publish's reach: \"node\" (this node's worker processes) "
         "or \"redis\" (every node, through Redis pub/sub at redis.url)", [](const O& o) { return quoted(o.topics_store); }},
        {"redis.url", "--redis-url", "URL", "Redis for kiln::redis and the session store \"redis\": "
         "\"redis://[:password@]127.0.0.1:6379[/db]\" (empty: none)", [](const O& o) { return quoted(o.redis_url); }},
        {"redis.pool", "--redis-pool", "N", "Redis connections per event loop thread", [](const O& o) { return num(o.redis_pool); }},
        {"redis.command_timeout_ms", "", "", "no reply from Redis in this long closes the connection; a subscribed one is probed this often (0: wait)",
         [](const O& o) { return num(o.redis_command_timeout_ms); }},
        {"redis.prefix", "", "", "the session store's keys (PREFIXsession:ID) and kiln's Redis channels (PREFIXtopics, PREFIXprobe)", [](const O& o) { return quoted(o.redis_prefix); }},
        {"server.trusted_proxies", "--trusted-proxies", "LIST", "proxies whose Forwarded / X-Forwarded-For (the client) and "
         "X-Forwarded-Proto count: addresses or CIDR blocks (also proxy.trusted)",
         [](const O&) { return std::string("none"); }},
        {"server.forwarded_header", "--forwarded-header", "NAME", "the one field the trusted proxies write that names "
         "the client: \"x-forwarded-for\" or \"forwarded\" (the other is ignored: a proxy passes a client's own copy "
         "through)", [](const O& o) { return quoted(o.forwarded_header); }},
        {"proxy.trusted", "", "", "the first name of server.trusted_proxies (either sets it)",
         [](const O&) { return std::string("none"); }},
        {"user", "--user", "NAME", "run as this user after binding (started as root)", [](const O&) { return std::string(); }},
        {"group", "--group", "NAME", "and this group (default: the user's)", [](const O&) { return std::string(); }},
        {"log.error", "--error-log", "DEST", "\"stderr\", \"stdout\" or a file (reopened on SIGUSR1)",
         [](const O& o) { return quoted(o.error_log); }},
        {"log.level", "--log-level", "LEVEL", "\"error\", \"warn\" or \"info\"", [](const O& o) { return quoted(o.log_level); }},
        {"log.access", "--access-log", "DEST", "\"off\", \"stdout\", \"stderr\" or a file (reopened on SIGUSR1)",
         [](const O& o) { return quoted(o.access_log); }},
        {"log.access_format", "--access-log-format", "F", "\"combined\" or \"json\"",
         [](const O& o) { return quoted(o.access_log_format); }},
        {"metrics.path", "--metrics-path", "PATH", "serve Prometheus metrics here", [](const O& o) { return or_off(o.metrics_path); }},
        {"health.path", "--health-path", "PATH", "answer 200 here while serving", [](const O& o) { return or_off(o.health_path); }},
    };
    return docs;
}

}  // namespace

const std::vector<SettingDoc>& setting_docs() { return table(); }

std::string_view setting_for_flag(std::string_view flag) {
    for (const SettingDoc& d : table())
        if (!d.flag.empty() && d.flag == flag) return d.key;
    return {};
}

std::string flags_help() {
    const ServerOptions defaults;
    std::string out;
    for (const SettingDoc& d : table()) {
        if (d.flag.empty()) continue;
        std::string left = "  " + std::string(d.flag) + " " + std::string(d.meta);
        if (left.size() < 28) left.resize(28, ' ');
        else left += "\n" + std::string(28, ' ');
        std::string def = d.show(defaults);
        out += left + std::string(d.help) + (def.empty() ? "" : " (default " + def + ")") + "\n";
    }
    return out;
}

std::string settings_reference() {
    const ServerOptions defaults;
    std::string out = "| key | default | flag | what it sets |\n| --- | --- | --- | --- |\n";
    for (const SettingDoc& d : table()) {
        std::string def = d.show(defaults);
        out += "| `" + std::string(d.key) + "` | " + (def.empty() ? std::string() : "`" + def + "`") + " | " +
               (d.flag.empty() ? std::string() : "`" + std::string(d.flag) + "`") + " | " + std::string(d.help) + " |\n";
    }
    return out;
}

}  // namespace kiln::server
