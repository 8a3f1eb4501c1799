#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include <sys/stat.h>

#include <kiln/server.hpp>

#include "server/config.hpp"
#include "server/settings_doc.hpp"

namespace kiln {
namespace {

template <class T>
bool parse_number(std::string_view s, T min, T max, T* out) {
    T v{};
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v < min || v > max) return false;
    *out = v;
    return true;
}

// Flags that set a configuration key (--workers, ...) are validated by the key's own
// rule (config.cpp) and listed with their help and default by settings_doc.cpp.
void usage(const char* prog) {
    std::printf("usage: %s [flags]\n"
                "  --host ADDR               address to listen on (default 127.0.0.1; 0.0.0.0 or :: for all)\n"
                "  --port N                  TCP port (default 8080; 0 picks a free one)\n"
                "  --config FILE             settings file (default: ./kiln.toml if it exists);\n"
                "                            then KILN_<KEY> variables, then these flags override it\n"
                "  --check-config            read and validate the settings, print them, exit\n"
                "  --config-reference        print every setting with its default (Markdown), exit\n"
                "  --routes                  print the app's routes (method, pattern), exit\n"
                "  --set NAME=VALUE          one of the app's own settings (App::setting; also [app] in\n"
                "                            kiln.toml and KILN_APP_<NAME>)\n"
                "  --quiet                   no error log at all\n"
                "  --tls-self-signed         a throwaway certificate for localhost: try HTTPS (tls.self_signed)\n"
                "  --help                    this text\n"
                "%s",
                prog, server::flags_help().c_str());
}

}  // namespace

bool parse_server_flags(int argc, char** argv, ServerOptions* o, int* exit_status) {
    const char* prog = argc > 0 ? argv[0] : "kiln";
    if (const char* slash = std::strrchr(prog, '/')) prog = slash + 1;
    auto fail = [&](const std::string& msg) {
        std::fprintf(stderr, "%s: %s (see --help)\n", prog, msg.c_str());
        *exit_status = 2;
        return false;
    };
    // Settings file and environment first; the flags below override them.
    std::string config;
    bool check = false, explicit_config = false;
    for (int i = 1; i < argc; ++i) {
        std::string_view a = argv[i];
        if (a == "--check-config") check = true;
        if (a == "--config" && i + 1 < argc) config = argv[++i], explicit_config = true;
        else if (a.starts_with("--config=")) config = std::string(a.substr(9)), explicit_config = true;
    }
    struct stat st;
    if (!explicit_config && stat("kiln.toml", &st) == 0) config = "kiln.toml";
    if (!config.empty()) {
        if (explicit_config && stat(config.c_str(), &st) != 0) return fail("config file '" + config + "' not found");
        if (std::string e = server::load_config_file(config, o); !e.empty()) {
            std::fprintf(stderr, "%s: %s\n", prog, e.c_str());
            *exit_status = 2;
            return false;
        }
        o->config_path = config;
    }
    if (std::string e = server::load_config_env(o); !e.empty()) {
        std::fprintf(stderr, "%s: %s\n", prog, e.c_str());
        *exit_status = 2;
        return false;
    }

    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        std::string_view value;
        bool has_value = false;
        if (size_t eq = arg.find('='); arg.starts_with("--") && eq != arg.npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            has_value = true;
        }
        auto take = [&]() -> bool {
            if (has_value) return true;
            if (i + 1 >= argc) return false;
            value = argv[++i];
            return true;
        };
        auto number = [&](auto min, auto max, auto* out) {
            if (!take()) return fail("flag " + std::string(arg) + " needs a value");
            if (!parse_number(value, min, max, out))
                return fail("flag " + std::string(arg) + ": '" + std::string(value) + "' is not a number from " +
                            std::to_string(min) + " to " + std::to_string(max));
            return true;
        };
        bool ok = true;
        if (arg == "--help" || arg == "-h") {
            usage(prog);
            *exit_status = 0;
            return false;
        } else if (arg == "--host") {
            if (!take() || value.empty()) return fail("flag --host needs an address");
            o->host = std::string(value);
        } else if (arg == "--listen") {
            std::string h;
            uint16_t p;
            if (!take()) return fail("flag --listen needs an address");
            if (std::string e = server::parse_listen(value, &h, &p, nullptr); !e.empty()) return fail("flag --listen: " + e);
            o->also_listen.emplace_back(value);
        } else if (arg == "--port") {
            ok = number(uint16_t{0}, uint16_t{65535}, &o->port);
        } else if (arg == "--config") {
            take();
        } else if (arg == "--check-config" || arg == "--routes") {  // --routes: App::run
        } else if (arg == "--quiet") {
            o->log_errors = false;
        } else if (arg == "--tls-self-signed") {
            o->tls_self_signed = true;
        } else if (arg == "--set") {
            if (!take()) return fail("flag --set needs NAME=VALUE");
            size_t eq = value.find('=');
            if (eq == 0 || eq == std::string_view::npos) return fail("flag --set: expected NAME=VALUE, got '" + std::string(value) + "'");
            if (value.find('\0') != std::string_view::npos) return fail("flag --set: a NUL byte in '" + std::string(value.substr(0, eq)) + "'");
            o->app_settings[std::string(value.substr(0, eq))] = std::string(value.substr(eq + 1));
        } else if (arg == "--config-reference") {
            std::fputs(server::settings_reference().c_str(), stdout);
            *exit_status = 0;
            return false;
        } else if (std::string_view key = server::setting_for_flag(arg); !key.empty()) {
            if (!take()) return fail("flag " + std::string(arg) + " needs a value");
            if (std::string e = server::apply_setting(key, value, o); !e.empty())
                return fail("flag " + std::string(arg) + ": " + e);
        } else {
            return fail("unknown flag '" + std::string(argv[i]) + "'");
        }
        if (!ok) return false;
    }
    if (std::string e = server::check_options(*o); !e.empty()) {
        std::fprintf(stderr, "%s: %s\n", prog, e.c_str());
        *exit_status = 2;
        return false;
    }
    if (check) {
        std::printf("%s: configuration ok (%s)\n  listen %s:%u, workers %d, threads %u, mpm %s\n"
                    "  timeouts ms: header %u, body %u, keepalive %u, write %u, drain %u\n"
                    "  access log %s (%s)\n",
                    prog, o->config_path.empty() ? "no file, defaults" : o->config_path.c_str(), o->host.c_str(),
                    o->port, o->workers, o->threads, std::string(mpm_name(o->mpm)).c_str(), o->header_timeout_ms, o->body_timeout_ms,
                    o->keepalive_timeout_ms, o->write_timeout_ms, o->drain_timeout_ms, o->access_log.c_str(),
                    o->access_log_format.c_str());
        *exit_status = 0;
        return false;
    }
    return true;
}

}  // namespace kiln
