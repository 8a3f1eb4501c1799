#include <kiln/app.hpp>
#include <kiln/unavailable.hpp>
#include <kiln/view.hpp>  // kMethodField

#include <cxxabi.h>

#include <cstdlib>
#include <ctime>
#include <exception>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "app/app_impl.hpp"
#include "app/body.hpp"
#include "app/csrf_internal.hpp"
#include "app/router.hpp"
#include "app/session_binding.hpp"
#include "http/parser.hpp"
#include "http/response.hpp"
#include "net/async.hpp"
#include "util/log.hpp"

namespace kiln {
namespace {

std::string allow_header(uint32_t allowed) {
    std::string out;
    for (size_t i = 0; i < kMethodCount - 1; ++i) {
        auto m = static_cast<Method>(i);
        if (!(allowed & app::method_bit(m))) continue;
        if (!out.empty()) out += ", ";
        out += http::method_name(m);
    }
    return out;
}

// The route `m` reaches at `path`, or null (a form's _method asks before it is taken).
const Route* route_for(const app::Router& router, Method m, std::string_view path) {
    RouteParam scratch[kMaxRouteParams];
    app::Router::Match match;
    match.params = scratch;
    router.match(m, path, match);
    return static_cast<const Route*>(match.target);
}
}  // namespace


// A status that is no final answer (1xx, or past 599) is answered as 500.
HttpError::HttpError(int status, const std::string& message)
    : std::runtime_error(message.empty() ? std::string(reason_phrase(status)) : message),
      status_(status >= 200 && status <= 599 ? status : 500) {}

App::App() : impl_(std::make_unique<Impl>()) {}
App::~App() = default;

App& App::route(Method method, std::string_view pattern, Handler handler, RouteOptions opts) {
    return add_route(method, pattern, Route{std::move(handler), nullptr, opts});
}

App& App::route(Method method, std::string_view pattern, AsyncHandler handler, RouteOptions opts) {
    return add_route(method, pattern, Route{nullptr, std::move(handler), opts});
}

App& App::add_route(Method method, std::string_view pattern, Route route) {
    auto r = std::make_unique<Route>(std::move(route));
    r->pattern = pattern;
    if (r->async && (method == Method::Put || method == Method::Patch || method == Method::Delete))
        impl_->async_override = true;
    impl_->router.add(method, pattern, r.get());
    impl_->routes.push_back(std::move(r));
    impl_->route_infos.push_back({std::string(http::method_name(method)), std::string(pattern), {}});
    return *this;
}

std::vector<RouteInfo> App::route_list() const { return impl_->route_infos; }

App& App::session_store(std::shared_ptr<SessionStore> store) {
    impl_->user_store = std::move(store);
    impl_->store = impl_->user_store.get();
    impl_->remote_store.reset();
    return *this;
}

App& App::session_store(std::shared_ptr<AsyncSessionStore> store) {
    impl_->remote_store = std::move(store);
    impl_->user_store.reset();
    impl_->store = nullptr;
    return *this;
}

App& App::health_check(std::string name, HealthCheck check) {
    impl_->health_checks.emplace_back(std::move(name), std::move(check));
    return *this;
}

const std::vector<std::pair<std::string, App::HealthCheck>>& App::health_checks() const { return impl_->health_checks; }

AsyncSessionStore* App::remote_session_store() const { return impl_->remote_store.get(); }

bool App::has_session_store() const { return impl_->user_store || impl_->remote_store; }

App& App::use(Middleware m) {
    if (m.target<app::CsrfCheck>()) impl_->csrf = true;
    impl_->middleware.push_back({std::move(m), nullptr});
    return *this;
}

App& App::use_async(AsyncMiddleware m) {
    impl_->middleware.push_back({nullptr, std::move(m)});
    impl_->async_middleware = true;
    return *this;
}

bool App::waits(const Request& req) const {
    if (impl_->async_middleware || impl_->remote_store || (req.route_ && static_cast<const Route*>(req.route_)->async)) return true;
    // A form POST may become PUT, PATCH or DELETE (_method) once its body is read, and
    // the route it then reaches decides; this is asked before that.
    if (!impl_->async_override || req.method() != Method::Post) return false;
    for (Method m : {Method::Put, Method::Patch, Method::Delete})
        if (const Route* r = route_for(impl_->router, m, req.path()); r && r->async) return true;
    return false;
}

uint32_t App::deadline_ms(const Request& req) const {
    const Route* route = final_route(req);
    return route ? route->options.deadline_ms : 0;
}

size_t App::prepare(Request& req) const {
    app::Router::Match m;
    m.params = req.params_;
    impl_->router.match(req.method(), req.path(), m);
    req.route_ = m.target;
    req.allowed_methods_ = m.allowed;
    req.param_count_ = m.param_count;
    return m.target ? static_cast<const Route*>(m.target)->options.max_body : impl_->default_max_body;
}

namespace {
// "std::runtime_error", not "St13runtime_error".
std::string type_name(const std::type_info& t) {
    int status = 0;
    char* readable = abi::__cxa_demangle(t.name(), nullptr, nullptr, &status);
    std::string out = status == 0 && readable ? readable : t.name();
    std::free(readable);
    return out;
}

// Runs fn, mapping what it throws to a response through fail(status, text); false if it threw.
template <class Fail, class Fn>
bool guarded(const Request& req, Fail& fail, Fn&& fn) {
    try {
        fn();
        return true;
    } catch (const HttpError& e) {
        fail(e.status(), e.what());
    } catch (const Cancelled&) {  // the request is gone or past its deadline: nothing to log
        fail(503, "Service Unavailable");
    } catch (const std::exception& e) {
        if (auto* t = dynamic_cast<const TransientError*>(&e); t && t->transient()) {  // a service is away
            util::log(util::LogLevel::Warn, "%.*s %.*s: %s (503)", static_cast<int>(req.method_name().size()),
                      req.method_name().data(), static_cast<int>(req.target().size()), req.target().data(), e.what());
            fail(503, "Service Unavailable");
            return false;
        }
        util::log(util::LogLevel::Error, "%.*s %.*s: handler threw %s: %s", static_cast<int>(req.method_name().size()),
                  req.method_name().data(), static_cast<int>(req.target().size()), req.target().data(),
                  type_name(typeid(e)).c_str(), e.what());
        fail(500, "Internal Server Error");
    } catch (...) {
        util::log(util::LogLevel::Error, "%.*s %.*s: handler threw a non-exception",
                  static_cast<int>(req.method_name().size()), req.method_name().data(),
                  static_cast<int>(req.target().size()), req.target().data());
        fail(500, "Internal Server Error");
    }
    return false;
}

// The same for an exception a coroutine caught (a catch block cannot co_await).
template <class Fail>
bool guarded_error(const Request& req, Fail& fail, const std::exception_ptr& error) {
    return !error || guarded(req, fail, [&] { std::rethrow_exception(error); });
}

}  // namespace

bool App::compresses(const Request& req) const {
    const Route* route = final_route(req);
    return !route || route->options.compress;
}

size_t App::max_files(const Request& req) const {
    return req.route_ ? static_cast<const Route*>(req.route_)->options.max_files : 0;
}

namespace {
// A form's _method value: PUT, PATCH, DELETE, or Other (refused when the form is read).
Method overriding_method(std::string_view wanted) {
    return wanted == "PUT" ? Method::Put : wanted == "PATCH" ? Method::Patch : wanted == "DELETE" ? Method::Delete
                                                                                               : Method::Other;
}
}  // namespace

const Route* App::final_route(const Request& req) const {
    const auto* routed = static_cast<const Route*>(req.route_);
    if (req.method() != Method::Post || !app::is_form_body(req)) return routed;
    std::optional<std::string_view> wanted;
    try {
        wanted = req.form().get(kMethodField);
    } catch (const HttpError&) {
        return routed;  // refused in the chain, as override_method() reads it again
    }
    Method m = wanted ? overriding_method(*wanted) : Method::Other;
    return m == Method::Other ? routed : route_for(impl_->router, m, req.path());
}

std::function<size_t(std::string_view)> App::overridden_max_files(const Request& req) const {
    if (req.method() != Method::Post) return {};
    // A copy of the path: the request's buffers move on while the body arrives.
    return [this, path = std::string(req.path())](std::string_view wanted) -> size_t {
        Method m = overriding_method(wanted);
        if (m == Method::Other) return 0;  // refused once the form is read; no file meanwhile
        const Route* route = route_for(impl_->router, m, path);
        return route ? route->options.max_files : 0;
    };
}

void Next::operator()() {
    if (std::exchange(called_, true)) return;  // the rest runs once
    if (async_) {
        // A plain middleware in a chain that may wait: the rest runs up to its first
        // wait; run_chain awaits what is left once the middleware returns.
        Task<> rest = app_.run_chain(*this);
        {
            // The request's scope stays current for the middleware's code after next(),
            // whatever the rest left current as it suspended (a wait of no request's).
            net::AsyncScope::Enter keep(net::AsyncScope::current());
            rest.start();
        }
        if (rest.done()) rest.result();  // what the rest threw, as a plain chain would
        else waiting_.push_back(std::move(rest));
        return;
    }
    const auto& mw = app_.impl_->middleware;
    if (index_ < mw.size()) {
        Next next(app_, req_, res_, false, index_ + 1);
        mw[index_].plain(req_, res_, next);
        return;
    }
    if (app_.answer_without_handler(req_, res_)) return;
    // Caught here, inside the chain: the middleware around the handler goes on
    // after next() and finishes the error page as it would any page.
    const http::HeaderMark keep = res_.msg_->mark();
    auto fail = [&](int status, std::string_view text) { app_.fail_in_chain(req_, res_, status, text, keep); };
    if (!guarded(req_, fail, [&] { static_cast<const Route*>(req_.route_)->handler(req_, res_); }))
        req_.handler_failed_ = true;
}

Task<> Next::operator co_await() {
    if (std::exchange(called_, true)) return []() -> Task<> { co_return; }();  // the rest runs once
    return app_.run_chain(*this);
}

bool App::answer_without_handler(Request& req, Response& res) const {
    if (req.path() == "*") {  // OPTIONS * asks about the server, not a resource
        res.status(204).header("Allow", allow_header(~0u & ~(app::method_bit(Method::Connect) | app::method_bit(Method::Trace))));
    } else if (req.route_) {
        return false;
    } else if (req.allowed_methods_ == 0) {
        fail_in_chain(req, res, 404, "Not Found", res.msg_->mark());
    } else if (req.method() == Method::Options) {
        res.status(204).header("Allow", allow_header(req.allowed_methods_ | app::method_bit(Method::Options)));
    } else {
        fail_in_chain(req, res, 405, "Method Not Allowed", res.msg_->mark());
        res.header("Allow", allow_header(req.allowed_methods_));
    }
    return true;
}

Task<> App::run_chain(Next& from) const {
    const auto& mw = impl_->middleware;
    if (from.index_ < mw.size()) {
        const MiddlewareEntry& m = mw[from.index_];
        Next next(*this, from.req_, from.res_, true, from.index_ + 1);  // the middleware's own
        // What the middleware started with a plain next() and left waiting (the rest
        // of the chain, up to its first wait) ends before the chain goes on, even when
        // the middleware threw after it: destroyed mid-wait, it would abandon the
        // handler (and a kiln::blocking job would hold the loop until it returned).
        std::exception_ptr thrown;
        try {
            if (m.async) co_await m.async(next.req_, next.res_, next);
            else m.plain(next.req_, next.res_, next);
        } catch (...) {
            thrown = std::current_exception();
        }
        while (!next.waiting_.empty()) {
            Task<> rest = std::move(next.waiting_.back());
            next.waiting_.pop_back();
            co_await rest;
        }
        if (thrown) std::rethrow_exception(thrown);
        co_return;
    }
    if (answer_without_handler(from.req_, from.res_)) co_return;
    co_await run_handler(from.req_, from.res_);
}

Task<> App::run_handler(Request& req, Response& res) const {
    const Route& route = *static_cast<const Route*>(req.route_);
    const http::HeaderMark keep = res.msg_->mark();
    auto fail = [&](int status, std::string_view text) { fail_in_chain(req, res, status, text, keep); };
    if (!route.async) {
        if (!guarded(req, fail, [&] { route.handler(req, res); })) req.handler_failed_ = true;
        co_return;
    }
    std::exception_ptr error;
    try {
        co_await route.async(req, res);
    } catch (...) {
        error = std::current_exception();
    }
    if (!guarded_error(req, fail, error)) req.handler_failed_ = true;
}

void App::fail_in_chain(Request& req, Response& res, int status, std::string_view message,
                        const http::HeaderMark& kept) const {
    if (res.streaming()) {  // the head is gone: the only honest signal is a cut
        res.msg_->abort();
        return;
    }
    auto restart = [&] {  // the status alone, on the headers middleware set before the handler
        res.msg_->clear_keeping(kept);
        res.status(status);
        if (status == 503) res.header("Retry-After", "1");  // a service away, or a deadline: soon is fine
    };
    restart();
    if (impl_->error_page) {
        try {
            impl_->error_page(req, res, status, message);
            return;
        } catch (const std::exception& e) {
            util::log(util::LogLevel::Error, "error page for status %d threw %s: %s", status,
                      type_name(typeid(e)).c_str(), e.what());
        } catch (...) {
            util::log(util::LogLevel::Error, "error page for status %d threw a non-exception", status);
        }
        restart();
    }
    res.text(std::string(message) + "\n");
}

App& App::on_node_start(StartHook hook) {
    impl_->node_start.push_back(std::move(hook));
    return *this;
}

App& App::on_worker_start(StartHook hook) {
    impl_->worker_start.push_back(std::move(hook));
    return *this;
}

std::optional<std::string_view> App::setting(std::string_view name) const {
    auto it = impl_->settings.find(name);
    if (it == impl_->settings.end()) return std::nullopt;
    return std::string_view(it->second);
}

App& App::error_page(ErrorPage page) {
    impl_->error_page = std::move(page);
    return *this;
}

void App::set_factory(const std::type_info& type, std::shared_ptr<void> make) {
    impl_->factories[std::type_index(type)] = std::move(make);
}

std::shared_ptr<void> App::factory(const std::type_info& type) const {
    auto it = impl_->factories.find(std::type_index(type));
    return it == impl_->factories.end() ? nullptr : it->second;
}

namespace {
int64_t wall_seconds() { return static_cast<int64_t>(time(nullptr)); }
}  // namespace

void App::begin_request(Request& req, Response& res, Session::Binding& binding) const {
    using Secure = SessionOptions::Secure;
    Secure mode = impl_->session_options.secure;
    bool secure_cookie = mode == Secure::Always || (mode == Secure::Auto && req.secure());
    binding = Session::Binding{};
    binding.store = impl_->store;
    binding.remote = impl_->remote_store.get();
    binding.max_bytes = binding.remote ? binding.remote->max_bytes() : binding.store ? binding.store->max_bytes() : 0;
    binding.options = &impl_->session_options;
    binding.response = &res;
    binding.secure = secure_cookie;
    binding.now = wall_seconds();
    req.session_binding_ = binding.store || binding.remote ? &binding : nullptr;
    req.secret_ = res.secret_ = &impl_->secret;
}

// HTML forms can only GET and POST: a POST form with _method=PUT, PATCH or DELETE
// is routed as that method (here, once the body is in and the form readable).
void App::override_method(Request& req) const {
    if (req.method() != Method::Post || !app::is_form_body(req)) return;
    const Form& form = req.form();
    auto wanted = form.get(kMethodField);
    if (!wanted) return;
    Method m = overriding_method(*wanted);
    if (m == Method::Other) throw HttpError(400, "_method must be PUT, PATCH or DELETE");
    req.method_ = m;
    // The new route's body limit: a multipart body went to the form as it came, so
    // its size is the form's (fields and files), not body()'s.
    uint64_t size = req.body().size();
    if (app::has_media_type(req, "multipart/form-data")) {
        for (const Form::Field& f : form.fields()) size += f.name.size() + f.value.size();
        for (const UploadedFile& f : form.files()) size += f.size;
    }
    if (size > prepare(req)) throw HttpError(413, "request body larger than this route accepts");
    // Files come before a _method field that follows them: the upload counted them
    // against the POST route's max_files, not this one's. (No such route: 404 or 405
    // as for any request.)
    if (size_t most = max_files(req); req.route_ && form.files().size() > most)
        throw HttpError(413, most == 0 ? std::string("this route accepts no file uploads")
                                       : "more than " + std::to_string(most) + " files in one request");
}

// A handler that fails keeps its session changes out of the store, as a failed
// transaction would: the session is saved only after a normal return.
void App::end_request(Request& req, Response& res, bool handled) const {
    auto fail = [&](int status, std::string_view client_text) { fail_in_chain(req, res, status, client_text, {}); };
    if (req.session_.active()) {
        guarded(req, fail, [&] {
            Session::Write w = req.session_.end(handled && !req.handler_failed_);
            req.session_binding_->closed = true;  // (the error page of a failed write)
            Session::write_to(*req.session_binding_->store, w, req.session_binding_->now);
        });
    }
    req.session_binding_ = nullptr;
    req.secret_ = res.secret_ = nullptr;
}

// Exceptions become responses in two places, both through guarded(): a handler's
// inside the chain (so middleware finishes the error page), and what a middleware
// itself throws, here. The log gets the detail; the client gets only the status
// (or an HttpError's own message). What a middleware throws replaces everything
// set so far (no header is kept).
void App::handle(Request& req, Response& res) const {
    auto fail = [&](int status, std::string_view client_text) { fail_in_chain(req, res, status, client_text, {}); };
    Session::Binding binding{};
    begin_request(req, res, binding);
    bool handled = guarded(req, fail, [&] {
        override_method(req);
        Next next(*this, req, res, false, 0);
        next();
    });
    end_request(req, res, handled);
}

Task<> App::handle_async(Request& req, Response& res) const {
    Session::Binding binding{};
    begin_request(req, res, binding);
    if (binding.remote) co_await preload_session(req, binding);
    std::exception_ptr error;
    try {
        override_method(req);
        Next next(*this, req, res, true, 0);
        co_await next;
    } catch (...) {
        error = std::current_exception();
    }
    auto fail = [&](int status, std::string_view client_text) { fail_in_chain(req, res, status, client_text, {}); };
    bool handled = guarded_error(req, fail, error);
    if (binding.remote) co_await save_session(req, res, handled);
    end_request(req, res, handled);
}

Task<> App::preload_session(Request& req, Session::Binding& binding) const {
    auto cookie = req.cookie(impl_->session_options.cookie);
    SessionId id;
    if (!cookie || !parse_session_id(*cookie, id)) co_return;  // nothing else ever reaches the store
    try {
        std::optional<std::string> data = co_await binding.remote->load(id, binding.now);
        binding.found = data.has_value();
        if (data) req.session_.load_buf_ = std::move(*data);
    } catch (const Cancelled&) {  // the request is gone or past its deadline
        binding.failed = true;
    } catch (const std::exception& e) {
        util::log(util::LogLevel::Error, "session store: load failed: %s", e.what());
        binding.failed = true;  // the request goes on; using its session answers 503
    }
}

Task<> App::save_session(Request& req, Response& res, bool handled) const {
    if (!req.session_.active()) co_return;
    Session::Binding& binding = *req.session_binding_;
    Session::Write w = req.session_.end(handled && !req.handler_failed_);
    binding.closed = true;  // (the error page of a failed write)
    std::string failure;
    try {
        using K = Session::Write::Kind;
        AsyncSessionStore& store = *binding.remote;
        switch (w.kind) {
        case K::None: break;
        case K::Create: co_await store.save(w.id, binding.now, std::move(w.data), SessionStore::SaveMode::Create); break;
        case K::Update: co_await store.save(w.id, binding.now, std::move(w.data), SessionStore::SaveMode::Update); break;
        case K::Rename: {  // as Session::write_to: `from` gone meanwhile, the new id is made
            bool moved = co_await store.rename(w.from, w.id, binding.now, w.data);
            if (!moved && w.make_if_gone) co_await store.save(w.id, binding.now, std::move(w.data), SessionStore::SaveMode::Create);
            break;
        }
        case K::Replace:
            co_await store.remove(w.from);
            co_await store.save(w.id, binding.now, std::move(w.data), SessionStore::SaveMode::Create);
            break;
        case K::Remove: co_await store.remove(w.id); break;
        }
    } catch (const Cancelled&) {
        failure = "cancelled";
    } catch (const std::exception& e) {
        failure = e.what();
        util::log(util::LogLevel::Error, "session store: save failed: %s", e.what());
    }
    if (failure.empty()) co_return;
    // What the handler did to the session is not kept: its answer must not say it was.
    fail_in_chain(req, res, 503, "the session store is unavailable", {});
}

}  // namespace kiln
