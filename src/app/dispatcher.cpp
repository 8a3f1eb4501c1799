#include "app/dispatcher.hpp"

#include "app/upload_sink.hpp"
#include "http/multipart.hpp"
#include "http/request.hpp"
#include "http/response.hpp"

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
    return std::make_unique<UploadSink>(*boundary, UploadRules{app_.max_files(r), spool_limit_, app_.upload_gate(r)});
}

void Dispatcher::handle(http::RequestContext& ctx, const http::Request&, http::Response& res) {
    auto& c = static_cast<Context&>(ctx);
    c.response.bind(res);
    app_.handle(c.request, c.response);
    c.request.release();
}

void Dispatcher::deliver_form(http::RequestContext& ctx, Form&& form) {
    static_cast<Context&>(ctx).request.set_form(std::move(form));
}

}  // namespace kiln::app
