// Command line of `kiln bench` (the session study's `perf` client, plus duration,
// threads, timeout and JSON output) and the target URL. Parsing is a pure function:
// argv in, options or an error message naming the bad option out; nothing printed.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::bench {

enum class ConnMode : uint8_t { CloseEach = 0, KeepAlive = 1, RandomDrop = 2 };

struct Target {
    uint32_t ipv4 = 0;        // network byte order
    uint16_t port = 80;
    std::string authority;    // Host header value, as written in the URL ("127.0.0.1:8080")
    std::string path;         // request target of the page, "/" by default (query kept)
};

struct BenchOptions {
    int batches = 1;                      // -b: parallel sessions, one connection each
    uint64_t requests = 1;                // -r: requests per batch (pages + assets + uploads)
    bool requests_given = false;
    ConnMode mode = ConnMode::KeepAlive;  // -c
    bool get_assets = false;              // -g: CSS, JS, images once per session
    bool fixed_assets = false;            // -f: /bootstrap.css and /servers.jpg (implies -g)
    bool upload = false;                  // -u: POST /upload (15 KiB) after each page
    double duration_s = 0;                // -d: 0 = no time limit
    int threads = 0;                      // -t: 0 = default (see default_threads)
    int timeout_ms = 5000;                // --timeout: per request
    bool json = false;                    // --json
    bool verbose = false;                 // -v
    uint64_t seed = 1;                    // --seed: disconnect points under -c 2
    bool help = false;                    // -h / --help
    Target target;
};

struct ParseOutcome {
    bool ok = false;
    std::string error;  // when !ok: one line naming the option, e.g. "-b: expected ..."
};

// Parses the arguments after "bench". Options may come before or after the URL;
// flags combine ("-fgu"), values may be attached ("-b10") or separate ("-b 10").
ParseOutcome parse_bench_options(const std::vector<std::string_view>& args, BenchOptions* out);

// Parses "http://host[:port][/path]" or "host[:port][/path]"; host is an IPv4
// literal or "localhost". Returns "" or the reason it is not accepted.
std::string parse_target(std::string_view url, Target* out);

// Loop threads when -t is not given: half the cores (the server usually shares the
// machine), at least 1, at most the number of batches.
int default_threads(int batches);

// The usage text for `kiln bench --help`.
std::string_view bench_usage();

}  // namespace kiln::bench
