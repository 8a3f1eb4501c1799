// The HTTP/1.1 server of one event loop: owns that loop's connections and the
// state they share (Date cache, timer lists, and the request, response and
// context a handler runs with — one request is handled at a time per loop, so one
// set is enough and their capacity is reused). Everything here runs on the loop thread.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "http/http_date.hpp"
#include "http/exchange.hpp"
#include "http/forwarded.hpp"
#include "http/address_counts.hpp"
#include "http/rate_table.hpp"
#include "http/limits.hpp"
#include "http/parser.hpp"
#include "http/request.hpp"
#include "http/response.hpp"
#include "http/service.hpp"
#include "net/loop.hpp"
#include "net/peer.hpp"
#include "net/tls.hpp"

namespace kiln::http {

class Connection;
struct ActiveState;

// Told about every response the engine sends (access log, metrics). Runs on the
// loop thread, after the response is queued; must not block.
class Observer {
public:
    struct Record {
        const Request* request;    // null when the request could not be parsed
        int status;
        uint64_t body_bytes;       // body bytes sent (0 for HEAD)
        uint64_t elapsed_us;       // from the parsed head to the queued response
        const net::PeerAddress& peer;
    };
    virtual void on_response(const Record& record) = 0;
    virtual void on_open() {}   // a connection was accepted
    virtual void on_close() {}  // a connection was closed
protected:
    ~Observer() = default;
};

struct EngineConfig {
    Limits limits;
    uint32_t header_timeout_ms = 10'000;
    uint32_t body_timeout_ms = 30'000;
    uint32_t keepalive_timeout_ms = 75'000;
    uint32_t write_timeout_ms = 30'000;
    uint32_t linger_timeout_ms = 2'000;         // after a close: wait for the peer's FIN
    // Stopping: an idle keep-alive connection stays open this long, so a client
    // about to reuse it gets an answer (with Connection: close) instead of a reset.
    uint32_t drain_idle_grace_ms = 1'000;
    size_t max_pending_output = 1024 * 1024;    // stop reading requests above this (backpressure)
    size_t max_connections = 0;                 // 0: no cap (prefork: 1)
    uint64_t max_requests = 0;                  // 0: no budget (prefork recycling)
    uint32_t max_requests_per_connection = 0;   // then Connection: close (HTTP/2: a GOAWAY, later streams refused); 0: no cap
    // Open connections of the whole process (every loop's server counts into
    // `open_connections`); past the limit a new one gets 503 and is closed. 0: no cap.
    size_t max_process_connections = 0;
    std::atomic<size_t>* open_connections = nullptr;
    // Open connections from one client address, in the whole process (every loop's
    // server counts into `address_counts`); past it a new one gets 503 and is
    // closed. 0: no cap.
    size_t max_connections_per_address = 0;
    AddressCounts* address_counts = nullptr;
    // Requests per second per client address, counted by every worker of the node
    // in `rate_table`, with bursts of `rate_burst`; past it 429 with Retry-After, and
    // the connection is closed. 0 (or no table): no limit.
    double rate = 0;
    uint32_t rate_burst = 1;
    RateTable* rate_table = nullptr;
    std::string server_name = "kiln";
    // Peers whose Forwarded / X-Forwarded-For (the client's address) and
    // X-Forwarded-Proto (Request::secure) are believed; empty: nobody's.
    std::vector<net::AddressRange> trusted_proxies;
    // Which field of theirs names the client (the other is ignored).
    ForwardedField forwarded_field = ForwardedField::XForwardedFor;
    // HTTP/2: h2c by its preface on plain listeners, "h2" by ALPN on TLS ones (the TLS
    // context offers it). Off: every connection is HTTP/1.1.
    bool http2 = true;
    uint32_t h2_max_streams = 100;  // SETTINGS_MAX_CONCURRENT_STREAMS
};

class Server {
public:
    Server(net::Loop& loop, Service& service, const EngineConfig& config);
    ~Server();  // closes every connection
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Takes ownership of a connected, non-blocking socket.
    void accept(int fd, const net::PeerAddress& peer = {}, bool proxy_protocol = false,
                const net::TlsContext* tls = nullptr);
    // Optional; must outlive the server's connections.
    void set_observer(Observer* observer) { observer_ = observer; }
    // Called with false when max_connections are open (stop accepting), true when
    // one closes again.
    void set_capacity_handler(std::function<void(bool has_room)> fn) { on_capacity_ = std::move(fn); }
    // Called once when max_requests responses have been sent (the last one says
    // Connection: close); the owner then stops the process to be replaced.
    void set_budget_handler(std::function<void()> fn) { on_budget_spent_ = std::move(fn); }
    // Hybrid model: handlers run on `executor` (which must outlive this server's
    // loop thread's use of it); call before the loop runs.
    void set_executor(Executor* executor);
    // Graceful stop: idle connections close now, busy ones after their response.
    // on_drained runs once no connection is left.
    void drain(std::function<void()> on_drained);
    // Any thread: a stop is coming. Responses from now on say Connection: close,
    // even those of requests already in their handler. Then wake the loop to drain().
    void request_stop() { stop_requested_.store(true, std::memory_order_relaxed); }
    bool stop_requested() const { return stop_requested_.load(std::memory_order_relaxed); }

private:
    friend class Connection;
    friend class H2Session;
    friend struct H2Callbacks;
    void link(Connection* c);
    void unlink(Connection* c);
    void count_request();
    // A PROXY protocol connection past limits.max_connections_per_address, once its
    // header named the client: told as one refused at accept (a 503 in one small
    // write; a TLS client nothing), and logged once a minute. The caller closes it.
    void refuse_per_address(int fd, bool tls) const;
    // A connection's buffers and request state while it has work; given back with
    // both buffers empty and released. Kept for reuse (with the output queue's
    // capacity), so a request on an idle connection allocates nothing for them.
    ActiveState* take_active();
    void give_back(ActiveState* a);
    // An HTTP/2 stream's exchange, with its context; kept for reuse the same way.
    Exchange* take_exchange();
    void give_back_exchange(Exchange* ex);

    net::Loop& loop_;
    Service& service_;
    const EngineConfig& cfg_;
    net::TimerList& header_timers_;
    net::TimerList& body_timers_;
    net::TimerList& keepalive_timers_;
    net::TimerList& write_timers_;
    net::TimerList& linger_timers_;
    net::TimerList& drain_grace_timers_;
    DateCache date_;
    RequestHead head_;
    Request request_;
    Response response_;
    std::unique_ptr<RequestContext> context_;  // the service's, for request_
    Observer* observer_ = nullptr;
    Executor* executor_ = nullptr;
    std::shared_ptr<CompletionQueue> completions_;  // shared with handlers still running
    Connection* first_ = nullptr;
    std::vector<ActiveState*> spare_active_;  // at most kMaxSpareActive
    std::vector<Exchange*> spare_exchanges_;  // at most kMaxSpareActive
    size_t count_ = 0;
    bool draining_ = false;
    std::atomic<bool> stop_requested_{false};
    std::function<void()> on_drained_;
    std::function<void(bool)> on_capacity_;
    std::function<void()> on_budget_spent_;
    uint64_t requests_ = 0;
};

}  // namespace kiln::http
