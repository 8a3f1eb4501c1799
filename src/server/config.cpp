#include "server/config.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <toml++/toml.h>
#include <vector>

#include <kiln/pg.hpp>
#include <kiln/redis.hpp>

#include "http/cookie.hpp"
#include "http/parser.hpp"
#include "net/peer.hpp"
#include "server/secret_handoff.hpp"
#include "server/session_segment.hpp"
#include "server/stats.hpp"
#include "util/log.hpp"
#include "server/supervisor.hpp"

extern char** environ;

namespace kiln::server {
namespace {

// One configuration key: its dotted name and how a value of it is applied.
// `apply` gets the text form (environment) or the TOML node, through Value.
struct Value {
    const toml::node* node = nullptr;  // from the file
    std::string_view text;             // from the environment
};

using Apply = std::function<std::string(const Value&, ServerOptions&)>;  // "" or why not (nothing set)

struct Key {
    std::string_view name;
    Apply apply;
};

template <class T>
std::string get_integer(const Value& v, T min, T max, T* out) {
    int64_t n;
    if (v.node) {
        // is_integer() first: toml++'s value<int64_t>() converts a float without a range
        // check (a float past int64's range is undefined behaviour there).
        if (!v.node->is_integer()) return "expected an integer";
        auto i = v.node->value<int64_t>();
        if (!i) return "expected an integer";
        n = *i;
    } else {
        auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), n);
        if (ec != std::errc() || p != v.text.data() + v.text.size()) return "expected an integer, got '" + std::string(v.text) + "'";
    }
    if (n < static_cast<int64_t>(min) || n > static_cast<int64_t>(max))
        return "must be from " + std::to_string(min) + " to " + std::to_string(max) + ", got " + std::to_string(n);
    *out = static_cast<T>(n);
    return {};
}

// TOML's "\u0000" puts a NUL in a string, and every value here ends up in a C API
// (open, inet_pton, getpwnam) that would read only up to it: refused.
constexpr const char* kNul = "must not contain a NUL byte";

std::string get_string(const Value& v, std::string* out) {
    std::string_view text;
    if (v.node) {
        if (!v.node->is_string()) return "expected a string";
        text = **v.node->as_string();
    } else {
        text = v.text;
    }
    if (text.find('\0') != text.npos) return kNul;
    *out = std::string(text);
    return {};
}

std::string get_bool(const Value& v, bool* out) {
    if (v.node) {
        if (!v.node->is_boolean()) return "expected true or false";
        *out = **v.node->as_boolean();
        return {};
    }
    // As TOML spells them, from the environment too: one value, one spelling.
    if (v.text == "true") *out = true;
    else if (v.text == "false") *out = false;
    else return "expected true or false, got '" + std::string(v.text) + "'";
    return {};
}

// A string that is one of two spellings.
std::string get_either(const Value& v, std::string* out, std::string_view a, std::string_view b) {
    std::string text;
    if (std::string e = get_string(v, &text); !e.empty()) return e;
    if (text != a && text != b)
        return "expected \"" + std::string(a) + "\" or \"" + std::string(b) + "\", got '" + text + "'";
    *out = std::move(text);
    return {};
}

std::string get_nonempty(const Value& v, std::string* out) {
    std::string text;
    if (std::string e = get_string(v, &text); !e.empty()) return e;
    if (text.empty()) return "must not be empty";
    *out = std::move(text);
    return {};
}

std::string get_path(const Value& v, std::string* out) {
    std::string path;
    if (std::string e = get_string(v, &path); !e.empty()) return e;
    if (!path.empty() && path[0] != '/') return "a path must start with '/', got '" + path + "'";
    *out = std::move(path);
    return {};
}

// An array of strings from the file, or a comma-separated list from the
// environment or a flag.
std::string get_list(const Value& v, std::vector<std::string>* out) {
    out->clear();
    if (v.node && v.node->is_array()) {
        for (const toml::node& e : *v.node->as_array()) {
            if (!e.is_string()) return "expected an array of strings";
            if ((**e.as_string()).find('\0') != std::string::npos) return kNul;
            out->push_back(**e.as_string());
        }
        return {};
    }
    std::string text;
    if (std::string e = get_string(v, &text); !e.empty()) return e;
    for (size_t i = 0; i <= text.size();) {
        size_t comma = v.node ? std::string::npos : text.find(',', i);
        out->push_back(text.substr(i, comma == std::string::npos ? std::string::npos : comma - i));
        if (comma == std::string::npos) break;
        i = comma + 1;
    }
    return {};
}

template <class T>
Key integer(std::string_view name, T ServerOptions::*field, T min, T max) {
    return {name, [=](const Value& v, ServerOptions& o) { return get_integer(v, min, max, &(o.*field)); }};
}

// A number as TOML spells one: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, so the
// environment and kiln.toml accept the same texts ("10", "0.5", "2.5e3"; not "5.",
// ".5", "007" or "inf").
bool number_text(std::string_view t) {
    size_t i = 0;
    auto digits = [&] {
        size_t from = i;
        while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
        return i - from;
    };
    if (i < t.size() && t[i] == '-') ++i;
    size_t first = i;
    size_t n = digits();
    if (n == 0 || (n > 1 && t[first] == '0')) return false;
    if (i < t.size() && t[i] == '.') {
        ++i;
        if (digits() == 0) return false;
    }
    if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
        ++i;
        if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
        if (digits() == 0) return false;
    }
    return i == t.size();
}

// A number, integer or not ("10", "0.5").
std::string get_number(const Value& v, double min, double max, double* out) {
    double n;
    if (v.node) {
        if (auto d = v.node->value<double>(); d && (v.node->is_floating_point() || v.node->is_integer())) n = *d;
        else return "expected a number";
    } else {
        if (!number_text(v.text)) return "expected a number, got '" + std::string(v.text) + "'";
        // Read by the same TOML reader as the file, so both refuse the same texts (it
        // refuses a float of more than 128 characters, which strtod would take).
        try {
            toml::table t = toml::parse("n = " + std::string(v.text));
            auto d = t["n"].value<double>();
            if (!d) return "expected a number, got '" + std::string(v.text) + "'";
            n = *d;
        } catch (const toml::parse_error& e) {
            return "expected a number, got '" + std::string(v.text) + "' (" + std::string(e.description()) + ")";
        }
    }
    if (!(n >= min && n <= max))
        return "must be from " + std::to_string(static_cast<int64_t>(min)) + " to " + std::to_string(static_cast<int64_t>(max));
    *out = n;
    return {};
}

// server.trusted_proxies (and its first name, proxy.trusted): addresses or blocks.
std::string trusted_proxies(const Value& v, ServerOptions& o) {
    std::vector<std::string> all;
    if (std::string e = get_list(v, &all); !e.empty()) return e;
    for (const std::string& a : all) {
        net::AddressRange r;
        if (!net::AddressRange::parse(a, &r)) return "'" + a + "' is not an address or block such as \"10.0.0.0/8\" or \"::1\"";
    }
    o.trusted_proxies = std::move(all);
    return std::string();
}

const std::vector<Key>& keys() {
    static const std::vector<Key> table = {
        integer("workers", &ServerOptions::workers, 0, 1024),
        integer("threads", &ServerOptions::threads, 1u, 1024u),
        {"listen",
         [](const Value& v, ServerOptions& o) {
             // A string (one address) or an array of them; KILN_LISTEN: comma-separated.
             std::vector<std::string> all;
             if (std::string e = get_list(v, &all); !e.empty()) return e;
             if (all.empty()) return std::string("needs at least one address");
             std::string first_host = o.host;
             uint16_t first_port = o.port;
             ListenFlags first_flags{o.proxy_protocol, o.tls_listener};
             std::vector<std::string> also;
             for (size_t i = 0; i < all.size(); ++i) {
                 std::string host;
                 uint16_t port;
                 ListenFlags flags;
                 if (std::string e = parse_listen(all[i], &host, &port, &flags); !e.empty()) return e;
                 if (i == 0 && !all[i].starts_with("unix:")) {
                     first_host = host;
                     first_port = port;
                     first_flags = flags;
                 } else {
                     also.push_back(all[i]);
                 }
             }
             o.host = std::move(first_host);  // only now: a refused list changes nothing
             o.port = first_port;
             o.proxy_protocol = first_flags.proxy_protocol;
             o.tls_listener = first_flags.tls;
             o.also_listen = std::move(also);
             return std::string();
         }},
        integer("timeouts.header_ms", &ServerOptions::header_timeout_ms, 1u, 3'600'000u),
        integer("timeouts.body_ms", &ServerOptions::body_timeout_ms, 1u, 3'600'000u),
        integer("timeouts.keepalive_ms", &ServerOptions::keepalive_timeout_ms, 1u, 3'600'000u),
        integer("timeouts.write_ms", &ServerOptions::write_timeout_ms, 1u, 3'600'000u),
        integer("timeouts.drain_ms", &ServerOptions::drain_timeout_ms, 0u, 3'600'000u),
        integer("timeouts.lame_duck_ms", &ServerOptions::lame_duck_ms, 0u, 600'000u),
        integer("timeouts.ready_ms", &ServerOptions::ready_timeout_ms, 100u, 3'600'000u),
        integer("timeouts.handler_ms", &ServerOptions::handler_timeout_ms, 0u, 3'600'000u),
        integer("timeouts.watchdog_ms", &ServerOptions::watchdog_timeout_ms, 0u, 3'600'000u),
        integer("timeouts.request_ms", &ServerOptions::request_timeout_ms, 1u, 3'600'000u),
        integer("pool.threads", &ServerOptions::pool_threads, 1u, 4096u),
        integer("pool.queue", &ServerOptions::pool_queue, size_t{1}, size_t{1} << 20),
        integer("server.max_requests_per_worker", &ServerOptions::max_requests_per_worker, uint64_t{0}, uint64_t{1} << 40),
        integer("limits.max_request_line", &ServerOptions::max_request_line, size_t{64}, size_t{1} << 20),
        integer("limits.max_header_bytes", &ServerOptions::max_header_bytes, size_t{256}, size_t{1} << 24),
        integer("limits.max_header_count", &ServerOptions::max_header_count, size_t{1}, size_t{100}),
        integer("limits.upload_spool_bytes", &ServerOptions::upload_spool_bytes, uint64_t{1} << 16, uint64_t{1} << 50),
        integer("limits.max_requests_per_connection", &ServerOptions::max_requests_per_connection, 0u, 1u << 30),
        integer("limits.max_connections", &ServerOptions::max_connections, size_t{0}, size_t{1} << 24),
        integer("limits.max_connections_per_address", &ServerOptions::max_connections_per_address, size_t{0},
                size_t{1} << 24),
        {"limits.rate", [](const Value& v, ServerOptions& o) { return get_number(v, 0, 1e9, &o.rate); }},
        integer("limits.rate_burst", &ServerOptions::rate_burst, 0u, 1u << 24),
        {"limits.rate_table",
         [](const Value& v, ServerOptions& o) {
             size_t n = 0;
             if (std::string e = get_integer(v, size_t{64}, size_t{1} << 24, &n); !e.empty()) return e;
             if (n & (n - 1)) return "must be a power of two, got " + std::to_string(n);
             o.rate_table_slots = n;
             return std::string();
         }},
        {"session.cookie",
         [](const Value& v, ServerOptions& o) {
             std::string name, line;
             if (std::string e = get_nonempty(v, &name); !e.empty()) return e;
             // As it will be sent: Secure, Path=/, no Domain (what __Host- demands).
             http::CookieAttributes a;
             a.secure = true;
             a.path = "/";
             if (http::build_set_cookie(name, "x", a, line) != http::CookieError::None)
                 return "not a valid cookie name: '" + name + "'";
             o.session_cookie = name;
             return std::string();
         }},
        {"session.secure",
         [](const Value& v, ServerOptions& o) {
             std::string mode;
             if (std::string e = get_string(v, &mode); !e.empty()) return e;
             using S = SessionOptions::Secure;
             if (mode == "auto") o.session_secure = S::Auto;
             else if (mode == "always") o.session_secure = S::Always;
             else if (mode == "never") o.session_secure = S::Never;
             else return "expected \"auto\", \"always\" or \"never\", got '" + mode + "'";
             return std::string();
         }},
        {"server.trusted_proxies", trusted_proxies},
        {"proxy.trusted", trusted_proxies},  // its first name, kept
        {"server.forwarded_header",
         [](const Value& v, ServerOptions& o) {
             std::string name;
             if (std::string e = get_nonempty(v, &name); !e.empty()) return e;
             for (char& c : name)
                 if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
             if (name != "x-forwarded-for" && name != "forwarded")
                 return std::string("must be \"x-forwarded-for\" or \"forwarded\" (the field the trusted proxies write)");
             o.forwarded_header = std::move(name);
             return std::string();
         }},
        integer("session.idle_timeout_s", &ServerOptions::session_idle_timeout_s, int64_t{1}, int64_t{1} << 32),
        integer("session.max_age_s", &ServerOptions::session_max_age_s, int64_t{1}, int64_t{1} << 32),
        integer("session.memory", &ServerOptions::session_memory, size_t{64} << 10, size_t{1} << 40),
        integer("session.max_bytes", &ServerOptions::session_max_bytes, size_t{64}, size_t{1} << 20),
        {"secret",
         [](const Value& v, ServerOptions& o) {
             std::string secret;
             if (std::string e = get_nonempty(v, &secret); !e.empty()) return e;
             if (secret.size() < 16) return std::string("must be at least 16 characters");
             o.secret = std::move(secret);
             return std::string();
         }},
        {"server.name",
         [](const Value& v, ServerOptions& o) {
             std::string name;
             if (std::string e = get_string(v, &name); !e.empty()) return e;
             // The Server field's value: a CR or LF would end the field and start another.
             for (char c : name)
                 if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f)
                     return std::string("must not hold control characters (it is the Server header's value)");
             o.server_name = std::move(name);
             return std::string();
         }},
        {"database.url",
         [](const Value& v, ServerOptions& o) {
             std::string url;
             if (std::string e = get_string(v, &url); !e.empty()) return e;
             if (!url.empty())
                 if (std::string e = pg::url_error(url); !e.empty()) return e;
             o.database_url = std::move(url);
             return std::string();
         }},
        integer("database.pool", &ServerOptions::database_pool, 1u, 64u),
        integer("database.statement_timeout_ms", &ServerOptions::database_statement_timeout_ms, 0u, 3'600'000u),
        integer("database.reply_timeout_ms", &ServerOptions::database_reply_timeout_ms, 0u, 3'600'000u),
        integer("database.max_queued", &ServerOptions::database_max_queued, 0u, 10'000'000u),
        {"tls.cert", [](const Value& v, ServerOptions& o) { return get_nonempty(v, &o.tls_cert); }},
        {"tls.key", [](const Value& v, ServerOptions& o) { return get_nonempty(v, &o.tls_key); }},
        {"tls.certificates", [](const Value& v, ServerOptions& o) { return get_list(v, &o.tls_certificates); }},
        {"tls.self_signed", [](const Value& v, ServerOptions& o) { return get_bool(v, &o.tls_self_signed); }},
        {"tls.redirect_http", [](const Value& v, ServerOptions& o) { return get_bool(v, &o.tls_redirect_http); }},
        {"http2.enabled", [](const Value& v, ServerOptions& o) { return get_bool(v, &o.http2); }},
        {"compression.enabled", [](const Value& v, ServerOptions& o) { return get_bool(v, &o.compression); }},
        integer("compression.min_size", &ServerOptions::compression_min_size, size_t{0}, size_t{1} << 30),
        {"compression.types",
         [](const Value& v, ServerOptions& o) {
             std::vector<std::string> all;
             if (std::string e = get_list(v, &all); !e.empty()) return e;
             for (std::string& t : all) {
                 if (t.empty() || t.find('/') == std::string::npos || t.find_first_of(" ;,") != std::string::npos)
                     return "'" + t + "' is not a media type such as \"text/html\"";
                 for (char& ch : t) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
             }
             o.compression_types = std::move(all);
             return std::string();
         }},
        integer("compression.gzip_level", &ServerOptions::compression_gzip_level, 1, 9),
        integer("compression.brotli_level", &ServerOptions::compression_brotli_level, 0, 11),
        integer("compression.zstd_level", &ServerOptions::compression_zstd_level, 1, 19),
        integer("http2.max_concurrent_streams", &ServerOptions::http2_max_streams, 1u, 10'000u),
        integer("tls.ticket_rotate_s", &ServerOptions::tls_ticket_rotate_s, 1u, 7u * 24 * 3600),
        {"session.store",
         [](const Value& v, ServerOptions& o) { return get_either(v, &o.session_store, "memory", "redis"); }},
        {"topics.store", [](const Value& v, ServerOptions& o) { return get_either(v, &o.topics_store, "node", "redis"); }},
        {"redis.url",
         [](const Value& v, ServerOptions& o) {
             std::string url;
             if (std::string e = get_string(v, &url); !e.empty()) return e;
             if (!url.empty()) {
                 try {
                     redis::parse_url(url);
                 } catch (const redis::Error& e) {
                     return std::string(e.what());
                 }
             }
             o.redis_url = std::move(url);
             return std::string();
         }},
        integer("redis.pool", &ServerOptions::redis_pool, 1u, 64u),
        integer("redis.command_timeout_ms", &ServerOptions::redis_command_timeout_ms, 0u, 3'600'000u),
        {"redis.prefix", [](const Value& v, ServerOptions& o) { return get_string(v, &o.redis_prefix); }},
        {"user", [](const Value& v, ServerOptions& o) { return get_nonempty(v, &o.user); }},
        {"group", [](const Value& v, ServerOptions& o) { return get_nonempty(v, &o.group); }},
        {"log.access", [](const Value& v, ServerOptions& o) { return get_nonempty(v, &o.access_log); }},
        {"log.error", [](const Value& v, ServerOptions& o) { return get_nonempty(v, &o.error_log); }},
        {"log.level",
         [](const Value& v, ServerOptions& o) {
             std::string level;
             util::LogLevel ignored;
             if (std::string e = get_string(v, &level); !e.empty()) return e;
             if (!util::parse_log_level(level, &ignored)) return "expected \"error\", \"warn\" or \"info\", got '" + level + "'";
             o.log_level = level;
             return std::string();
         }},
        {"metrics.path", [](const Value& v, ServerOptions& o) { return get_path(v, &o.metrics_path); }},
        {"health.path", [](const Value& v, ServerOptions& o) { return get_path(v, &o.health_path); }},
        {"log.access_format",
         [](const Value& v, ServerOptions& o) {
             std::string f;
             if (std::string e = get_string(v, &f); !e.empty()) return e;
             if (f != "combined" && f != "json") return "expected \"combined\" or \"json\", got '" + f + "'";
             o.access_log_format = f;
             return std::string();
         }},
        {"server.mpm",
         [](const Value& v, ServerOptions& o) {
             std::string mpm;
             if (std::string e = get_string(v, &mpm); !e.empty()) return e;
             for (Mpm m : {Mpm::Event, Mpm::Hybrid, Mpm::Prefork}) {
                 if (mpm != mpm_name(m)) continue;
                 o.mpm = m;
                 return std::string();
             }
             return "expected \"event\", \"hybrid\" or \"prefork\", got '" + mpm + "'";
         }},
    };
    return table;
}

const Key* find_key(std::string_view name) {
    for (const Key& k : keys())
        if (k.name == name) return &k;
    return nullptr;
}

std::string at(const std::string& path, const toml::node& n, std::string_view key) {
    return path + ":" + std::to_string(n.source().begin.line) + ": key '" + std::string(key) + "': ";
}

// A value of the [app] table as the text App::setting gives: strings as they are,
// numbers and booleans as TOML writes them; "" (with *why) for arrays and dates.
bool app_value_text(const toml::node& n, std::string* out, std::string* why) {
    if (auto s = n.value<std::string>()) *out = *s;
    else if (n.is_integer()) *out = std::to_string(*n.value<int64_t>());
    else if (n.is_floating_point()) *out = std::to_string(*n.value<double>());
    else if (n.is_boolean()) *out = *n.value<bool>() ? "true" : "false";
    else {
        *why = "an [app] setting must be a string, a number or a boolean";
        return false;
    }
    if (out->find('\0') != std::string::npos) {
        *why = kNul;
        return false;
    }
    return true;
}

std::string walk_app(const std::string& path, const toml::table& t, const std::string& prefix, ServerOptions* out) {
    for (const auto& [k, node] : t) {
        std::string name = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
        if (const toml::table* sub = node.as_table()) {
            if (std::string e = walk_app(path, *sub, name, out); !e.empty()) return e;
            continue;
        }
        std::string text, why;
        if (name.find('\0') != std::string::npos) return at(path, node, "app") + kNul;
        if (!app_value_text(node, &text, &why)) return at(path, node, "app." + name) + why;
        out->app_settings[name] = std::move(text);
    }
    return {};
}

std::string walk(const std::string& path, const toml::table& t, const std::string& prefix, ServerOptions* out) {
    for (const auto& [k, node] : t) {
        std::string name = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
        if (const toml::table* sub = node.as_table()) {
            std::string e = name == "app" ? walk_app(path, *sub, "", out) : walk(path, *sub, name, out);
            if (!e.empty()) return e;
            continue;
        }
        const Key* key = find_key(name);
        if (!key) return at(path, node, name) + "unknown key";
        if (std::string e = key->apply(Value{&node, {}}, *out); !e.empty()) return at(path, node, name) + e;
    }
    return {};
}

}  // namespace

std::string parse_listen(std::string_view text, std::string* host, uint16_t* port, ListenFlags* flags) {
    // "ADDRESS [proxy_protocol] [tls]" (nginx's words, and tls for its ssl): its
    // connections start with a PROXY header, or speak TLS.
    ListenFlags f;
    if (size_t sp = text.find_first_of(" \t"); sp != std::string_view::npos) {
        std::string_view rest = text.substr(sp);
        text = text.substr(0, sp);
        while (!rest.empty()) {
            while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
            size_t end = rest.find_first_of(" \t");
            std::string_view word = rest.substr(0, end);
            rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
            if (word.empty()) break;
            if (word == "proxy_protocol") f.proxy_protocol = true;
            else if (word == "tls") f.tls = true;
            else return "unknown listener parameter '" + std::string(word) + "' (known: proxy_protocol, tls)";
        }
        if (f.proxy_protocol && f.tls) return "a listener cannot take both proxy_protocol and tls yet";
    }
    if (flags) *flags = f;
    if (text.starts_with("unix:")) {  // host gets the path, port 0
        std::string_view path = text.substr(5);
        if (path.empty() || path[0] != '/') return "a unix socket needs an absolute path: \"unix:/run/app.sock\"";
        if (path.size() >= 108) return "unix socket path too long (at most 107 bytes)";
        *host = std::string(path);
        *port = 0;
        return {};
    }
    std::string_view h, p;
    if (!text.empty() && text[0] == '[') {
        size_t close = text.find(']');
        if (close == text.npos || close + 1 >= text.size() || text[close + 1] != ':') return "expected \"[v6-address]:port\"";
        h = text.substr(1, close - 1);
        p = text.substr(close + 2);
    } else {
        size_t colon = text.rfind(':');
        if (colon == text.npos) return "expected \"host:port\", got '" + std::string(text) + "'";
        h = text.substr(0, colon);
        p = text.substr(colon + 1);
    }
    unsigned char buf[16];
    std::string hs(h);
    if (inet_pton(AF_INET, hs.c_str(), buf) != 1 && inet_pton(AF_INET6, hs.c_str(), buf) != 1)
        return "'" + hs + "' is not an IPv4 or IPv6 address";
    unsigned n = 0;
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), n);
    if (ec != std::errc() || end != p.data() + p.size() || n > 65535) return "'" + std::string(p) + "' is not a port";
    *host = hs;
    *port = static_cast<uint16_t>(n);
    return {};
}

bool cookie_needs_secure(std::string_view name) {
    auto prefixed = [&](std::string_view p) { return name.size() >= p.size() && http::iequals(name.substr(0, p.size()), p); };
    return prefixed("__Host-") || prefixed("__Secure-");
}

std::string check_options(const ServerOptions& o) {
    // As the setting's own check says; here also for a secret set in code.
    if (!o.secret.empty() && o.secret.size() < 16)
        return "secret must be at least 16 characters (it signs cookies: 32 random bytes are best)";
    if (o.session_store == "redis" && o.redis_url.empty())
        return "session.store = \"redis\" needs redis.url (--redis-url, KILN_REDIS_URL)";
    if (o.topics_store == "redis" && o.redis_url.empty())
        return "topics.store = \"redis\" needs redis.url (--redis-url, KILN_REDIS_URL)";
    if (cookie_needs_secure(o.session_cookie) && o.session_secure == SessionOptions::Secure::Never)
        return "session.cookie '" + o.session_cookie + "' needs session.secure = \"always\" (or \"auto\", which " +
               "this name turns into \"always\"): browsers accept a __Host- or __Secure- cookie only with Secure";
    return {};
}

std::string load_config_file(const std::string& path, ServerOptions* out) {
    toml::table t;
    try {
        t = toml::parse_file(path);
    } catch (const toml::parse_error& e) {
        const auto& src = e.source();
        return path + ":" + std::to_string(src.begin.line) + ": " + std::string(e.description());
    }
    return walk(path, t, "", out);
}

std::string apply_setting(std::string_view key, std::string_view text, ServerOptions* out) {
    const Key* k = find_key(key);
    if (!k) return "unknown key '" + std::string(key) + "'";
    return k->apply(Value{nullptr, text}, *out);
}

std::vector<std::string_view> config_keys() {
    std::vector<std::string_view> names;
    for (const Key& k : keys()) names.push_back(k.name);
    return names;
}

std::string load_config_env(ServerOptions* out) {
    for (char** e = environ; e && *e; ++e) {
        std::string_view var(*e);
        if (!var.starts_with("KILN_")) continue;
        size_t eq = var.find('=');
        std::string_view name = var.substr(0, eq), value = eq == var.npos ? "" : var.substr(eq + 1);
        if (name == kEnvWorkerFds || name == kEnvReadyFd || name == kEnvWorkerSlot || name == kEnvStatsFd ||
            name == kEnvStatsCell || name == kEnvSessionFd || name == kEnvSecretFd || is_env_secret(name))
            continue;  // the secret and the URLs: below, through take_env_secrets, which removes them
        // KILN_TIMEOUTS_HEADER_MS -> timeouts.header_ms: try each key's spelling.
        const Key* key = nullptr;
        for (const Key& k : keys()) {
            std::string spelled = "KILN_";
            for (char c : k.name) spelled += c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            if (spelled == name) key = &k;
        }
        if (!key && name.starts_with("KILN_APP_") && name.size() > 9) {
            std::string setting(name.substr(9));
            for (char& c : setting) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            out->app_settings[setting] = std::string(value);
            continue;
        }
        if (!key) {
            // A variable of some other tool that happens to start with KILN_ (a
            // benchmark harness's KILN_DIR): said once, by the process that reads the
            // settings first (not again by every worker), and not a reason to stop.
            if (!std::getenv(kEnvWorkerFds))
                std::fprintf(stderr, "kiln: warning: environment: %.*s is not a kiln setting (ignored; the app's own "
                             "settings are KILN_APP_<NAME>)\n", static_cast<int>(name.size()), name.data());
            continue;
        }
        if (std::string err = key->apply(Value{nullptr, value}, *out); !err.empty())
            return "environment: " + std::string(name) + ": " + err;
    }
    const EnvSecrets& s = take_env_secrets();
    if (!s.from_env.empty()) {
        if (std::string err = find_key("secret")->apply(Value{nullptr, s.from_env}, *out); !err.empty())
            return std::string("environment: ") + kEnvSecret + ": " + err;
    }
    for (auto [key, variable, value] : {std::tuple{"database.url", kEnvDatabaseUrl, &s.database_url},
                                        std::tuple{"redis.url", kEnvRedisUrl, &s.redis_url}}) {
        if (!*value) continue;  // set empty, it clears the file's value, as any variable does
        if (std::string err = find_key(key)->apply(Value{nullptr, **value}, *out); !err.empty())
            return std::string("environment: ") + variable + ": " + err;
    }
    return {};
}

}  // namespace kiln::server

namespace kiln {

std::string_view mpm_name(Mpm m) {
    switch (m) {
        case Mpm::Event: return "event";
        case Mpm::Hybrid: return "hybrid";
        case Mpm::Prefork: return "prefork";
    }
    return "event";
}

}  // namespace kiln
