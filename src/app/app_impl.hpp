// App's state, shared by the app layer and App::run in the server layer. Read-only
// once serving starts (every loop thread reads it without locks).
#pragma once
#include <memory>
#include <map>
#include <string>
#include <typeindex>
#include <unordered_map>
#include <vector>

#include <kiln/app.hpp>
#include <kiln/session.hpp>

#include "app/router.hpp"

namespace kiln {

struct Route {
    Handler handler;         // one of the two
    AsyncHandler async;
    RouteOptions options;
    std::string pattern;     // as registered (Request::route_pattern)
};

// One middleware, plain or coroutine.
struct MiddlewareEntry {
    Middleware plain;
    AsyncMiddleware async;
};

struct App::Impl {
    app::Router router;
    std::vector<std::unique_ptr<Route>> routes;
    std::vector<MiddlewareEntry> middleware;
    bool async_middleware = false;  // one is a coroutine: every chain runs as one
    bool async_override = false;    // a PUT, PATCH or DELETE route is a coroutine
    std::vector<RouteInfo> route_infos;  // for App::route_list, in registration order
    size_t default_max_body = RouteOptions{}.max_body;

    std::shared_ptr<SessionStore> user_store;  // App::session_store
    SessionStore* store = nullptr;             // user_store, or the server's default
    std::shared_ptr<AsyncSessionStore> remote_store;  // App::session_store (Redis): instead of store
    SessionOptions session_options;
    std::string secret;  // signed cookies
    std::unordered_map<std::type_index, std::shared_ptr<void>> factories;  // App::controller
    App::ErrorPage error_page;  // empty: the message as text
    bool csrf = false;
    std::vector<App::StartHook> node_start, worker_start;
    std::vector<std::pair<std::string, App::HealthCheck>> health_checks;
    std::map<std::string, std::string, std::less<>> settings;  // ServerOptions::app_settings, set by run()   // csrf_protect() is installed (use()): uploads are checked before spooling
};

}  // namespace kiln
