// Configuration: kiln.toml, then KILN_<KEY> environment variables, then flags,
// each overriding the one before. Every key is declared once in a table (config.cpp)
// that serves the file, the environment and the flags alike. A bad file is reported with
// file, line and key before anything starts; callers exit with status 2.
//
//   workers = 2                     # KILN_WORKERS
//   threads = 1                     # KILN_THREADS
//   listen  = "127.0.0.1:8080"      # KILN_LISTEN; "[::1]:8080" for IPv6
//   user = "nobody", group = "nogroup"   # after binding, as root
//   [timeouts] header_ms, body_ms, keepalive_ms, write_ms, drain_ms   # KILN_TIMEOUTS_HEADER_MS ...
//   [limits]   max_request_line, max_header_bytes, max_header_count, upload_spool_bytes,
//              max_requests_per_connection, max_connections
//   [server]   name, mpm ("event", "hybrid" or "prefork"), max_requests_per_worker (prefork)
//   [pool]     threads, queue (hybrid)
//   [timeouts] ... handler_ms, watchdog_ms, request_ms (prefork)
//   [metrics]  path (e.g. "/metrics")   [health] path (e.g. "/health")
//   [session]  cookie ("kiln_sid"; "__Host-sid" implies secure), secure ("auto", "always", "never"),
//              idle_timeout_s, max_age_s, memory, max_bytes
//   [proxy]    trusted (["10.0.0.0/8"]: their X-Forwarded-Proto: https makes Request::secure())
//   [log]      access ("off", "stdout", "stderr" or a path), access_format ("combined", "json"),
//              error ("stderr", "stdout" or a path), level ("error", "warn", "info")
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <kiln/server.hpp>

namespace kiln::server {

// Reads a TOML file into *out. Returns "" or an error "FILE:LINE: key 'K': why".
std::string load_config_file(const std::string& path, ServerOptions* out);

// Applies one key ("timeouts.header_ms") from its text form, as the environment
// and the flags give it. Returns "" or why the value is refused (*out unchanged).
std::string apply_setting(std::string_view key, std::string_view text, ServerOptions* out);

// Every key's dotted name, in the table's order (the config fuzzer tries each).
std::vector<std::string_view> config_keys();

// Applies KILN_<KEY> variables from the environment. Returns "" or an error naming
// the variable. Variables of the supervisor/worker handshake are not keys.
std::string load_config_env(ServerOptions* out);

// Rules between keys, checked once every layer is applied. Returns "" or why not.
std::string check_options(const ServerOptions& o);
// A __Host- or __Secure- cookie name: browsers take it only with Secure.
bool cookie_needs_secure(std::string_view name);

// "host:port", "[v6]:port" into host and port, or "unix:/path" into host = path,
// port = 0. Returns "" or why not.
struct ListenFlags {
    bool proxy_protocol = false;
    bool tls = false;
};
std::string parse_listen(std::string_view text, std::string* host, uint16_t* port, ListenFlags* flags = nullptr);

}  // namespace kiln::server
