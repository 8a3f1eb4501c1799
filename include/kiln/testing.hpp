// kiln::testing::Client: an app's requests in-process, without sockets, for the
// app's own tests. It runs the real middleware, router and handlers through the
// same path the server takes (parsed request head, routing before the body, upload
// parsing, sessions), and keeps the cookies the app sets, so sessions and CSRF
// tokens work from one call to the next:
//     kiln::testing::Client client(app);
//     auto r = client.get("/users/7");
//     EXPECT_EQ(r.status, 200);
//     EXPECT_EQ(r.header("Content-Type"), "application/json");
// An app without a session store gets a private in-memory one; an app without a
// secret gets a random one. One Client per thread; the app must outlive it.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <kiln/app.hpp>

namespace kiln::testing {

using Headers = std::vector<std::pair<std::string, std::string>>;

// A response as a client receives it.
struct Result {
    int status = 0;    // 500 for a response its handler cut short (a real client sees the cut)
    Headers headers;   // in order, Content-Type included
    std::string body;  // a file response's bytes too; a stream's, joined
    // The first header of that name (case-insensitive), or nullopt.
    std::optional<std::string_view> header(std::string_view name) const;
};

class Client {
public:
    explicit Client(App& app);
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    Result get(std::string_view target, const Headers& headers = {});
    Result post(std::string_view target, std::string_view body, const Headers& headers = {});
    // Any method; a body gets a Content-Length. A request the server would refuse
    // before the app (a malformed target, a body over the route's limit) gets the
    // status the server would send.
    Result request(std::string_view method, std::string_view target, std::string_view body = {},
                   const Headers& headers = {});

    // Later requests arrive as over HTTPS (req.secure() true, Secure cookies).
    void https(bool on);

    // A cookie the app set and has not cleared, as the next request sends it.
    std::optional<std::string> cookie(std::string_view name) const;
    void clear_cookies();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::testing
