#include "server/topics_redis.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include <kiln/redis.hpp>
#include <kiln/sleep.hpp>

#include "app/detached.hpp"
#include "app/ws_bus.hpp"
#include "net/async.hpp"
#include "net/loop.hpp"
#include "util/clock.hpp"
#include "util/log.hpp"

namespace kiln::server {
namespace {

struct Shared {
    redis::PerLoop clients;
    std::string channel;
};
// Made once per process and never freed: the per-loop clients must outlive the loops.
Shared* shared = nullptr;

// One line a second at most: an outage fails every publish.
void log_failure(const char* what, const std::exception& e) {
    static std::atomic<uint64_t> last_s{0};
    uint64_t now = util::monotonic_us() / 1'000'000;
    uint64_t seen = last_s.load(std::memory_order_relaxed);
    if (seen == now || !last_s.compare_exchange_strong(seen, now)) return;
    util::log(util::LogLevel::Error, "topics through Redis: %s: %s", what, e.what());
}

app::Detached publish_here(std::string encoded) {
    try {
        co_await shared->clients.local().publish(shared->channel, std::move(encoded));
    } catch (const std::exception& e) {
        log_failure("publish", e);
    }
}

void send(std::string encoded) {
    if (net::Loop::current()) {
        net::AsyncScope::Enter none(nullptr);  // not the request's: its end must not cancel the send
        publish_here(std::move(encoded));
        return;
    }
    auto box = std::make_shared<std::string>(std::move(encoded));
    if (!app::post_to_a_loop([box] {
            net::AsyncScope::Enter none(nullptr);
            publish_here(std::move(*box));
        }))
        log_failure("publish", std::runtime_error("published off the event loops, and no loop of this process serves"));
}

// A loop's subscription, until the loop goes (its at_exit hook cancels the scope).
struct LoopSide {
    net::AsyncScope scope;
};

// `side` is held by the frame: its scope lives as long as the waits made in it.
app::Detached subscribe_here(std::shared_ptr<LoopSide> side) {
    using namespace std::chrono_literals;
    (void)side;
    for (;;) {
        bool failed = false;
        try {
            redis::Subscription sub = co_await shared->clients.local().subscribe(shared->channel);
            for (;;) {
                bool lost = false;
                try {
                    redis::Message m = co_await sub.next();
                    app::deliver_encoded(m.payload);
                } catch (const redis::Error& e) {  // the connection was lost: it subscribes again by itself
                    log_failure("subscription", e);
                    lost = true;
                }
                if (lost) co_await kiln::sleep(100ms);  // a client that keeps failing does not spin
            }
        } catch (const Cancelled&) {
            co_return;  // the loop is going
        } catch (const std::exception& e) {
            log_failure("subscribe", e);
            failed = true;
        }
        if (failed) {
            try {
                co_await kiln::sleep(500ms);
            } catch (const Cancelled&) {
                co_return;
            }
        }
    }
}

void loop_joined(net::Loop& loop) {
    auto side = std::make_shared<LoopSide>();
    // Before the client's own hook (registered at its first use): the subscription
    // ends while the client still works.
    loop.at_exit([](void* p) {
        auto* s = static_cast<std::shared_ptr<LoopSide>*>(p);
        (*s)->scope.cancel();
        delete s;
    }, new std::shared_ptr<LoopSide>(side));
    net::AsyncScope::Enter enter(&side->scope);
    subscribe_here(side);
}

}  // namespace

void share_topics_through_redis(const ServerOptions& options) {
    if (!shared) {
        redis::Options redis = redis::options_from(options);
        // Publish and subscribe span a Redis server, not one of its numbered
        // databases: apps kept apart by /0 and /1 (staging, production) would hear
        // each other.
        std::string channel = options.redis_prefix + "topics";
        if (int db = redis::parse_url(redis.url).db; db != 0) channel += ":db" + std::to_string(db);
        shared = new Shared{redis::PerLoop(std::move(redis)), std::move(channel)};
    }
    app::set_topic_bridge({&send, &loop_joined});
}

}  // namespace kiln::server
