// kiln::App: routes, middleware and the entry point. Register routes and middleware
// in main() before run(); after run() starts serving, the route table is read-only
// and shared by every event-loop thread without locks.
//
// Patterns: "/users/:id" (one segment), "/files/*path" (the rest, may be empty),
// static segments win over parameters, parameters over the rest-wildcard. Look-up
// cost depends on the path's depth, not on the number of routes.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include <kiln/files.hpp>
#include <kiln/http_types.hpp>
#include <kiln/request.hpp>
#include <kiln/response.hpp>
#include <kiln/session.hpp>
#include <kiln/task.hpp>
#include <kiln/websocket.hpp>

namespace kiln {

using Handler = std::function<void(Request&, Response&)>;
// A handler that may wait (see <kiln/task.hpp>): a coroutine returning kiln::Task<>.
using AsyncHandler = std::function<Task<>(Request&, Response&)>;

// Calls the rest of the chain (later middleware, then the handler). A middleware
// that does not call it answers the request itself (e.g. 401). A coroutine
// middleware awaits it: `co_await next;` returns when the handler has finished.
// A plain middleware's next() returns when the rest has finished or, in front of a
// coroutine handler, when the handler first waits: the response is then not done
// yet, so work on it after next() belongs in a coroutine middleware. Each
// middleware has a Next of its own, and the rest runs once: a second call does
// nothing (a later middleware that answered without calling its own stays the
// answer, even while it still waits).
class Next {
public:
    void operator()();
    Task<> operator co_await();
private:
    friend class App;
    Next(const App& app, Request& req, Response& res, bool async, size_t index)
        : app_(app), req_(req), res_(res), index_(index), async_(async) {}
    const App& app_;
    Request& req_;
    Response& res_;
    size_t index_;                 // where the rest begins: a middleware's, or the handler
    bool called_ = false;
    bool async_;                   // the chain runs as a coroutine (the request waits)
    std::vector<Task<>> waiting_;  // what a plain middleware's next() left running
};

using Middleware = std::function<void(Request&, Response&, Next&)>;
using AsyncMiddleware = std::function<Task<>(Request&, Response&, Next&)>;

namespace detail {
template <class F>
concept AsyncHandlerFn = std::is_invocable_v<F&, Request&, Response&> &&
                         std::is_same_v<std::invoke_result_t<F&, Request&, Response&>, Task<>>;
template <class F>
concept AsyncMiddlewareFn = std::is_invocable_v<F&, Request&, Response&, Next&> &&
                            std::is_same_v<std::invoke_result_t<F&, Request&, Response&, Next&>, Task<>>;
}  // namespace detail

struct RouteOptions {
    size_t max_body = 8 * 1024 * 1024;  // larger bodies get 413 before they are read
    // A coroutine handler not finished after this long is cancelled (its awaits
    // throw kiln::Cancelled) and the client gets 504, or a stream already begun is
    // cut. 0: the server's timeouts.handler_ms (whose 0 means no deadline), which
    // bounds only the time until the answer begins: a stream (server-sent events, a
    // long download) lives on, bounded by the write timeout and its backlog.
    uint32_t deadline_ms = 0;
    // File parts a multipart/form-data body may carry (more: 413). 0: the route takes
    // no files, and nothing sent to it is ever written to disk; fields still work.
    size_t max_files = 0;
    // Compress this route's text responses on the fly (the server's compression.*
    // settings say which and how); false: never, e.g. a page that reflects input
    // next to a secret the masked CSRF token does not cover.
    bool compress = true;
    // Values a JSON body may hold for req.json() (more: 413), counted before parsing
    // from its commas, colons and brackets. Parsed, a value takes 16 to about 80 bytes
    // (an object or array its container too), so a body of max_body bytes could take
    // about 25 times its size; this bounds it: 200,000 values are under 16 MB.
    size_t max_json_values = 200'000;
};

// Throw from a handler to answer with this status; what() is shown to the client.
class HttpError : public std::runtime_error {
public:
    explicit HttpError(int status, const std::string& message = {});
    int status() const { return status_; }
private:
    int status_;
};

struct ServerOptions;
namespace app {
class Dispatcher;
}
namespace testing {
class Client;
}

struct Route;  // a route as the router holds it (src/app/app_impl.hpp)

// One registered route, as `app --routes` and `kiln routes` list it.
struct RouteInfo {
    std::string method;     // "GET", "POST", ...
    std::string pattern;    // as registered: "/posts/:id", "/*path"
    std::string files_dir;  // for an App::files mount, the directory served; else empty
};

class App {
public:
    App();
    ~App();
    App(const App&) = delete;
    App& operator=(const App&) = delete;

    App& route(Method method, std::string_view pattern, Handler handler, RouteOptions opts = {});
    App& get(std::string_view pattern, Handler h, RouteOptions o = {}) { return route(Method::Get, pattern, std::move(h), o); }
    App& post(std::string_view pattern, Handler h, RouteOptions o = {}) { return route(Method::Post, pattern, std::move(h), o); }
    App& put(std::string_view pattern, Handler h, RouteOptions o = {}) { return route(Method::Put, pattern, std::move(h), o); }
    App& patch(std::string_view pattern, Handler h, RouteOptions o = {}) { return route(Method::Patch, pattern, std::move(h), o); }
    App& del(std::string_view pattern, Handler h, RouteOptions o = {}) { return route(Method::Delete, pattern, std::move(h), o); }

    // A coroutine handler: `[](Request&, Response&) -> kiln::Task<> { co_await ...; }`.
    // While it waits, its connection holds the request (pipelined requests behind
    // it wait, and their responses leave in order) and its loop serves others.
    App& route(Method method, std::string_view pattern, AsyncHandler handler, RouteOptions opts = {});
    template <detail::AsyncHandlerFn F>
    App& get(std::string_view p, F h, RouteOptions o = {}) { return route(Method::Get, p, AsyncHandler(std::move(h)), o); }
    template <detail::AsyncHandlerFn F>
    App& post(std::string_view p, F h, RouteOptions o = {}) { return route(Method::Post, p, AsyncHandler(std::move(h)), o); }
    template <detail::AsyncHandlerFn F>
    App& put(std::string_view p, F h, RouteOptions o = {}) { return route(Method::Put, p, AsyncHandler(std::move(h)), o); }
    template <detail::AsyncHandlerFn F>
    App& patch(std::string_view p, F h, RouteOptions o = {}) { return route(Method::Patch, p, AsyncHandler(std::move(h)), o); }
    template <detail::AsyncHandlerFn F>
    App& del(std::string_view p, F h, RouteOptions o = {}) { return route(Method::Delete, p, AsyncHandler(std::move(h)), o); }

    // A controller method as a route: app.post("/posts/:id", &PostsController::update),
    // with `void update(kiln::Request&, kiln::Response&)`. A controller is made for
    // each request (its members are that request's), by the factory given to
    // controller<C>() or, without one, default-constructed.
    template <class M>
        requires std::is_member_function_pointer_v<M>
    App& route(Method method, std::string_view pattern, M handler, RouteOptions opts = {});
    template <class M> requires std::is_member_function_pointer_v<M>
    App& get(std::string_view p, M h, RouteOptions o = {}) { return route(Method::Get, p, h, o); }
    template <class M> requires std::is_member_function_pointer_v<M>
    App& post(std::string_view p, M h, RouteOptions o = {}) { return route(Method::Post, p, h, o); }
    template <class M> requires std::is_member_function_pointer_v<M>
    App& put(std::string_view p, M h, RouteOptions o = {}) { return route(Method::Put, p, h, o); }
    template <class M> requires std::is_member_function_pointer_v<M>
    App& patch(std::string_view p, M h, RouteOptions o = {}) { return route(Method::Patch, p, h, o); }
    template <class M> requires std::is_member_function_pointer_v<M>
    App& del(std::string_view p, M h, RouteOptions o = {}) { return route(Method::Delete, p, h, o); }

    // A handler class (one object per request, Cerflet's model): app.get<Hello>("/")
    // with `struct Hello { void handle(kiln::Request&, kiln::Response&); };`.
    template <class C> App& get(std::string_view p, RouteOptions o = {}) { return route(Method::Get, p, &C::handle, o); }
    template <class C> App& post(std::string_view p, RouteOptions o = {}) { return route(Method::Post, p, &C::handle, o); }
    template <class C> App& put(std::string_view p, RouteOptions o = {}) { return route(Method::Put, p, &C::handle, o); }
    template <class C> App& patch(std::string_view p, RouteOptions o = {}) { return route(Method::Patch, p, &C::handle, o); }
    template <class C> App& del(std::string_view p, RouteOptions o = {}) { return route(Method::Delete, p, &C::handle, o); }

    // A WebSocket endpoint (see <kiln/websocket.hpp>): a GET route that answers the
    // upgrade after the middleware ran (426 to a request that is not one), then
    // the callbacks, or the coroutine, for each WebSocket.
    App& ws(std::string_view pattern, WsHandlers handlers, WsOptions opts = {});
    App& ws(std::string_view pattern, WsCoroutine coroutine, WsOptions opts = {});
    template <class F>
        requires(std::is_invocable_r_v<Task<>, F&, WebSocket&> && !std::is_same_v<std::decay_t<F>, WsCoroutine>)
    App& ws(std::string_view pattern, F coroutine, WsOptions opts = {}) {
        return ws(pattern, WsCoroutine(std::move(coroutine)), std::move(opts));
    }

    // How controller C is made for each request, for one that needs the app's
    // state: app.controller<PostsController>([&] { return PostsController(db); }).
    // Register it before C's routes.
    template <class C, class F>
    App& controller(F make);

    // The page for a status a handler ends with by throwing (HttpError's status and
    // message, or 500 for anything else). It runs inside the middleware chain, so
    // what middleware adds after next() (X-Frame-Options, ...) is on error pages too.
    // Default: the message as text/plain. If it throws, the default is used.
    using ErrorPage = std::function<void(Request&, Response&, int status, std::string_view message)>;
    App& error_page(ErrorPage page);

    // Serves the files under `dir` at `prefix` (GET and HEAD): see FileOptions.
    // Paths never leave `dir`: dot segments and symlinks that lead outside get 404
    // (an encoded slash or NUL in a path is a 400 before routing).
    App& files(std::string_view prefix, std::string_view dir, FileOptions opts = {});

    // What the health endpoint (health.path) checks besides the server itself: each
    // check returns "" when its part is fine, or why not (or throws). With any, the
    // endpoint runs them all on every probe and answers 503 {"status":"unavailable",
    // "failing":{NAME:"failing"}} if one fails (the reason goes to the error log when
    // it changes, not to the client), so a balancer takes a node whose
    // database is unreachable out until it is back. A session store in Redis is
    // checked without being named here.
    //   app.health_check("database", [&]() -> kiln::Task<std::string> { co_await store.check(); co_return ""; });
    using HealthCheck = std::function<Task<std::string>()>;
    App& health_check(std::string name, HealthCheck check);
    const std::vector<std::pair<std::string, HealthCheck>>& health_checks() const;
    // The AsyncSessionStore given to session_store, or null.
    AsyncSessionStore* remote_session_store() const;

    // The store behind req.session(). Default: the node-wide shared-memory table the
    // server creates (config `session.*`); give another (Redis, SQLite) here.
    App& session_store(std::shared_ptr<SessionStore> store);
    // A store across the network (redis::session_store; `session.store = "redis"`
    // makes one): every request then runs as a coroutine, its session loaded before
    // the chain and saved after it.
    App& session_store(std::shared_ptr<AsyncSessionStore> store);
    bool has_session_store() const;  // one was given (else the server brings its default)

    // Middleware runs in registration order around every request, matched or not.
    App& use(Middleware m);
    // A coroutine middleware (`co_await next;`). With one installed, every request
    // runs its chain as a coroutine.
    template <detail::AsyncMiddlewareFn F>
    App& use(F m) { return use_async(AsyncMiddleware(std::move(m))); }
    App& use_async(AsyncMiddleware m);

    // Set-up with the settings read: once per node, in the process that starts the
    // workers (or serves alone), after the sockets are bound and privileges dropped,
    // before any worker starts: migrations, cache warm-up. And once in every worker
    // process before it serves: connections, per-process state. main() itself runs
    // again in every worker, so work done there happens once per process. A hook
    // that throws stops the start (exit 2; a worker exits and is restarted).
    using StartHook = std::function<void(const ServerOptions&)>;
    App& on_node_start(StartHook hook);
    App& on_worker_start(StartHook hook);

    // The app's own setting `name` ([app] in kiln.toml, KILN_APP_<NAME>, --set
    // NAME=VALUE), once run() has read them; nullopt if unset.
    std::optional<std::string_view> setting(std::string_view name) const;

    // Every route in registration order (App::files mounts included).
    std::vector<RouteInfo> route_list() const;

    // Parses flags (--port, --host, --threads, --help), serves until SIGINT/SIGTERM.
    // Returns the process exit status (0 after a graceful stop, 2 on a bad flag).
    int run(int argc, char** argv);
    int run(const ServerOptions& options);

    struct Impl;  // the app's state (src/app/app_impl.hpp)

private:
    friend class Next;
    friend class app::Dispatcher;  // the engine's way in (src/app/dispatcher.hpp)
    friend class testing::Client;  // gives an app without them a session store and a secret
    // Routes the request (params, route) and returns its body limit.
    size_t prepare(Request& req) const;
    // Middleware and the handler, exceptions mapped to statuses; saves the session.
    void handle(Request& req, Response& res) const;
    // The same for a request that may wait (waits(req)): a coroutine route or a
    // coroutine middleware. Runs until done; never throws.
    bool waits(const Request& req) const;
    App& add_route(Method method, std::string_view pattern, Route route);
    App& add_ws(std::string_view pattern, std::shared_ptr<const detail::WsRoute> route);
    uint32_t deadline_ms(const Request& req) const;  // the route's; 0: the server's
    // The route the request ends at: a form POST's _method picks another, as
    // override_method() will; asked before it, for the route's deadline and compression.
    const Route* final_route(const Request& req) const;
    Task<> handle_async(Request& req, Response& res) const;
    Task<> run_chain(Next& next) const;
    Task<> run_handler(Request& req, Response& res) const;
    void begin_request(Request& req, Response& res, Session::Binding& binding) const;
    void override_method(Request& req) const;
    // OPTIONS *, 404 and 405 (and OPTIONS's 204): true if answered, false if a route matched.
    bool answer_without_handler(Request& req, Response& res) const;
    void end_request(Request& req, Response& res, bool handled) const;
    // The session the cookie names, from the AsyncSessionStore, into the binding.
    Task<> preload_session(Request& req, Session::Binding& binding) const;
    // What the request changed in its session, to the AsyncSessionStore; 503 if it fails.
    Task<> save_session(Request& req, Response& res, bool handled) const;
    // While a multipart body arrives: the files the routed request may carry, and the
    // check its fields so far must pass before the first is written (csrf_protect(),
    // when installed with use(): the X-CSRF-Token header or a _csrf field ahead of the
    // files). An empty function: no check.
    size_t max_files(const Request& req) const;
    // For a form POST: the max_files of the route a _method field would route it to.
    std::function<size_t(std::string_view method)> overridden_max_files(const Request& req) const;
    bool compresses(const Request& req) const;  // the route's RouteOptions::compress
    std::function<bool(const Form&)> upload_gate(const Request& req) const;
    // A type-erased controller factory (a std::function<C()>), keyed by C's type.
    void set_factory(const std::type_info& type, std::shared_ptr<void> make);
    std::shared_ptr<void> factory(const std::type_info& type) const;
    // A handler failed: the response back to what the middleware had set before
    // next() (`kept`: its headers then; a default mark keeps none), then the error page.
    void fail_in_chain(Request& req, Response& res, int status, std::string_view message,
                       const http::HeaderMark& kept) const;
    std::unique_ptr<Impl> impl_;
};

namespace detail {
template <class M>
struct MemberOf;
template <class C, class R>
struct MemberOf<R (C::*)(Request&, Response&)> {
    using type = C;
    using result = R;
};
template <class C, class R>
struct MemberOf<R (C::*)(Request&, Response&) const> {
    using type = C;
    using result = R;
};
}  // namespace detail

template <class M>
    requires std::is_member_function_pointer_v<M>
App& App::route(Method method, std::string_view pattern, M handler, RouteOptions opts) {
    // Not found: the method is not void(Request&, Response&) or Task<>(Request&, Response&).
    using C = typename detail::MemberOf<M>::type;
    using R = typename detail::MemberOf<M>::result;
    static_assert(std::is_void_v<R> || std::is_same_v<R, Task<>>, "a controller method returns void or kiln::Task<>");
    auto make = std::static_pointer_cast<std::function<C()>>(factory(typeid(C)));
    if constexpr (!std::is_default_constructible_v<C>) {
        if (!make)
            throw std::logic_error(std::string("kiln: controller ") + typeid(C).name() +
                                   " has no default constructor and no factory: call app.controller<C>(...) first");
    }
    auto construct = [make]() -> C {
        if constexpr (std::is_default_constructible_v<C>) {
            if (!make) return C{};
        }
        return (*make)();
    };
    if constexpr (std::is_void_v<R>) {
        return route(method, pattern, Handler([construct, handler](Request& req, Response& res) {
            C c = construct();
            (c.*handler)(req, res);
        }), opts);
    } else {
        // The controller lives in this coroutine's frame for as long as its method waits.
        return route(method, pattern, AsyncHandler([construct, handler](Request& req, Response& res) -> Task<> {
            C c = construct();
            co_await (c.*handler)(req, res);
        }), opts);
    }
}

template <class C, class F>
App& App::controller(F make) {
    set_factory(typeid(C), std::make_shared<std::function<C()>>(std::move(make)));
    return *this;
}

}  // namespace kiln
