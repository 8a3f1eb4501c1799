// `kiln bench` command line (see the header).
#include "bench/options.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace kiln::bench {
namespace {

constexpr int kMaxBatches = 100000;
constexpr uint64_t kMaxRequests = uint64_t{1} << 40;
constexpr int kMaxThreads = 256;
constexpr int kMaxTimeoutMs = 3600 * 1000;
constexpr double kMaxDuration = 7 * 24 * 3600.0;

template <typename T>
bool parse_int(std::string_view s, T lo, T hi, T* out) {
    T v{};
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool parse_seconds(std::string_view s, double* out) {
    // from_chars for double is in GCC 12's libstdc++; "1.5", "10" and "2e1" are fine.
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) || v <= 0 || v > kMaxDuration)
        return false;
    *out = v;
    return true;
}

std::string quoted(std::string_view v) { return "'" + std::string(v) + "'"; }

}  // namespace

std::string parse_target(std::string_view url, Target* out) {
    std::string_view rest = url;
    size_t scheme_end = rest.find("://");
    if (scheme_end != std::string_view::npos) {
        std::string_view scheme = rest.substr(0, scheme_end);
        if (scheme != "http" && scheme != "HTTP")
            return "only http:// URLs are supported, got " + quoted(url);
        rest.remove_prefix(scheme_end + 3);
    }
    size_t slash = rest.find_first_of("/?");
    std::string_view authority = rest.substr(0, slash);
    std::string path(slash == std::string_view::npos ? std::string_view("/") : rest.substr(slash));
    if (path.front() == '?') path.insert(0, "/");
    path = path.substr(0, path.find('#'));
    for (char c : path)
        if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return "the URL path has a space or control character";
    if (authority.empty()) return "the URL has no host: " + quoted(url);
    if (authority.find('@') != std::string_view::npos) return "user info in the URL is not supported";

    std::string_view host = authority;
    uint16_t port = 80;
    size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        if (!parse_int<uint16_t>(authority.substr(colon + 1), 1, 65535, &port))
            return "bad port in URL " + quoted(url);
    }
    in_addr addr{};
    if (host == "localhost") {
        addr.s_addr = htonl(INADDR_LOOPBACK);
    } else if (inet_pton(AF_INET, std::string(host).c_str(), &addr) != 1) {
        return "the host must be an IPv4 address or localhost, got " + quoted(host);
    }
    out->ipv4 = addr.s_addr;
    out->port = port;
    out->authority.assign(authority);
    out->path = std::move(path);
    return {};
}

int default_threads(int batches) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int t = cores > 1 ? static_cast<int>(cores / 2) : 1;
    if (t > kMaxThreads) t = kMaxThreads;
    return t < batches ? t : (batches > 0 ? batches : 1);
}

namespace {

// Cursor over the arguments, so an option can take the next one as its value.
struct Args {
    const std::vector<std::string_view>& list;
    size_t i = 0;
    bool next(std::string_view* v) {
        if (i + 1 >= list.size()) return false;
        *v = list[++i];
        return true;
    }
};

// --name, --name=value, --name value. Returns "" or the error.
std::string parse_long(std::string_view a, Args& args, BenchOptions* out) {
    std::string_view name = a, value;
    bool attached = false;
    if (size_t eq = a.find('='); eq != std::string_view::npos) {
        name = a.substr(0, eq);
        value = a.substr(eq + 1);
        attached = true;
    }
    auto take = [&] { return attached || args.next(&value); };
    if (name == "--json" && !attached) {
        out->json = true;
    } else if (name == "--help" && !attached) {
        out->help = true;
    } else if (name == "--timeout") {
        if (!take()) return "--timeout: missing value (milliseconds)";
        if (!parse_int(value, 1, kMaxTimeoutMs, &out->timeout_ms))
            return "--timeout: expected milliseconds from 1 to 3600000, got " + quoted(value);
    } else if (name == "--seed") {
        if (!take()) return "--seed: missing value";
        if (!parse_int<uint64_t>(value, 0, UINT64_MAX, &out->seed))
            return "--seed: expected a non-negative integer, got " + quoted(value);
    } else {
        return "unknown option " + quoted(name);
    }
    return {};
}

// The value of a short option c.
std::string short_value(char c, std::string_view value, BenchOptions* out) {
    switch (c) {
        case 'b':
            if (!parse_int(value, 1, kMaxBatches, &out->batches))
                return "-b: expected a number of batches from 1 to 100000, got " + quoted(value);
            break;
        case 'r':
            if (!parse_int<uint64_t>(value, 1, kMaxRequests, &out->requests))
                return "-r: expected a number of requests of at least 1, got " + quoted(value);
            out->requests_given = true;
            break;
        case 'c': {
            int m = 0;
            if (!parse_int(value, 0, 2, &m))
                return "-c: expected 0 (close each), 1 (keep-alive) or 2 (random drops), got " + quoted(value);
            out->mode = static_cast<ConnMode>(m);
            break;
        }
        case 'd':
            if (!parse_seconds(value, &out->duration_s))
                return "-d: expected a duration in seconds greater than 0, got " + quoted(value);
            break;
        case 't':
            if (!parse_int(value, 1, kMaxThreads, &out->threads))
                return "-t: expected a number of threads from 1 to 256, got " + quoted(value);
            break;
    }
    return {};
}

// Short options, possibly combined: -fgu, -b10, -b 10. Returns "" or the error.
std::string parse_short(std::string_view a, Args& args, BenchOptions* out) {
    for (size_t k = 1; k < a.size(); ++k) {
        char c = a[k];
        switch (c) {
            case 'f': out->fixed_assets = true; out->get_assets = true; continue;
            case 'g': out->get_assets = true; continue;
            case 'u': out->upload = true; continue;
            case 'v': out->verbose = true; continue;
            case 'h': out->help = true; continue;
            case 'b': case 'r': case 'c': case 'd': case 't': break;
            default: return std::string("unknown option '-") + c + "'";
        }
        std::string_view value = a.substr(k + 1);  // the value uses the rest of the argument
        if (value.empty() && !args.next(&value)) return std::string("-") + c + ": missing value";
        return short_value(c, value, out);
    }
    return {};
}

}  // namespace

ParseOutcome parse_bench_options(const std::vector<std::string_view>& list, BenchOptions* out) {
    ParseOutcome r;
    bool have_url = false;
    Args args{list};
    for (; args.i < list.size(); ++args.i) {
        std::string_view a = list[args.i];
        if (a.starts_with("--")) {
            r.error = parse_long(a, args, out);
        } else if (a.size() >= 2 && a[0] == '-') {
            r.error = parse_short(a, args, out);
        } else if (have_url) {
            r.error = "more than one URL: " + quoted(out->target.authority) + " and " + quoted(a);
        } else if (std::string e = parse_target(a, &out->target); !e.empty()) {
            r.error = "URL: " + e;
        } else {
            have_url = true;
        }
        if (!r.error.empty()) return r;
    }
    if (!out->help && !have_url) {
        r.error = "missing URL (e.g. http://127.0.0.1:8080/)";
        return r;
    }
    // -d alone runs until the time ends; -r with -d stops at whichever comes first.
    if (out->duration_s > 0 && !out->requests_given) out->requests = kMaxRequests;
    r.ok = true;
    return r;
}

std::string_view bench_usage() {
    return "usage: kiln bench [options] URL\n"
           "Load client reproducing the session study: each batch is one browser-like\n"
           "session with its own connection and cookie jar.\n"
           "  URL            http://HOST[:PORT][/PATH] (HOST: IPv4 address or localhost)\n"
           "  -b N           batches: parallel sessions, one connection each (default 1)\n"
           "  -r N           requests per batch: pages + assets + uploads (default 1)\n"
           "  -c 0|1|2       0: new connection per request; 1: keep-alive (default);\n"
           "                 2: disconnect after 40-167 requests (uniform), then reconnect\n"
           "  -g             fetch the page's CSS, JS and images once per session\n"
           "  -f             fixed asset list /bootstrap.css and /servers.jpg (implies -g)\n"
           "  -u             POST /upload (15 KiB multipart/form-data) after each page\n"
           "  -d SECONDS     run for this long (with -r: whichever ends first)\n"
           "  -t THREADS     event-loop threads (default: cores/2, at least 1)\n"
           "  --timeout MS   per-request timeout (default 5000)\n"
           "  --seed N       seed of the random disconnect points (default 1)\n"
           "  --json         print one JSON object with the results on stdout\n"
           "  -v             print every request and error on stderr\n"
           "Exit status: 0 all requests succeeded, 1 some failed, 2 bad usage.\n";
}

}  // namespace kiln::bench
