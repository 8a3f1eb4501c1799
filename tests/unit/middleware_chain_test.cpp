// The middleware chain: next() runs the rest of it once. A middleware that answers
// without calling next() stops the chain, and a second next() from one around it
// (a retry, a fallback branch, a slip) must not run what it stopped: before, the
// middleware after it and the handler ran, and a 401 became the secret page.
#include <gtest/gtest.h>

#include <string>

#include <kiln/kiln.hpp>
#include <kiln/sleep.hpp>
#include <kiln/testing.hpp>

using kiln::testing::Client;

namespace {

void secret_route(kiln::App& app, int* handled) {
    app.get("/secret", [handled](kiln::Request&, kiln::Response& res) {
        ++*handled;
        res.text("secret");
    });
}

TEST(MiddlewareChain, ASecondNextDoesNotRunWhatALaterMiddlewareStopped) {
    kiln::App app;
    int later = 0, handled = 0;
    app.use([](kiln::Request&, kiln::Response&, kiln::Next& next) {
        next();
        next();  // again
    });
    app.use([](kiln::Request&, kiln::Response& res, kiln::Next&) { res.status(401).text("no"); });
    app.use([&later](kiln::Request&, kiln::Response&, kiln::Next& next) {
        ++later;
        next();
    });
    secret_route(app, &handled);
    Client client(app);
    kiln::testing::Result r = client.get("/secret");
    EXPECT_EQ(r.status, 401);
    EXPECT_EQ(r.body, "no");
    EXPECT_EQ(later, 0);
    EXPECT_EQ(handled, 0);
}

TEST(MiddlewareChain, TheRestRunsOnceHoweverOftenNextIsCalled) {
    kiln::App app;
    int later = 0, handled = 0;
    app.use([](kiln::Request&, kiln::Response&, kiln::Next& next) {
        next();
        next();
    });
    app.use([&later](kiln::Request&, kiln::Response&, kiln::Next& next) {
        ++later;
        next();
    });
    secret_route(app, &handled);
    Client client(app);
    EXPECT_EQ(client.get("/secret").status, 200);
    EXPECT_EQ(later, 1);
    EXPECT_EQ(handled, 1);
}

TEST(MiddlewareChain, InACoroutineChainToo) {
    kiln::App app;
    int later = 0, handled = 0;
    app.use([](kiln::Request&, kiln::Response&, kiln::Next& next) -> kiln::Task<> {
        co_await next;
        co_await next;  // again
    });
    app.use([](kiln::Request&, kiln::Response& res, kiln::Next&) -> kiln::Task<> {
        co_await kiln::sleep(std::chrono::milliseconds(1));
        res.status(401).text("no");
    });
    app.use([&later](kiln::Request&, kiln::Response&, kiln::Next& next) -> kiln::Task<> {
        ++later;
        co_await next;
    });
    app.get("/secret", [&handled](kiln::Request&, kiln::Response& res) -> kiln::Task<> {
        ++handled;
        res.text("secret");
        co_return;
    });
    Client client(app);
    kiln::testing::Result r = client.get("/secret");
    EXPECT_EQ(r.status, 401);
    EXPECT_EQ(later, 0);
    EXPECT_EQ(handled, 0);
}

TEST(MiddlewareChain, ASecondNextWhileTheCheckAfterItStillWaits) {
    // A plain middleware's next() returns at the first wait of what follows: here an
    // authorization check that looks something up before it answers. Calling next()
    // again then must not start the middleware after the check, nor the handler.
    kiln::App app;
    int later = 0, handled = 0;
    app.use([](kiln::Request&, kiln::Response&, kiln::Next& next) {
        next();
        next();  // again, while the check waits
    });
    app.use([](kiln::Request&, kiln::Response& res, kiln::Next&) -> kiln::Task<> {
        co_await kiln::sleep(std::chrono::milliseconds(5));  // the lookup
        res.status(401).text("no");
    });
    app.use([&later](kiln::Request&, kiln::Response&, kiln::Next& next) {
        ++later;
        next();
    });
    secret_route(app, &handled);
    Client client(app);
    kiln::testing::Result r = client.get("/secret");
    EXPECT_EQ(r.status, 401);
    EXPECT_EQ(r.body, "no");
    EXPECT_EQ(later, 0);
    EXPECT_EQ(handled, 0);
}

TEST(MiddlewareChain, APlainMiddlewaresSecondNextInACoroutineChain) {
    kiln::App app;
    int handled = 0;
    app.use([](kiln::Request&, kiln::Response&, kiln::Next& next) {
        next();
        next();
    });
    app.use([](kiln::Request&, kiln::Response& res, kiln::Next&) { res.status(403).text("no"); });
    app.get("/secret", [&handled](kiln::Request&, kiln::Response& res) -> kiln::Task<> {
        ++handled;
        res.text("secret");
        co_return;
    });
    Client client(app);
    EXPECT_EQ(client.get("/secret").status, 403);
    EXPECT_EQ(handled, 0);
}

// A middleware's value stays where it is while the handler sets others: std::any
// keeps a small value inline, and the values' vector moved it as it grew, leaving
// the handler's pointer to freed memory (ASan saw it; make asan runs this).
struct UserId {
    int id;
};
template <int N>
struct Other {
    int n = N;
};

TEST(Locals, APointerStaysValidWhileOtherTypesAreSet) {
    kiln::App app;
    app.use([](kiln::Request& req, kiln::Response&, kiln::Next& next) {
        req.set_local(UserId{7});
        next();
    });
    app.get("/me", [](kiln::Request& req, kiln::Response& res) {
        UserId* me = req.local<UserId>();
        req.set_local(Other<1>{});
        req.set_local(Other<2>{});
        req.set_local(Other<3>{});
        req.set_local(Other<4>{});
        req.set_local(Other<5>{});
        res.text(std::to_string(me->id) + " " + std::to_string(req.local<Other<5>>()->n));
    });
    Client client(app);
    EXPECT_EQ(client.get("/me").body, "7 5");
}

}  // namespace
