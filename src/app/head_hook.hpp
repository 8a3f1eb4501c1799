// app::HeadHook: what runs on a response once, just before its head leaves: at the
// end of a whole answer (after every error page, the handler deadline's 504 and the
// session store's 503 included) or at a stream's first write. What a middleware sets
// after next() is lost on the ways out of a chain that may wait (an error after a
// co_await, a deadline, a stream); what a hook sets is not.
#pragma once

namespace kiln {
class Request;
class Response;
}  // namespace kiln

namespace kiln::app {

class HeadHook {
public:
    virtual void before_head(Request& req, Response& res) const = 0;
    // `hook` runs before `res`'s head leaves (one per response: a later one replaces
    // it). It must outlive the request: the middleware that attaches it holds it.
    static void attach(Request& req, Response& res, const HeadHook& hook);
    // Runs the hook attached to `res`, if any, once for each head (Response::clear()
    // of kept chunks starts a new one). A hook that throws makes the response a bare
    // 500 that closes the connection: false.
    static bool run(Response& res);

protected:
    ~HeadHook() = default;
};

}  // namespace kiln::app
