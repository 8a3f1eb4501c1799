// What the HTTP engine calls in a kiln server: the app, plus the server's own
// endpoints (metrics, health), answered before routing so they work whatever
// routes the app has. Shared read-only by every loop of the process.
#pragma once
#include <string>

#include <kiln/app.hpp>
#include <kiln/server.hpp>

#include "app/upload_sink.hpp"
#include "http/service.hpp"
#include "server/stats.hpp"

namespace kiln::server {

class AppService final : public http::Service {
public:
    AppService(const App& app, const ServerOptions& o, const SharedStats& stats, const SessionStore* sessions)
        : app_(app), metrics_(o.metrics_path), health_(o.health_path), stats_(stats), sessions_(sessions),
          spool_limit_(o.upload_spool_bytes) {}
    size_t prepare(Request& req) override { return app_.prepare(req); }
    std::unique_ptr<http::BodySink> body_sink(Request& req) override {
        auto type = req.header("content-type");
        if (!type) return nullptr;
        // Routed already: the route says how many files it takes; unknown routes none.
        return app::UploadSink::for_content_type(*type, {app_.max_files(req), spool_limit_, app_.upload_gate(req)});
    }
    void handle(Request& req, Response& res) override {
        bool get = req.method() == Method::Get || req.method() == Method::Head;
        if (get && !metrics_.empty() && req.path() == metrics_) {
            res.header("Cache-Control", "no-store");
            std::string text = stats_.prometheus();
            if (sessions_)
                text += "# HELP kiln_session_evictions_total Live sessions evicted to make room in a full store.\n"
                        "# TYPE kiln_session_evictions_total counter\nkiln_session_evictions_total " +
                        std::to_string(sessions_->evictions()) + "\n";
            res.send(text, "text/plain; version=0.0.4; charset=utf-8");
            return;
        }
        if (get && !health_.empty() && req.path() == health_) {
            res.header("Cache-Control", "no-store");
            res.json("{\"status\":\"ok\",\"uptime_seconds\":" + std::to_string(stats_.uptime_seconds()) + "}");
            return;
        }
        app_.handle(req, res);
    }
private:
    const App& app_;
    std::string metrics_, health_;
    const SharedStats& stats_;
    const SessionStore* sessions_;  // null: the app brought no store and kiln made none
    uint64_t spool_limit_;
};

}  // namespace kiln::server
