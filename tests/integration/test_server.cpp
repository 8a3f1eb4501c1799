// kiln_test_server: the app the end-to-end tests (tests/integration/*.py) start and
// talk to over real sockets. Every route exists to prove one behaviour of the engine;
// inputs that size work (ms, n) are bounded so a hostile test cannot wedge the box.
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdio>
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
#include <nlohmann/json.hpp>

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

// JSON in and out through to_json/from_json (test_routing.py: Ergonomics).
struct Item {
    std::string name;
    int qty = 0;
};
void to_json(nlohmann::json& j, const Item& i) { j = {{"name", i.name}, {"qty", i.qty}}; }
void from_json(const nlohmann::json& j, Item& i) {
    j.at("name").get_to(i.name);
    kiln::json_field(j, "qty", i.qty);
}

// A controller made per request: a reused one would count past 1.
struct ItemsController {
    int calls = 0;
    void show(kiln::Request& req, kiln::Response& res) {
        res.json(Item{"item" + std::to_string(req.param<int>("id")), ++calls});
    }
};
// A controller made by a factory (state from the app), and a Cerflet-style class.
struct Greeter {
    std::string greeting;
    void greet(kiln::Request& req, kiln::Response& res) const { res.text(greeting + " " + std::string(req.param("name"))); }
};
struct HelloHandler {
    void handle(kiln::Request&, kiln::Response& res) { res.text("hello from a handler class"); }
};
struct CurrentUser {
    std::string name;
};

}  // namespace

int main(int argc, char** argv) {
    kiln::App app;

    // The whole app under CSRF protection (test_uploads.py: an upload's token is
    // checked before any file is written), instead of /guarded only (below).
    if (std::getenv("KILNTEST_CSRF_EVERYWHERE")) app.use(kiln::csrf_protect());
    if (std::getenv("KILNTEST_HEALTH_FAIL"))  // what libpq would say: not for the client
        app.health_check("database", []() -> kiln::Task<std::string> {
            throw std::runtime_error("connection to 10.0.0.5:5432 as user shop refused");
            co_return std::string();
        });

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

    // The app's own settings and set-up hooks (test_config.py).
    app.get("/setting", [&app](kiln::Request& req, kiln::Response& res) {
        res.text(std::string(app.setting(req.query("name").value_or("")).value_or("(unset)")));
    });
    if (const char* dir = std::getenv("KILNTEST_HOOK_DIR")) {
        std::string log = std::string(dir) + "/hooks.log";
        auto append = [log](const std::string& line) {
            if (FILE* f = std::fopen(log.c_str(), "a")) {
                std::fputs((line + "\n").c_str(), f);
                std::fclose(f);
            }
        };
        app.on_node_start([append](const kiln::ServerOptions& o) {
            if (std::getenv("KILNTEST_HOOK_FAIL")) throw std::runtime_error("the database is not there");
            if (std::getenv("KILNTEST_HOOK_THREAD"))  // an app's helper thread (an exporter, a logger)
                std::thread([] { for (;;) std::this_thread::sleep_for(std::chrono::hours(1)); }).detach();
            append("node " + std::to_string(getpid()) + " workers=" + std::to_string(o.workers));
        });
        app.on_worker_start([append, dir = std::string(dir)](const kiln::ServerOptions&) {
            append("worker " + std::to_string(getpid()));
            if (std::getenv("KILNTEST_HOOK_THREAD"))  // (test_supervisor HookThreads)
                std::thread([] { for (;;) std::this_thread::sleep_for(std::chrono::hours(1)); }).detach();
            // A warm-up this long (milliseconds in the file, which a test writes
            // before a reload): test_supervisor ReadyTimeout. worker_start_ms.<slot>
            // holds one slot's own.
            const char* slot = std::getenv("KILN_WORKER_SLOT");
            std::string mine = dir + "/worker_start_ms." + (slot ? slot : "");
            if (FILE* f = std::fopen((access(mine.c_str(), R_OK) == 0 ? mine : dir + "/worker_start_ms").c_str(), "r")) {
                long ms = 0;
                if (std::fscanf(f, "%ld", &ms) != 1) ms = 0;
                std::fclose(f);
                std::this_thread::sleep_for(std::chrono::milliseconds(ms));
            }
        });
    }

    // The URLs this worker's settings hold (test_supervisor.py: they reach workers
    // without passing through the environment).
    static std::string configured_urls;
    app.on_worker_start([](const kiln::ServerOptions& o) { configured_urls = o.database_url + "\n" + o.redis_url; });
    app.get("/configured-urls", [](kiln::Request&, kiln::Response& res) {
        res.text(std::to_string(getpid()) + "\n" + configured_urls);
    });

    // Ergonomics (test_routing.py): typed parameters, JSON values, controllers,
    // handler classes, per-request values, the error page.
    app.use([](kiln::Request& req, kiln::Response&, kiln::Next& next) {
        if (auto who = req.header("x-user")) req.set_local(CurrentUser{std::string(*who)});
        next();
    });
    app.error_page([](kiln::Request& req, kiln::Response& res, int status, std::string_view message) {
        if (req.path() == "/error-page-throws") throw std::runtime_error("the error page failed too");
        res.header("X-Error-Page", std::to_string(status));
        res.text(std::string(message) + "\n");
    });
    app.get("/error-page-throws", [](kiln::Request&, kiln::Response&) { throw kiln::HttpError(409, "conflict"); });
    app.get("/typed/:id", [](kiln::Request& req, kiln::Response& res) {
        long id = req.param<long>("id");
        std::optional<int> page = req.query<int>("page");
        std::optional<bool> draft = req.query<bool>("draft");
        res.text(std::to_string(id) + " " + (page ? std::to_string(*page) : "-") + " " +
                 (draft ? (*draft ? "draft" : "final") : "-"));
    });
    app.get("/items/:id", &ItemsController::show);
    app.post("/items", [](kiln::Request& req, kiln::Response& res) {
        Item item = req.json<Item>();
        item.qty *= 2;
        res.status(201);
        res.json(item);
    });
    app.get("/json-value", [](kiln::Request&, kiln::Response& res) {
        res.json(nlohmann::json{{"ok", true}, {"bad_utf8", std::string("a\xff")}});
    });
    app.controller<Greeter>([] { return Greeter{"bonjour"}; });
    app.get("/greet/:name", &Greeter::greet);
    app.get<HelloHandler>("/hello-class");
    app.get("/whoami", [](kiln::Request& req, kiln::Response& res) {
        CurrentUser* u = req.local<CurrentUser>();
        res.text(u ? u->name : "(nobody)");
    });

    app.post("/echo", [](kiln::Request& req, kiln::Response& res) {
        res.header("X-Body-Length", std::to_string(req.body().size()));
        res.send(req.body(), "application/octet-stream");
    });

    app.post("/small", [](kiln::Request&, kiln::Response& res) { res.text("ok"); },
             kiln::RouteOptions{.max_body = 1024});

    app.get("/throw", [](kiln::Request&, kiln::Response&) { throw std::runtime_error("boom"); });
    app.get("/throw-lines", [](kiln::Request&, kiln::Response&) {
        throw std::runtime_error("first\n2026-01-01T00:00:00Z [error] [1] forged\r\x1b[31m");
    });
    app.get("/http-error", [](kiln::Request&, kiln::Response&) { throw kiln::HttpError(418, "teapot"); });

    app.get("/stream", [](kiln::Request&, kiln::Response& res) {
        res.write("one,");
        res.write("two,");
        res.write("three");
    });

    // A stream that fails half-way: the client must see a truncated body, never a
    // clean end of message.
    // kb KiB streamed by a plain handler: a client gone by then makes a write fail
    // while it runs (test_http2.py).
    app.get("/stream/big", [](kiln::Request& req, kiln::Response& res) {
        std::string piece(16 * 1024, 's');
        for (long i = 0, n = bounded_number(req, "kb", 4096) / 16; i < n; ++i) res.write(piece);
    });
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
    // Coroutine handlers (tests/integration/test_coroutines.py): a wait on the loop,
    // and per-process counts of the waits that ended and that were cancelled.
    static std::atomic<long> async_done{0}, async_cancelled{0}, blocking_ran{0};
    app.get("/async/sleep", [](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
        long ms = bounded_number(req, "ms", kMaxSleepMs);
        try {
            co_await kiln::sleep(std::chrono::milliseconds(ms));
        } catch (const kiln::Cancelled&) {
            ++async_cancelled;
            throw;
        }
        ++async_done;
        res.text("slept " + std::to_string(ms));
    });
    // A coroutine's stream: a burst of kb KiB (the socket blocks, or the write yields),
    // then n small writes ms apart (test_timeouts.py).
    app.get("/async/burst", [](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
        res.header("Content-Type", "text/plain");
        res.write(std::string(static_cast<size_t>(bounded_number(req, "kb", 8192)) * 1024, 'b'));
        long n = bounded_number(req, "n", 100), ms = bounded_number(req, "ms", kMaxSleepMs);
        for (long i = 0; i < n; ++i) {
            co_await kiln::sleep(std::chrono::milliseconds(ms));
            res.write("ping " + std::to_string(i) + "\n");
        }
    });
    app.get("/async/fail", [](kiln::Request&, kiln::Response&) -> kiln::Task<> {
        co_await kiln::sleep(std::chrono::milliseconds(1));
        throw kiln::HttpError(418, "short and stout");
    });
    app.get("/async/stats", [](kiln::Request&, kiln::Response& res) {
        res.text("done=" + std::to_string(async_done.load()) + " cancelled=" + std::to_string(async_cancelled.load()) +
                 " blocking_ran=" + std::to_string(blocking_ran.load()));
    });
    // kiln::blocking: a sleeping job on the blocking threads, writing the coroutine's
    // local by reference; answers where it ran and where the handler resumed.
    app.get("/async/blocking", [](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
        long ms = bounded_number(req, "ms", kMaxSleepMs);
        auto loop_thread = std::this_thread::get_id();
        std::thread::id job_thread;
        try {
            long slept = co_await kiln::blocking([&] {
                std::this_thread::sleep_for(std::chrono::milliseconds(ms));
                job_thread = std::this_thread::get_id();
                ++blocking_ran;
                if (req.query("fail")) throw kiln::HttpError(409, "the job failed");
                return ms;
            });
            ++async_done;
            res.text("slept " + std::to_string(slept) + (job_thread != loop_thread ? " elsewhere" : " on the loop") +
                     (std::this_thread::get_id() == loop_thread ? ", back on the loop" : ", resumed elsewhere"));
        } catch (const kiln::Cancelled&) {
            ++async_cancelled;
            throw;
        }
    });
    // Compression (test_compression.py): a page of n list items, a streamed one, the
    // same page on a route that turns compression off, and one that says no-transform.
    auto page = [](kiln::Request& req) {
        std::string s;
        long n = bounded_number(req, "n", 100000);
        for (long i = 0; i < n; ++i) s += "<li>item " + std::to_string(i) + "</li>\n";
        return s;
    };
    app.get("/compress/page", [page](kiln::Request& req, kiln::Response& res) { res.html(page(req)); });
    app.get("/compress/off", [page](kiln::Request& req, kiln::Response& res) { res.html(page(req)); },
            kiln::RouteOptions{.compress = false});
    // Reached by a form's POST with _method=PUT: its own options hold, not a POST's.
    app.put("/compress/off", [page](kiln::Request& req, kiln::Response& res) { res.html(page(req)); },
            kiln::RouteOptions{.compress = false});
    app.get("/compress/no-transform", [page](kiln::Request& req, kiln::Response& res) {
        res.header("Cache-Control", "no-transform");
        res.html(page(req));
    });
    // Streamed by a plain handler (HTTP/1.1 streams only those as they are written);
    // its sleeps between writes block the loop, which the test allows.
    app.get("/compress/stream", [](kiln::Request& req, kiln::Response& res) {
        res.header("Content-Type", "text/plain; charset=utf-8");
        long parts = bounded_number(req, "parts", 50), ms = bounded_number(req, "ms", 1000);
        for (long i = 0; i < parts; ++i) {
            res.write("part " + std::to_string(i) + " " + std::string(200, static_cast<char>('a' + i % 26)) + "\n");
            if (ms) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        }
    });
    // Server-sent events (test_sse.py): n events ms apart, resuming after Last-Event-ID;
    // a flood of kb-KiB events for a client that does not read; counts of each end.
    static std::atomic<long> events_done{0}, events_cut{0};
    app.get("/events", [](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
        kiln::EventStream events = res.event_stream();
        long n = bounded_number(req, "n", 1000), ms = bounded_number(req, "ms", kMaxSleepMs), first = 0;
        if (auto seen = kiln::last_event_id(req)) {
            long id = 0;
            auto [p, ec] = std::from_chars(seen->data(), seen->data() + seen->size(), id);
            if (ec == std::errc() && p == seen->data() + seen->size()) first = id + 1;
        }
        events.retry(std::chrono::milliseconds(1500));
        try {
            for (long i = first; i < first + n; ++i) {
                events.send("line one\nline two " + std::to_string(i), "tick", std::to_string(i));
                events.comment("heartbeat");
                co_await kiln::sleep(std::chrono::milliseconds(ms));
            }
        } catch (const kiln::Cancelled&) {
            ++events_cut;
            throw;
        }
        ++events_done;
    });
    app.get("/events/flood", [](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
        kiln::EventStream events = res.event_stream();
        std::string blob(static_cast<size_t>(bounded_number(req, "kb", 1024)) * 1024, 'e');
        try {
            for (int i = 0; i < 100000; ++i) {  // bounded: 100,000 events, or the cut
                events.send(blob);
                co_await kiln::sleep(std::chrono::milliseconds(1));
            }
        } catch (const kiln::Cancelled&) {
            ++events_cut;
            throw;
        }
        ++events_done;
    });
    // kb KiB of events written before the coroutine's first wait, then done without
    // waiting: a client gone by then makes a flush fail inside start().
    app.get("/events/burst", [](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
        kiln::EventStream events = res.event_stream();
        std::string blob(16 * 1024, 'b');
        for (long i = 0, n = bounded_number(req, "kb", 4096) / 16; i < n; ++i) events.send(blob);
        co_return;
    });
    app.get("/events/stats", [](kiln::Request&, kiln::Response& res) {
        res.text("done=" + std::to_string(events_done.load()) + " cut=" + std::to_string(events_cut.load()));
    });
    app.get("/big", [](kiln::Request& req, kiln::Response& res) {
        res.text(std::string(static_cast<size_t>(bounded_number(req, "n", kMaxBigBytes)), 'x'));
    });

    // For the supervisor tests: which worker process answered, and a way to kill
    // the worker that serves the request (SIGABRT, as a crashing handler would).
    app.get("/pid", [](kiln::Request&, kiln::Response& res) { res.text(std::to_string(getpid())); });
    app.get("/crash", [](kiln::Request&, kiln::Response&) { std::abort(); });
    // What a process a handler starts inherits: its open files and its environment.
    app.get("/child-process", [](kiln::Request&, kiln::Response& res) {
        FILE* p = popen("for f in /proc/self/fd/*; do echo \"fd $f $(readlink $f)\"; done; "
                        "tr '\\0' '\\n' < /proc/self/environ", "r");
        if (!p) throw std::runtime_error("popen failed");
        std::string out;
        char buf[4096];
        for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
        pclose(p);
        res.text(out);
    });

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

    // Static files (test_static_files.py): only when that test names a directory (not
    // KILN_*, which are server settings), so the other tests see no new routes.
    // /static has the defaults; /raw caches nothing (every file goes through sendfile),
    // has no index, no precompressed siblings, no Cache-Control, serves dotfiles and
    // knows one extra type.
    if (const char* static_dir = std::getenv("KILNTEST_STATIC_DIR")) {
        app.files("/static", static_dir);
        app.files("/raw/", static_dir,
                  kiln::FileOptions{.cache_control = "", .index = "", .precompressed = false, .dotfiles = true,
                                    .memory_max_file = 0, .mime_types = {{"yaml", "application/yaml"}}});
    }

    // Request bodies (test_uploads.py).
    app.post("/form", [](kiln::Request& req, kiln::Response& res) {
        std::string out;
        for (const auto& f : req.form().fields()) out += f.name + "=" + f.value + "\n";
        for (const auto& f : req.form().files()) {
            uint32_t sum = 0;  // of every byte, read back in slices (never all in memory)
            char buf[65536];
            for (uint64_t at = 0; at < f.size;) {
                size_t n = f.read(at, buf, sizeof buf);
                if (n == 0) throw std::runtime_error("upload shorter than its size");
                for (size_t i = 0; i < n; ++i) sum += static_cast<unsigned char>(buf[i]);
                at += n;
            }
            out += "file " + f.field + " " + f.filename + " " + f.content_type + " " + std::to_string(f.size) + " " +
                   std::to_string(sum) + (f.in_memory() ? " memory" : " disk") + "\n";
        }
        if (auto dest = req.query("save"); dest && !req.form().files().empty()) req.form().files()[0].save_as(std::string(*dest));
        res.text(out);
    }, {.max_body = size_t{1} << 30, .max_files = 8});
    app.post("/json", [](kiln::Request& req, kiln::Response& res) {
        const auto& j = req.json();
        res.json(j.dump());
    });
    // CSRF and flash (test_sessions.py): only under /guarded, so other POST tests need no token.
    app.use([csrf = kiln::csrf_protect()](kiln::Request& req, kiln::Response& res, kiln::Next& next) {
        if (req.path().starts_with("/guarded") && !std::getenv("KILNTEST_CSRF_EVERYWHERE")) csrf(req, res, next);
        else next();
    });
    app.get("/guarded/form", [](kiln::Request& req, kiln::Response& res) {
        if (auto ms = req.query("ms")) {  // loaded, then a pause: two first pages at once overlap
            (void)req.session().get("note");
            std::this_thread::sleep_for(std::chrono::milliseconds(bounded_number(req, "ms", kMaxSleepMs)));
        }
        res.text(kiln::csrf_token(req) + " " + kiln::take_flash(req, "notice"));
    });
    app.get("/session/peek", [](kiln::Request& req, kiln::Response& res) {
        res.text("[" + kiln::take_flash(req, "notice") + "]");  // a read: starts no session
    });
    app.post("/guarded/submit", [](kiln::Request& req, kiln::Response& res) {
        kiln::flash(req, "notice", "saved " + std::string(req.form().get("title").value_or("")));
        res.redirect("/guarded/form", 303);
    });
    // Sessions and cookies (test_sessions.py).
    app.get("/session/visit", [](kiln::Request& req, kiln::Response& res) {
        kiln::Session& s = req.session();
        int64_t n = s.get_int("visits").value_or(0) + 1;
        s.set_int("visits", n);
        if (auto note = req.query("note")) s.set("note", *note);
        res.text(std::string(s.id()) + " " + std::to_string(n) + " " + std::to_string(getpid()) + " " +
                 std::string(s.get("note").value_or("-")));
    });
    app.get("/session/read", [](kiln::Request& req, kiln::Response& res) {
        res.text(std::string(req.session().get("note").value_or("-")));  // reads only: stores nothing
    });
    app.get("/session/slow-visit", [](kiln::Request& req, kiln::Response& res) {
        kiln::Session& s = req.session();  // loaded now, saved after the sleep
        std::this_thread::sleep_for(std::chrono::milliseconds(bounded_number(req, "ms", kMaxSleepMs)));
        s.set_int("visits", s.get_int("visits").value_or(0) + 1);
        res.text("slow");
    });
    app.get("/secure", [](kiln::Request& req, kiln::Response& res) { res.text(req.secure() ? "https" : "http"); });
    // Who the client is behind a balancer (PROXY protocol) or trusted proxies (test_proxies.py).
    app.get("/client", [](kiln::Request& req, kiln::Response& res) {
        res.text(req.client_address() + " " + (req.secure() ? "https" : "http"));
    });
    app.get("/session/login", [](kiln::Request& req, kiln::Response& res) {
        if (auto ms = req.query("ms")) {  // loaded, then a pause: two log-ins at once overlap
            (void)req.session().get("note");
            std::this_thread::sleep_for(std::chrono::milliseconds(bounded_number(req, "ms", kMaxSleepMs)));
        }
        req.session().regenerate();
        res.text(std::string(req.session().id()));
    });
    app.get("/session/logout", [](kiln::Request& req, kiln::Response& res) {
        req.session().destroy();
        if (auto note = req.query("note")) req.session().set("note", *note);  // a flash message after it
        res.text("bye");
    });
    app.get("/session/oversize", [](kiln::Request& req, kiln::Response& res) {
        req.session().set("big", std::string(64 * 1024, 'x'));  // over session.max_bytes: 500
        res.text("unreachable");
    });
    app.get("/session/fail", [](kiln::Request& req, kiln::Response&) {
        req.session().set_int("visits", 1000);
        throw std::runtime_error("handler failed after changing the session");
    });
    app.get("/cookie/set", [](kiln::Request& req, kiln::Response& res) {
        res.signed_cookie("signed", req.query("v").value_or(""));
        res.cookie("plain", req.query("v").value_or(""), {.max_age = 60, .same_site = kiln::SameSite::Strict});
        res.text("set");
    });
    app.get("/cookie/get", [](kiln::Request& req, kiln::Response& res) {
        res.text(std::string(req.signed_cookie("signed").value_or("(invalid)")) + " " +
                 std::string(req.cookie("plain").value_or("(none)")));
    });
    // WebSocket endpoints (test_websocket.py, Autobahn via kosoku).
    kiln::WsOptions big;
    big.max_message = 20 << 20;  // Autobahn's 9.x sends 16 MiB messages
    big.max_backlog = 64 << 20;
    const kiln::WsHandlers echo{.message = [](kiln::WebSocket& ws, std::string_view data, bool binary) {
        binary ? ws.send_binary(data) : ws.send(data);
    }};
    app.ws("/ws/echo", echo, big);
    kiln::WsOptions big_level6 = big;  // bench/ws_deflate_level.sh: zlib's default level beside kiln's
    big_level6.compression_level = 6;
    app.ws("/ws/echo-level6", echo, big_level6);
    app.ws("/ws/echo-co", [](kiln::WebSocket& ws) -> kiln::Task<> {
        while (auto msg = co_await ws.receive()) {
            if (msg->data == "sleep") co_await kiln::sleep(std::chrono::milliseconds(50));
            if (msg->data == "drained") co_await ws.drained();  // answered once the backlog fell
            if (msg->data == "throw 42") throw 42;              // not a std::exception
            msg->binary ? ws.send_binary(msg->data) : ws.send(msg->data);
        }
    }, big);
    kiln::WsOptions plain;
    plain.compression = false;
    app.ws("/ws/plain", kiln::WsHandlers{.message = [](kiln::WebSocket& ws, std::string_view data, bool) {
        ws.send(data);
    }}, plain);
    // Rooms: every message to a room reaches all of it, on every loop and worker.
    app.ws("/ws/room/:room", kiln::WsHandlers{
        .open = [](kiln::WebSocket& ws, kiln::Request& req) {
            ws.subscribe(ws.param("room"));
            ws.send("joined " + std::string(ws.param("room")) + " pid " + std::to_string(getpid()) +
                    (req.query("name") ? " as " + std::string(*req.query("name")) : ""));
        },
        .message = [](kiln::WebSocket& ws, std::string_view data, bool) {
            kiln::publish(ws.param("room"), data);
        }});
    // A plain handler's publish (under --mpm hybrid: from a pool thread, off the loops).
    app.post("/publish/:room", [](kiln::Request& req, kiln::Response& res) {
        kiln::publish(req.param("room"), req.body());
        res.text("published");
    });
    // ?n= messages at once ("0" to "n-1"): a burst through the process bus.
    app.post("/publish/:room/burst", [](kiln::Request& req, kiln::Response& res) {
        long n = bounded_number(req, "n", 1000);
        for (long i = 0; i < n; ++i) kiln::publish(req.param("room"), std::to_string(i));
        res.text("published");
    });
    // Fills the client's backlog round after round (each drain sends another) until
    // its socket is full; a drain 200 ms after the start comes once the client reads
    // again, from the flush of a blocked write, and sends more than max_backlog at once,
    // which cuts it (test_websocket.py): the connection closes inside that flush.
    kiln::WsOptions cut_on_drain;
    cut_on_drain.max_backlog = 256 * 1024;
    struct FillStart {
        std::chrono::steady_clock::time_point at;
    };
    static auto fill = [](kiln::WebSocket& ws) {
        std::string chunk(16 * 1024, 'c');
        for (int i = 0; i < 64; ++i)
            if (ws.send(chunk) != kiln::WebSocket::Sent::Ok) break;
    };
    app.ws("/ws/cut-on-drain", kiln::WsHandlers{
        .message = [](kiln::WebSocket& ws, std::string_view, bool) {
            ws.set_local(FillStart{std::chrono::steady_clock::now()});
            fill(ws);
        },
        .drain = [](kiln::WebSocket& ws) {
            if (std::chrono::steady_clock::now() - ws.local<FillStart>()->at < std::chrono::milliseconds(200)) fill(ws);
            else ws.send(std::string(512 * 1024, 'd'));
        }}, cut_on_drain);
    // Open and close callbacks counted (per worker: ask on the same connection).
    static int ws_opened = 0, ws_closed = 0;
    app.ws("/ws/counted", kiln::WsHandlers{
        .open = [](kiln::WebSocket&, kiln::Request&) { ++ws_opened; },
        .message = [](kiln::WebSocket& ws, std::string_view data, bool) { ws.send(data); },
        .close = [](kiln::WebSocket&, uint16_t, std::string_view) { ++ws_closed; }});
    app.get("/ws-counts", [](kiln::Request&, kiln::Response& res) {
        res.text("opened " + std::to_string(ws_opened) + " closed " + std::to_string(ws_closed));
    });
    kiln::WsOptions small;
    small.max_message = 1024;
    small.max_backlog = 256 * 1024;
    small.ping_interval = std::chrono::milliseconds(400);
    small.protocols = {"chat.v2", "chat.v1"};
    small.allowed_origins = {"https://trusted.example"};
    app.ws("/ws/small", kiln::WsHandlers{
        .message = [](kiln::WebSocket& ws, std::string_view data, bool) {
            if (data.starts_with("flood ")) {  // many large messages: a reader that stops is cut
                int n = std::atoi(std::string(data.substr(6)).c_str());
                std::string chunk(16 * 1024, 'f');
                for (int i = 0; i < n; ++i)
                    if (ws.send(chunk) == kiln::WebSocket::Sent::Dropped) break;
            } else if (data == "close") {
                ws.close(4000, "asked to");
            } else if (data == "close long") {  // a reason past 123 bytes, cut inside a character
                std::string reason = "xx";
                for (int i = 0; i < 80; ++i) reason += "\u00e9";
                ws.close(4001, reason);
            } else if (data == "protocol") {
                ws.send(std::string(ws.protocol()));
            } else {
                ws.send(data);
            }
        }}, small);
    return app.run(argc, argv);
}
