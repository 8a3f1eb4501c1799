// What the HTTP engine calls in a kiln server: the app (app::Dispatcher), plus the
// server's own endpoints (metrics, health), answered before routing so they work
// whatever routes the app has. Shared read-only by every loop of the process.
#pragma once
#include <atomic>
#include <string>

#include <kiln/app.hpp>
#include <kiln/server.hpp>

#include "app/dispatcher.hpp"
#include "http/rate_table.hpp"
#include "server/health.hpp"
#include "server/listeners.hpp"
#include "server/stats.hpp"

namespace kiln::server {

class AppService final : public app::Dispatcher {
public:
    AppService(const App& app, const ServerOptions& o, const SharedStats& stats, const SessionStore* sessions,
               const http::RateTable* rates, const std::atomic<bool>& draining)
        : Dispatcher(app, o.upload_spool_bytes, o.handler_timeout_ms), app_(app), metrics_(o.metrics_path), health_(o.health_path),
          stats_(stats), sessions_(sessions), rates_(rates), draining_(draining),
          checks_(!app.health_checks().empty() || app.remote_session_store()),
          redirect_http_(o.tls_redirect_http), https_port_(https_port(o)) {
        set_compression(app::CompressionPolicy{.enabled = o.compression,
                                               .min_size = o.compression_min_size,
                                               .types = o.compression_types,
                                               .levels = {o.compression_gzip_level, o.compression_brotli_level,
                                                          o.compression_zstd_level}});
    }

    // The server's own endpoints never wait, whatever the app's middleware does: the
    // engine then calls handle() for them, below.
    // The health endpoint waits when it has checks to run (App::health_check, a
    // Redis session store): run_waiting runs them.
    bool waits(http::RequestContext& ctx) override {
        const Request& req = static_cast<app::Context&>(ctx).request;
        if (own_endpoint(req.method(), req.path())) return req.path() == health_ && checks_;
        if (redirects(req)) return false;  // answered by handle()
        return Dispatcher::waits(ctx);
    }

    void handle(http::RequestContext& ctx, const http::Request& req, http::Response& res) override {
        bool get = req.method() == Method::Get || req.method() == Method::Head;
        if (get && !metrics_.empty() && req.path() == metrics_) {
            res.header("Cache-Control", "no-store");
            std::string text = stats_.prometheus();
            if (sessions_)
                text += "# HELP kiln_session_evictions_total Live sessions evicted to make room in a full store.\n"
                        "# TYPE kiln_session_evictions_total counter\nkiln_session_evictions_total " +
                        std::to_string(sessions_->evictions()) + "\n";
            if (rates_)  // the node's table: the same count from every worker
                text += "# HELP kiln_rate_limit_unchecked_total Requests limits.rate let through unchecked: the slots "
                        "for the client's address were all held by other active addresses (raise limits.rate_table).\n"
                        "# TYPE kiln_rate_limit_unchecked_total counter\nkiln_rate_limit_unchecked_total " +
                        std::to_string(rates_->overflows()) + "\n";
            res.send(text, "text/plain; version=0.0.4; charset=utf-8");
            return;
        }
        if (get && !health_.empty() && req.path() == health_) {
            res.header("Cache-Control", "no-store");
            if (draining()) {
                // Stopping: the balancer should route elsewhere (this answer still serves).
                res.status(503);
                res.send("{\"status\":\"draining\"}", "application/json");
                return;
            }
            res.send("{\"status\":\"ok\",\"uptime_seconds\":" + std::to_string(stats_.uptime_seconds()) + "}",
                     "application/json");
            return;
        }
        if (redirects(static_cast<app::Context&>(ctx).request)) {
            // tls.redirect_http: the same host and target, over HTTPS. 308 keeps the
            // method and body of a POST.
            std::string host(host_without_port(req.host()));
            if (host.empty()) host = "localhost";
            res.status(308);
            res.header("Location", "https://" + host + https_port_ + std::string(req.target()));
            res.send("Use HTTPS\n", "text/plain; charset=utf-8");
            return;
        }
        Dispatcher::handle(ctx, req, res);
    }

protected:
    Task<> run_waiting(app::Context& c) override {
        if (own_endpoint(c.request.method(), c.request.path()) && c.request.path() == health_)
            return check_health(app_, c.response, draining(), stats_.uptime_seconds());
        return Dispatcher::run_waiting(c);
    }

private:
    bool redirects(const Request& req) const { return redirect_http_ && !req.secure(); }
    // "example.org:8080" -> "example.org", "[::1]:8080" -> "[::1]".
    static std::string_view host_without_port(std::string_view host) {
        if (host.starts_with('[')) return host.substr(0, host.find(']') + 1);
        size_t colon = host.find(':');
        return colon == std::string_view::npos ? host : host.substr(0, colon);
    }
    bool draining() const { return draining_.load(std::memory_order_relaxed) || stats_.draining(); }
    bool own_endpoint(Method m, std::string_view path) const {
        if (m != Method::Get && m != Method::Head) return false;
        return (!metrics_.empty() && path == metrics_) || (!health_.empty() && path == health_);
    }

    const App& app_;
    std::string metrics_, health_;
    const SharedStats& stats_;
    const SessionStore* sessions_;  // null: the app brought no store and kiln made none
    const http::RateTable* rates_;  // null: limits.rate is off
    const std::atomic<bool>& draining_;  // this process got its stop signal (a reload's old worker)
    bool checks_;                        // the health endpoint has checks to run
    bool redirect_http_;                 // tls.redirect_http
    std::string https_port_;             // ":8443" for the Location, "" for 443
};

}  // namespace kiln::server
