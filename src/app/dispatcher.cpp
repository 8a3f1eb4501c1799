#include "app/dispatcher.hpp"

#include <coroutine>
#include <exception>
#include <typeinfo>

#include "app/detached.hpp"
#include "app/head_hook.hpp"
#include "app/upload_sink.hpp"
#include "http/multipart.hpp"
#include "http/request.hpp"
#include "http/response.hpp"
#include "util/log.hpp"

namespace kiln::app {

std::unique_ptr<http::RequestContext> Dispatcher::new_context() { return std::make_unique<Context>(); }

size_t Dispatcher::prepare(http::RequestContext& ctx, const http::Request& req) {
    Request& r = static_cast<Context&>(ctx).request;
    r.bind(req);
    return app_.prepare(r);
}

std::unique_ptr<http::BodySink> Dispatcher::body_sink(http::RequestContext& ctx, const http::Request& req) {
    auto type = req.header("content-type");
    auto boundary = type ? http::multipart_boundary(*type) : std::nullopt;
    if (!boundary) return nullptr;  // other bodies are buffered; no rules to build for them
    const Request& r = static_cast<Context&>(ctx).request;
    // Routed already: the route says how many files it takes; unknown routes none.
    return std::make_unique<UploadSink>(
        *boundary, UploadRules{app_.max_files(r), spool_limit_, app_.upload_gate(r), app_.overridden_max_files(r)});
}

void Dispatcher::handle(http::RequestContext& ctx, const http::Request&, http::Response& res) {
    auto& c = static_cast<Context&>(ctx);
    c.response.bind(res);
    begin_compression(c);
    app_.handle(c.request, c.response);
    HeadHook::run(c.response);
    end_compression(c);
    c.request.release();
}

void Dispatcher::begin_compression(Context& c) const {
    if (!compression_.enabled || !app_.compresses(c.request)) return;
    c.response.compression_ = &compression_;
    c.response.compression_request_ = &c.request;
}

void Dispatcher::end_compression(Context& c) const {
    if (!c.response.compression_) return;
    http::Response& res = *c.response.msg_;
    bool whole = !res.streaming() || !res.has_stream();  // (a stream was coded as it went)
    if (whole && !res.has_file() && res.body().size() >= compression_.min_size && codable(compression_, res))
        compress_body(compression_, c.request.header("accept-encoding").value_or(""), res);
    c.response.compression_ = nullptr;
    c.response.compression_request_ = nullptr;
}


bool Dispatcher::waits(http::RequestContext& ctx) { return app_.waits(static_cast<Context&>(ctx).request); }

void Dispatcher::start(http::RequestContext& ctx, const http::Request&, http::Response& res, http::Completion done) {
    auto& c = static_cast<Context&>(ctx);
    c.response.bind(res);
    begin_compression(c);
    c.async = std::make_unique<AsyncRun>();
    AsyncRun& run = *c.async;
    run.done = done;
    run.loop = net::Loop::current();
    uint32_t ms = app_.deadline_ms(c.request);
    if (ms == 0) {
        ms = handler_timeout_ms_;
        // Not for HEAD, whose stream sends nothing (no write timeout or backlog would
        // ever end it), nor without a connection's stream (the test client).
        if (c.request.method() != Method::Head) run.until_answer = &res;
    }
    if (ms && run.loop) {
        run.deadline.owner = &run;
        run.deadline.fire = [](net::Deadline* d) {
            auto* r = static_cast<AsyncRun*>(d->owner);
            if (r->until_answer && r->until_answer->streaming() && r->until_answer->has_stream())
                return;  // answering: the stream's own limits hold
            r->timed_out = true;
            r->scope.cancel();
        };
        run.loop->deadlines().arm(run.deadline, run.loop->now_ms() + ms);
    }
    net::AsyncScope::Enter enter(&run.scope);
    // handle_async maps every exception a handler throws. One that escapes it anyway
    // is kiln's own failure: logged, and it fails this request alone, never the
    // worker (a detached coroutine's escaping exception would terminate it).
    [](Dispatcher& self, Context& waiting) -> Detached {  // no captures: the frame holds the arguments
        bool escaped = false;
        try {
            co_await self.run_waiting(waiting);
        } catch (const Cancelled&) {
            // The client left or the deadline passed (then 504) in kiln's own waiting
            // work (the health endpoint's checks): not a failure to log.
        } catch (const std::exception& e) {
            util::log(util::LogLevel::Error, "a request's coroutine ended with an exception (a kiln bug): %s: %s",
                      typeid(e).name(), e.what());
            escaped = true;
        } catch (...) {
            util::log(util::LogLevel::Error, "a request's coroutine ended with a non-exception (a kiln bug)");
            escaped = true;
        }
        if (escaped) self.app_.fail_in_chain(waiting.request, waiting.response, 500, "Internal Server Error", {});
        self.finish_async(waiting);
    }(*this, c);
}

Task<> Dispatcher::run_waiting(Context& c) { return app_.handle_async(c.request, c.response); }

void Dispatcher::finish_async(Context& c) {
    AsyncRun& run = *c.async;
    if (run.loop) run.loop->deadlines().disarm(run.deadline);
    if (run.timed_out) app_.fail_in_chain(c.request, c.response, 504, "Gateway Timeout", {});
    HeadHook::run(c.response);
    end_compression(c);
    c.request.release();
    http::Completion done = run.done;
    c.async.reset();
    done.fn(done.arg);  // may free c
}

void Dispatcher::cancel(http::RequestContext& ctx) {
    auto& c = static_cast<Context&>(ctx);
    if (c.async) c.async->scope.cancel();
}

void Dispatcher::deliver_form(http::RequestContext& ctx, Form&& form) {
    static_cast<Context&>(ctx).request.set_form(std::move(form));
}

}  // namespace kiln::app
