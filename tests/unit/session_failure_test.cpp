// A session store that fails to save, under an error page that uses the session
// (a CSRF token in its form, a flash): the failure is answered (the default error
// text: the page cannot use a session that was written) and keeps nothing.
// Before, the error page began the session again after it was ended: with a
// network store the worker called through a null store (a crash); with a local one
// the session stayed open on the loop's reused Request and the next client, another
// person, got it.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <kiln/app.hpp>
#include <kiln/csrf.hpp>
#include <kiln/session.hpp>
#include <kiln/task.hpp>
#include <kiln/testing.hpp>

namespace {

// Sessions in a map; save() fails while `failing` is set.
struct FlakyStore : kiln::SessionStore {
    std::map<std::string, std::string> sessions;
    bool failing = false;
    static std::string key(const kiln::SessionId& id) { return std::string(reinterpret_cast<const char*>(&id), sizeof id); }
    bool load(const kiln::SessionId& id, int64_t, std::string& data) override {
        auto it = sessions.find(key(id));
        if (it == sessions.end()) return false;
        data = it->second;
        return true;
    }
    bool save(const kiln::SessionId& id, int64_t, std::string_view data, SaveMode) override {
        if (failing) throw std::runtime_error("store down");
        sessions[key(id)] = std::string(data);
        return true;
    }
    bool rename(const kiln::SessionId& from, const kiln::SessionId& to, int64_t, std::string_view data) override {
        if (failing) throw std::runtime_error("store down");
        if (!sessions.erase(key(from))) return false;
        sessions[key(to)] = std::string(data);
        return true;
    }
    void remove(const kiln::SessionId& id) override { sessions.erase(key(id)); }
    size_t max_bytes() const override { return 4096; }
};

// The same, across the network: its calls are coroutines.
struct FlakyRemoteStore : kiln::AsyncSessionStore {
    FlakyStore local;
    kiln::Task<std::optional<std::string>> load(kiln::SessionId id, int64_t now) override {
        std::string data;
        if (!local.load(id, now, data)) co_return std::nullopt;
        co_return data;
    }
    kiln::Task<bool> save(kiln::SessionId id, int64_t now, std::string data, kiln::SessionStore::SaveMode mode) override {
        co_return local.save(id, now, data, mode);
    }
    kiln::Task<bool> rename(kiln::SessionId from, kiln::SessionId to, int64_t now, std::string data) override {
        co_return local.rename(from, to, now, data);
    }
    kiln::Task<> remove(kiln::SessionId id) override {
        local.remove(id);
        co_return;
    }
    size_t max_bytes() const override { return 4096; }
};

void routes(kiln::App& app) {
    app.error_page([](kiln::Request& req, kiln::Response& res, int status, std::string_view) {
        req.session().set("flash", "something went wrong");  // begins a session
        res.status(status).text("error; token " + kiln::csrf_token(req));
    });
    app.get("/login", [](kiln::Request& req, kiln::Response& res) {
        req.session().set("user", "alice");
        res.text("in");
    });
    app.get("/whoami", [](kiln::Request& req, kiln::Response& res) {
        kiln::Session& s = req.session();
        res.text(std::string(s.get("user").value_or("nobody")) + "," + std::string(s.get("flash").value_or("")));
    });
}

}  // namespace

TEST(SessionFailure, AFailedSaveUnderAnErrorPageThatUsesTheSessionKeepsNothing) {
    auto store = std::make_shared<FlakyStore>();
    kiln::App app;
    app.session_store(store);
    routes(app);
    kiln::testing::Client client(app);
    store->failing = true;
    auto r = client.get("/login");
    EXPECT_EQ(r.status, 500);  // (what the store threw: not an HttpError)
    EXPECT_FALSE(r.header("Set-Cookie").has_value()) << "a cookie for a session that was never stored";
    store->failing = false;
    client.clear_cookies();  // another person, whose request the same Request object carries
    EXPECT_EQ(client.get("/whoami").body, "nobody,");
}

TEST(SessionFailure, AFailedRemoteSaveUnderAnErrorPageThatUsesTheSessionKeepsNothing) {
    auto store = std::make_shared<FlakyRemoteStore>();
    kiln::App app;
    app.session_store(std::shared_ptr<kiln::AsyncSessionStore>(store));
    routes(app);
    kiln::testing::Client client(app);
    store->local.failing = true;
    auto r = client.get("/login");
    EXPECT_EQ(r.status, 503);
    EXPECT_FALSE(r.header("Set-Cookie").has_value()) << "a cookie for a session that was never stored";
    store->local.failing = false;
    client.clear_cookies();
    EXPECT_EQ(client.get("/whoami").body, "nobody,");
    EXPECT_EQ(client.get("/login").status, 200);  // the store back: sessions work again
    EXPECT_EQ(client.get("/whoami").body, "alice,");
}

// A renewal of a logged-in session (a password change: regenerate(false)) while a
// log-out in another tab removed it: the log-out stands (before, the renewal made
// the session again under its new id, its user still logged in). A log-in
// (regenerate()) that finds its old id gone still makes its own.
TEST(SessionFailure, ARenewalOfASessionALogOutRemovedMeanwhileMakesNothing) {
    auto store = std::make_shared<FlakyStore>();
    kiln::App app;
    app.session_store(store);
    routes(app);
    for (bool log_in : {false, true}) {
        app.get(log_in ? "/renew-log-in" : "/renew", [store, log_in](kiln::Request& req, kiln::Response& res) {
            kiln::Session& s = req.session();  // loaded
            store->sessions.clear();           // meanwhile, another request logs out
            s.regenerate(log_in);
            res.text("renewed");
        });
    }
    kiln::testing::Client client(app);
    EXPECT_EQ(client.get("/login").status, 200);
    EXPECT_EQ(client.get("/whoami").body, "alice,");
    EXPECT_EQ(client.get("/renew").status, 200);
    EXPECT_TRUE(store->sessions.empty());
    EXPECT_EQ(client.get("/whoami").body, "nobody,");

    EXPECT_EQ(client.get("/login").status, 200);
    EXPECT_EQ(client.get("/renew-log-in").status, 200);
    EXPECT_EQ(client.get("/whoami").body, "alice,");  // a log-in stands
}
