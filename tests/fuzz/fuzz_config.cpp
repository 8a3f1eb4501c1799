// Fuzzes kiln's configuration layer (server/config.hpp), not toml++. Byte 0 (mod 128)
// picks a key of config_keys(), or past them takes "name=value" from the input; the rest
// is the key's text (as the environment or a flag gives it), and also a whole kiln.toml.
// Nothing throws; a refused setting changes nothing; an accepted one holds no NUL; the
// value written in a file (bare integer, else a TOML string) is accepted or refused
// alike, to the same options; a file's refusal reads "PATH:LINE: why", LINE in the file.
// load_config_env is left out (it reads environ); it applies the same per-key rules.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "fuzz_check.hpp"
#include "server/config.hpp"

using kiln::ServerOptions;

namespace {

std::string g_dir, g_file;  // one scratch kiln.toml, rewritten for every input

void remove_dir() {
    std::error_code ec;
    if (!g_dir.empty()) std::filesystem::remove_all(g_dir, ec);
}

// Every field a key can set. A field added to ServerOptions and to the key table
// belongs here too, or the comparisons below miss it.
auto fields(const ServerOptions& o) {
    return std::tie(o.host, o.port, o.also_listen, o.workers, o.threads, o.backlog, o.header_timeout_ms,
                    o.body_timeout_ms, o.keepalive_timeout_ms, o.write_timeout_ms, o.drain_timeout_ms,
                    o.watchdog_timeout_ms, o.max_request_line, o.max_header_bytes, o.max_header_count,
                    o.upload_spool_bytes, o.max_requests_per_connection, o.max_connections, o.server_name, o.mpm, o.max_requests_per_worker, o.request_timeout_ms,
                    o.pool_threads, o.pool_queue, o.config_path, o.error_log, o.log_level, o.access_log,
                    o.access_log_format, o.user, o.group, o.metrics_path, o.trusted_proxies, o.forwarded_header, o.health_path,
                    o.log_errors, o.session_cookie, o.session_secure, o.session_idle_timeout_s,
                    o.session_max_age_s, o.session_memory, o.session_max_bytes, o.secret, o.app_settings,
                    o.handler_timeout_ms, o.max_connections_per_address, o.rate, o.rate_burst, o.rate_table_slots,
                    o.database_url, o.database_pool, o.database_statement_timeout_ms, o.database_reply_timeout_ms,
                    o.proxy_protocol,
                    o.tls_listener, o.tls_cert, o.tls_key, o.tls_certificates, o.tls_self_signed,
                    o.tls_ticket_rotate_s, o.tls_redirect_http, o.session_store, o.topics_store, o.redis_url, o.redis_pool,
                    o.redis_command_timeout_ms, o.redis_prefix, o.lame_duck_ms, o.ready_timeout_ms, o.http2, o.http2_max_streams,
                    o.compression, o.compression_min_size, o.compression_types, o.compression_gzip_level,
                    o.compression_brotli_level, o.compression_zstd_level);
}

bool same(const ServerOptions& a, const ServerOptions& b) { return fields(a) == fields(b); }

bool no_nul(const ServerOptions& o) {
    auto clean = [](const std::string& s) { return s.find('\0') == s.npos; };
    for (const std::string* s : {&o.host, &o.server_name, &o.error_log, &o.log_level, &o.access_log,
                                 &o.access_log_format, &o.user, &o.group, &o.metrics_path, &o.health_path,
                                 &o.session_cookie, &o.secret, &o.database_url, &o.tls_cert, &o.tls_key,
                                 &o.session_store, &o.redis_url, &o.redis_prefix})
        if (!clean(*s)) return false;
    for (const auto* list : {&o.also_listen, &o.trusted_proxies, &o.tls_certificates, &o.compression_types})
        for (const std::string& s : *list)
            if (!clean(s)) return false;
    for (const auto& [name, value] : o.app_settings)
        if (!clean(name) || !clean(value)) return false;
    return true;
}

void write_file(std::string_view text) {
    FILE* f = std::fopen(g_file.c_str(), "wb");
    FUZZ_CHECK(f != nullptr);
    FUZZ_CHECK(std::fwrite(text.data(), 1, text.size(), f) == text.size());
    std::fclose(f);
}

// Loads `text` as kiln.toml; a refusal must be "PATH:LINE: why" with LINE in the file.
std::string load(std::string_view text, ServerOptions* o) {
    write_file(text);
    std::string err = kiln::server::load_config_file(g_file, o);
    if (err.empty()) return err;
    FUZZ_CHECK(err.starts_with(g_file + ":"));
    size_t at = g_file.size() + 1, digits = 0;
    size_t line = 0;
    while (at + digits < err.size() && err[at + digits] >= '0' && err[at + digits] <= '9' && digits < 9)
        line = line * 10 + static_cast<size_t>(err[at + digits++] - '0');
    FUZZ_CHECK(digits > 0 && err.compare(at + digits, 2, ": ") == 0);
    size_t lines = 1;
    for (char c : text) lines += c == '\n';
    FUZZ_CHECK(line >= 1 && line <= lines);
    FUZZ_CHECK(err.size() > at + digits + 2);  // a reason follows
    return err;
}

// Digits, with a '-' before them: what the environment's integers look like.
bool integer_text(std::string_view t) {
    if (t.starts_with('-')) t.remove_prefix(1);
    if (t.empty()) return false;
    for (char c : t)
        if (c < '0' || c > '9') return false;
    return true;
}

// Spelled the same as a TOML integer (which has no leading zeros).
bool canonical_integer(std::string_view t) {
    std::string_view digits = t.starts_with('-') ? t.substr(1) : t;
    return integer_text(t) && (digits[0] != '0' || digits.size() == 1);
}

// A TOML float without the special values: an integer part (no leading zeros), then a
// fraction, an exponent or both.
bool toml_float(std::string_view t) {
    std::string_view rest = t.starts_with('-') ? t.substr(1) : t;
    size_t int_len = 0;
    while (int_len < rest.size() && rest[int_len] >= '0' && rest[int_len] <= '9') ++int_len;
    if (int_len == 0 || (int_len > 1 && rest[0] == '0')) return false;
    rest.remove_prefix(int_len);
    bool more = false;
    if (rest.starts_with('.')) {
        rest.remove_prefix(1);
        size_t n = 0;
        while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
        if (n == 0) return false;
        rest.remove_prefix(n);
        more = true;
    }
    if (!rest.empty() && (rest[0] == 'e' || rest[0] == 'E')) {
        rest.remove_prefix(1);
        if (!rest.empty() && (rest[0] == '+' || rest[0] == '-')) rest.remove_prefix(1);
        size_t n = 0;
        while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
        if (n == 0) return false;
        rest.remove_prefix(n);
        more = true;
    }
    return more && rest.empty();
}

std::string toml_string(std::string_view s) {
    std::string out = "\"";
    for (char ch : s) {
        auto c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += ch;
        } else if (c < 0x20 || c == 0x7f) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04X", c);
            out += b;
        } else {
            out += ch;
        }
    }
    return out + "\"";
}

void check_setting(std::string_view key, std::string_view text) {
    ServerOptions before, o;
    std::string err = kiln::server::apply_setting(key, text, &o);
    if (!err.empty()) {
        FUZZ_CHECK(same(o, before));
        (void)kiln::server::check_options(o);
    } else {
        FUZZ_CHECK(no_nul(o));
    }

    // The same value from a file. A comma splits a list in the environment but not in
    // a TOML string, TOML holds only UTF-8, and "007" is no TOML integer: those have
    // no file form that is the same value.
    bool list = key == "listen" || key == "proxy.trusted" || key == "server.trusted_proxies" || key == "tls.certificates" ||
                key == "compression.types";
    if ((list && text.find(',') != text.npos) || !valid_utf8(text)) return;
    if (integer_text(text) && !canonical_integer(text)) return;
    std::string name(key);
    bool bare_name = !name.empty();
    for (char c : name)
        bare_name &= (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
    if (!bare_name) return;
    // [app] holds the app's own settings, which come from KILN_APP_* and --set, not from
    // apply_setting: a name under app. has no environment form to compare with.
    if (name == "app" || name.starts_with("app.")) return;
    ServerOptions from_file;
    bool file_ok = false;
    bool toml_bool = text == "true" || text == "false";
    if (canonical_integer(text) || toml_float(text) || toml_bool) file_ok = load(name + " = " + std::string(text) + "\n", &from_file).empty();
    if (!file_ok) {
        from_file = ServerOptions();
        file_ok = load(name + " = " + toml_string(text) + "\n", &from_file).empty();
    }
    FUZZ_CHECK(file_ok == err.empty());
    if (file_ok) FUZZ_CHECK(same(from_file, o));
}

void check_file(std::string_view text) {
    ServerOptions o;
    if (load(text, &o).empty()) {
        FUZZ_CHECK(no_nul(o));
        (void)kiln::server::check_options(o);
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // Every input rewrites the file: in memory (tmpfs) it costs little, on a disk
    // shared with builds it slows the run several times over.
    char shm[] = "/dev/shm/kiln-fuzz-config.XXXXXX", tmp[] = "/tmp/kiln-fuzz-config.XXXXXX";
    char* tmpl = mkdtemp(shm) ? shm : tmp;
    FUZZ_CHECK(tmpl == shm || mkdtemp(tmp) != nullptr);
    g_dir = tmpl;
    g_file = g_dir + "/kiln.toml";
    std::atexit(remove_dir);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::vector<std::string_view> keys = kiln::server::config_keys();
    if (size < 1) return 0;
    std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
    // A seed keeps its key while the table stays under 128 keys (0x7f: a name of its own).
    if (keys.size() >= 127) std::abort();  // the table outgrew the byte: widen the pick
    size_t pick = data[0] % 128;
    if (pick < keys.size()) {
        check_setting(keys[pick], rest);
    } else {  // a name of the input's own: "name=value"
        size_t eq = rest.find('=');
        check_setting(rest.substr(0, eq), eq == rest.npos ? std::string_view() : rest.substr(eq + 1));
    }
    check_file(rest);
    return 0;
}
