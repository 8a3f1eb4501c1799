// Options of the server that App::run starts: where to listen, how many worker
// processes and event-loop threads, and the engine's timeouts. Flags override the
// defaults.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/session.hpp>

namespace kiln {

// How requests are run (config `server.mpm`, --mpm): Event, handlers on the event
// loops (must not block); Hybrid, loops do the I/O and handlers run on a bounded
// thread pool (blocking is fine); Prefork, one connection at a time per process,
// processes recycled (a crash or a leak costs one request).
enum class Mpm : uint8_t { Event, Hybrid, Prefork };
std::string_view mpm_name(Mpm m);  // "event", "hybrid", "prefork"

struct ServerOptions {
    std::string host = "127.0.0.1";
    uint16_t port = 8080;
    // More addresses: "host:port", "[v6]:port" or "unix:/path" (config `listen` as
    // an array: its first entry sets host and port, the others land here).
    std::vector<std::string> also_listen;
    bool proxy_protocol = false;  // host:port expects a PROXY protocol header ("ADDR proxy_protocol")
    bool tls_listener = false;    // host:port speaks TLS ("ADDR tls")
    // TLS. A listener written "ADDR tls" speaks it; with none so written, a configured
    // certificate makes host:port (--port) speak it.
    std::string tls_cert;                       // PEM: certificate and chain (tls.cert, --tls-cert)
    std::string tls_key;                        // PEM private key (tls.key, --tls-key); empty: in tls_cert
    std::vector<std::string> tls_certificates;  // more PEM files (chain and key each), chosen by SNI
    bool tls_self_signed = false;               // a throwaway certificate for localhost (--tls-self-signed)
    uint32_t tls_ticket_rotate_s = 12 * 3600;   // session-ticket keys: a new one this often
    bool tls_redirect_http = false;             // plain listeners answer 308 to the https:// address
    std::string tls_generated_pem;              // set by the server: the self-signed pair, handed to workers
    // On-the-fly compression of text responses (gzip, br, zstd by Accept-Encoding).
    bool compression = true;
    size_t compression_min_size = 1024;              // bytes; smaller bodies go as they are
    std::vector<std::string> compression_types = {  // media types (lower case, no parameters)
        "text/html", "text/css", "text/plain", "text/javascript", "application/javascript",
        "application/json", "image/svg+xml", "text/xml", "application/xml", "application/xhtml+xml",
        "application/manifest+json", "text/markdown", "text/csv"};
    int compression_gzip_level = 5;    // 1..9
    int compression_brotli_level = 4;  // 0..11
    int compression_zstd_level = 3;    // 1..19
    // HTTP/2: h2c by its preface on plain listeners, h2 by ALPN on TLS ones.
    bool http2 = true;
    uint32_t http2_max_streams = 100;           // concurrent streams per connection
    int workers = -1;                    // worker processes under a supervisor; -1: one per
                                         // core; 0: no supervisor, serve in this process
    unsigned threads = 0;                // event loops per process; 0: cores / processes
    int backlog = 4096;
    // Timeouts, milliseconds.
    uint32_t header_timeout_ms = 10'000;     // first byte of a request to end of its head
    uint32_t body_timeout_ms = 30'000;       // between two reads of a body
    uint32_t keepalive_timeout_ms = 75'000;  // idle between requests
    uint32_t write_timeout_ms = 30'000;      // between two writes that make progress
    uint32_t drain_timeout_ms = 10'000;      // graceful stop: wait this long for in-flight work
    // After a stop signal, keep serving this long with the health endpoint answering
    // 503, so a load balancer takes the node out before it stops accepting.
    uint32_t lame_duck_ms = 0;
    // A reload's new workers must report ready within this (their on_worker_start
    // hooks included), or the reload is abandoned and the old workers serve on.
    uint32_t ready_timeout_ms = 30'000;
    uint32_t handler_timeout_ms = 30'000;    // a coroutine handler not answering by then: cancelled, 504; 0: none
    uint32_t watchdog_timeout_ms = 30'000;   // a worker whose event loop is stuck this long
                                             // is killed and replaced; 0: off
    // Limits (see src/http/limits.hpp for what each answers).
    size_t max_request_line = 8 * 1024;
    size_t max_header_bytes = 64 * 1024;
    size_t max_header_count = 100;
    uint64_t upload_spool_bytes = uint64_t{1} << 30;  // upload temp files on disk per worker process; past it 507
    uint32_t max_requests_per_connection = 0;         // then Connection: close (HTTP/2: GOAWAY); 0: no cap
    size_t max_connections = 0;                       // open connections per worker process; beyond, 503 and
                                                      // close (a log line names the setting); 0: no cap
    size_t max_connections_per_address = 0;           // the same, from one client address; 0: no cap
    double rate = 0;                                  // requests per second per client address, every worker of
                                                      // the node together; beyond, 429 + Retry-After; 0: no limit
    uint32_t rate_burst = 0;                          // requests at once above the rate; 0: rate (at least 1)
    size_t rate_table_slots = 65536;                  // addresses tracked at once (a power of two)
    std::string server_name = "kiln";
    // Concurrency model (see Mpm).
    Mpm mpm = Mpm::Event;
    uint64_t max_requests_per_worker = 10'000;  // prefork: recycle after this many; 0: never
    uint32_t request_timeout_ms = 30'000;       // prefork: kill a handler running longer
    unsigned pool_threads = 64;                 // hybrid: handler threads per worker process
    size_t pool_queue = 1024;                   // hybrid: waiting requests; beyond, 503
    std::string config_path;             // the kiln.toml that was read, if any
    std::string error_log = "stderr";    // "stderr", "stdout" or a file path
    std::string log_level = "info";      // "error", "warn" or "info"
    std::string access_log = "off";      // "off", "stdout", "stderr" or a file path
    std::string access_log_format = "combined";  // or "json"
    std::string user;                    // run as this user after binding (needs root)
    std::string group;                   // and group (default: the user's primary group)
    std::string metrics_path;            // e.g. "/metrics": Prometheus text; empty: off
    // Proxies ("10.0.0.0/8", "::1") trusted to say who the client is: from them,
    // Forwarded or X-Forwarded-For give its address (Request::client_address) and
    // X-Forwarded-Proto whether it used HTTPS (Request::secure); empty: no one.
    std::vector<std::string> trusted_proxies;
    // The field of theirs that names the client: "x-forwarded-for" or "forwarded"
    // (RFC 7239). Only that one is read: a proxy that writes the one passes a client's
    // own copy of the other through.
    std::string forwarded_header = "x-forwarded-for";
    std::string health_path;             // e.g. "/health": 200 while serving; empty: off
    bool log_errors = true;
    // Sessions. store "memory": the node's shared-memory table (fixed size, made at
    // start); "redis": Redis at redis_url, shared by every node.
    std::string session_store = "memory";
    std::string session_cookie = "kiln_sid";   // __Host-/__Secure- names imply session_secure Always
    SessionOptions::Secure session_secure = SessionOptions::Secure::Auto;
    int64_t session_idle_timeout_s = 30 * 60;
    int64_t session_max_age_s = 24 * 60 * 60;
    size_t session_memory = 64 << 20;   // bytes for the whole store (pages used on demand)
    size_t session_max_bytes = 1024;    // one session's serialized data
    // Key for signed cookies. Empty: the supervisor makes a random one at start,
    // shared by its workers (signed cookies then do not survive a restart).
    std::string secret;
    // PostgreSQL (kiln::pg, read by the app: kiln::pg::options_from). Empty url: none.
    std::string database_url;             // libpq connection string or URI
    uint32_t database_pool = 1;           // connections per event loop thread
    uint32_t database_statement_timeout_ms = 0;  // 0: the server's own
    uint32_t database_reply_timeout_ms = 30000;  // no answer that long: the connection is dropped; 0: none
    uint32_t database_max_queued = 10000;  // queries on one connection at once, past it BusyError; 0: no limit
    // Redis (kiln::redis::options_from; the session store "redis"). Empty url: none.
    std::string redis_url;                // redis://[:password@]host[:port][/db]
    // kiln::publish's reach. "node": every worker process of this node (a local bus);
    // "redis": every node, through Redis pub/sub at redis_url.
    std::string topics_store = "node";
    uint32_t redis_pool = 1;              // connections per event loop thread
    uint32_t redis_command_timeout_ms = 5000;  // no reply in this long closes the connection
    std::string redis_prefix = "kiln:";   // session keys <prefix>session:<id>, channels <prefix>topics, <prefix>probe
    // The app's own settings, as text: the [app] table of kiln.toml (nested tables
    // as dotted names), KILN_APP_<NAME> variables (lower-cased: KILN_APP_DB_PATH is
    // "db_path"), --set NAME=VALUE flags, later sources winning. Read them with
    // App::setting.
    std::map<std::string, std::string, std::less<>> app_settings;
};

// Parses argv into options. On --help prints usage and returns 0 in *exit_status;
// on a bad flag prints a message naming it and returns 2. Returns true to go on.
bool parse_server_flags(int argc, char** argv, ServerOptions* out, int* exit_status);

}  // namespace kiln
