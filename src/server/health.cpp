#include "server/health.hpp"

#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <kiln/json_writer.hpp>

#include "util/log.hpp"

namespace kiln::server {
namespace {

// A check's verdict: "" when fine; what it threw counts as its reason.
Task<std::string> verdict(const App::HealthCheck& check) {
    try {
        co_return co_await check();
    } catch (const Cancelled&) {
        throw;
    } catch (const std::exception& e) {
        co_return e.what()[0] ? std::string(e.what()) : std::string("failed");
    } catch (...) {
        co_return std::string("failed");
    }
}

Task<std::string> session_store_verdict(AsyncSessionStore& store) {
    try {
        co_return co_await store.check();
    } catch (const Cancelled&) {
        throw;
    } catch (const std::exception& e) {
        co_return std::string(e.what());
    }
}

// Why each check fails, into the error log when it changes (not on every probe: any
// client may probe). A check that passes again is forgotten.
void log_changes(const std::vector<std::pair<std::string, std::string>>& failing) {
    static std::mutex mutex;
    static std::map<std::string, std::string> said;
    std::lock_guard lock(mutex);
    std::map<std::string, std::string> now(failing.begin(), failing.end());
    for (const auto& [name, why] : now) {
        auto was = said.find(name);
        if (was == said.end() || was->second != why)
            util::log(util::LogLevel::Warn, "health: %s failing: %s", name.c_str(), why.c_str());
    }
    for (const auto& [name, why] : said)
        if (!now.count(name)) util::log(util::LogLevel::Info, "health: %s passes again", name.c_str());
    said = std::move(now);
}

}  // namespace

Task<> check_health(const App& app, Response& res, bool draining, uint64_t uptime_seconds) {
    res.header("Cache-Control", "no-store");
    if (draining) {
        res.status(503);
        res.send("{\"status\":\"draining\"}", "application/json");
        co_return;
    }
    std::vector<std::pair<std::string, std::string>> failing;
    if (AsyncSessionStore* store = app.remote_session_store()) {
        std::string why = co_await session_store_verdict(*store);
        if (!why.empty()) failing.emplace_back("sessions", std::move(why));
    }
    for (const auto& [name, check] : app.health_checks()) {
        std::string why = co_await verdict(check);
        if (!why.empty()) failing.emplace_back(name, std::move(why));
    }
    log_changes(failing);
    std::string body;
    JsonWriter w(body);
    w.begin_object();
    if (failing.empty()) {
        w.key("status").value("ok").key("uptime_seconds").value(uptime_seconds);
    } else {
        // Which checks fail, not why: a check's exception (libpq's, say) names hosts,
        // ports and users, and the path answers whoever asks (log_changes says why).
        w.key("status").value("unavailable").key("failing").begin_object();
        for (const auto& [name, why] : failing) w.key(name).value("failing");
        w.end_object();
        res.status(503);
    }
    w.end_object();
    res.send(body, "application/json");
}

}  // namespace kiln::server
