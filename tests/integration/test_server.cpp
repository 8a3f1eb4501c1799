// kiln_test_server: the app the end-to-end tests (tests/integration/*.py) start and
// talk to over real sockets. Every route exists to prove one behaviour of the engine;
// inputs that size work (ms, n) are bounded so a hostile test cannot wedge the box.
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include <cstdint>
#include <cstring>
#include <vector>
#include <memory>

#include <kiln/kiln.hpp>

namespace {

constexpr long kMaxSleepMs = 5000;
constexpr long kMaxBigBytes = 64L * 1024 * 1024;

// Parses a query parameter as a number in [0, max]; a bad or missing value is a 400.
long bounded_number(const kiln::Request& req, std::string_view name, long max) {
    std::optional<std::string_view> raw = req.query(name);
    if (!raw) throw kiln::HttpError(400, "missing query parameter");
    long value = 0;
    auto [end, ec] = std::from_chars(raw->data(), raw->data() + raw->size(), value);
    if (ec != std::errc() || end != raw->data() + raw->size() || value < 0)
        throw kiln::HttpError(400, "bad number");
    return value < max ? value : max;
}

void print_path(kiln::Request& req, kiln::Response& res) { res.text(req.path()); }

}  // namespace

int main(int argc, char** argv) {
    kiln::App app;

    // Runs around every request: /private answers 401 without reaching a handler;
    // everything else gets a marker header once the chain has run (a streamed
    // response has already sent its head, so it cannot carry the marker).
    app.use([](kiln::Request& req, kiln::Response& res, kiln::Next& next) {
        if (req.path().starts_with("/private")) {
            res.status(401);
            res.text("unauthorized");
            return;
        }
        next();
        if (!res.streaming()) res.header("X-Middleware", "1");
    });

    app.get("/plaintext", [](kiln::Request&, kiln::Response& res) { res.text("Hello, World!"); });

    app.post("/echo", [](kiln::Request& req, kiln::Response& res) {
        res.header("X-Body-Length", std::to_string(req.body().size()));
        res.send(req.body(), "application/octet-stream");
    });

    app.post("/small", [](kiln::Request&, kiln::Response& res) { res.text("ok"); },
             kiln::RouteOptions{.max_body = 1024});

    app.get("/throw", [](kiln::Request&, kiln::Response&) { throw std::runtime_error("boom"); });
    app.get("/http-error", [](kiln::Request&, kiln::Response&) { throw kiln::HttpError(418, "teapot"); });

    app.get("/stream", [](kiln::Request&, kiln::Response& res) {
        res.write("one,");
        res.write("two,");
        res.write("three");
    });

    // A stream that fails half-way: the client must see a truncated body, never a
    // clean end of message.
    app.get("/stream-throw", [](kiln::Request&, kiln::Response& res) {
        res.write("partial,");
        throw std::runtime_error("failed mid-stream");
    });
    // Sets a response header from the (decoded) query: CR/LF must not inject headers.
    app.get("/set-header", [](kiln::Request& req, kiln::Response& res) {
        res.header("X-Echo", req.query("value").value_or(""));
        res.text("ok");
    });

    app.get("/users/:id", [](kiln::Request& req, kiln::Response& res) {
        res.text("user " + std::string(req.param("id")));
    });
    app.get("/files/*path", [](kiln::Request& req, kiln::Response& res) {
        res.text("file " + std::string(req.param("path")));
    });
    app.get("/path", print_path);
    app.get("/path/*rest", print_path);

    app.get("/query", [](kiln::Request& req, kiln::Response& res) {
        res.text(req.query("name").value_or("(none)"));
    });
    app.get("/header", [](kiln::Request& req, kiln::Response& res) {
        std::optional<std::string_view> name = req.query("name");
        std::optional<std::string_view> value = name ? req.header(*name) : std::nullopt;
        res.text(value.value_or("(none)"));
    });

    app.get("/sleep", [](kiln::Request& req, kiln::Response& res) {
        std::this_thread::sleep_for(std::chrono::milliseconds(bounded_number(req, "ms", kMaxSleepMs)));
        res.text("slept");
    });
    app.get("/big", [](kiln::Request& req, kiln::Response& res) {
        res.text(std::string(static_cast<size_t>(bounded_number(req, "n", kMaxBigBytes)), 'x'));
    });

    // For the supervisor tests: which worker process answered, and a way to kill
    // the worker that serves the request (SIGABRT, as a crashing handler would).
    app.get("/pid", [](kiln::Request&, kiln::Response& res) { res.text(std::to_string(getpid())); });
    app.get("/crash", [](kiln::Request&, kiln::Response&) { std::abort(); });

    // Grows by 1 MiB per request (touched, so it counts in RSS): prefork recycling must
    // bound it. Kept reachable so LeakSanitizer (make asan) does not report the deliberate growth.
    app.get("/leak", [](kiln::Request&, kiln::Response& res) {
        static std::vector<std::unique_ptr<char[]>> hoard;
        hoard.emplace_back(new char[1 << 20]);
        std::memset(hoard.back().get(), 1, 1 << 20);
        res.text("leaked");
    });

    // A real invalid access (page zero, not null itself, so UBSan's null check does
    // not turn it into a report first): the worker dies of SIGSEGV.
    app.get("/segv", [](kiln::Request&, kiln::Response& res) {
        volatile uintptr_t address = 16;  // opaque to the compiler, so it emits the load
        volatile int* nowhere = reinterpret_cast<volatile int*>(address);
        res.text(std::to_string(*nowhere));
    });

    return app.run(argc, argv);
}
