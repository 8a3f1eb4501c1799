// publish(): a topic's subscribers are kept per loop thread (WebSockets belong to
// their loop), so delivering on a loop takes no lock. A message reaches this loop's
// subscribers at once, the process's other loops through their mailboxes, and the
// node's other worker processes through the process bus (see ws_bus.hpp).
#include <algorithm>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "app/ws_bus.hpp"
#include "app/ws_internal.hpp"
#include "http/ws_session.hpp"
#include <kiln/task.hpp>

#include "net/async.hpp"
#include "net/deadline_heap.hpp"
#include "net/loop.hpp"
#include "net/mailbox.hpp"
#include "net/pending.hpp"
#include "net/process_bus.hpp"
#include "util/log.hpp"

namespace kiln {
namespace detail {
namespace {

struct LoopTopics {
    net::Loop* loop;
    struct Sink {
        void* subscriber;
        WsTopics::Deliver fn;
    };
    struct Hash {  // lookups by string_view, without building a string
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    struct Topic {
        std::vector<Sink> sinks;                 // walked by a delivery
        std::unordered_map<void*, size_t> at;    // a subscriber's place in sinks: leaving is O(1)
    };
    std::unordered_map<std::string, Topic, Hash, std::equal_to<>> subscribers;
    int delivering = 0;              // inside deliver(): leaving only blanks an entry
    std::vector<std::string> blanked;  // topics with blanked entries, compacted after
};
thread_local LoopTopics* t_topics = nullptr;

struct Published {
    std::string topic;
    std::string data;
    bool binary;
};

// The loops of this process that have (had) subscribers, and the node's bus.
struct Registry {
    std::mutex mu;
    std::vector<std::pair<net::Loop*, std::shared_ptr<net::Mailbox>>> loops;
    std::vector<std::pair<net::Loop*, std::shared_ptr<net::Mailbox>>> serving;  // every serving loop
    std::unique_ptr<net::ProcessBus> bus;  // opened at the first subscriber or publish
    bool bus_placed = false;               // where it binds is known (a worker of a supervisor)
    bool bus_tried = false;
    std::string bus_dir;
    unsigned bus_index = 0, bus_slots = 0;
    app::TopicBridge bridge;  // set before serving, read-only after
};
void from_bus(std::string_view d);

Registry& registry() {
    static auto* r = new Registry();  // never destroyed: loops may outlive static destruction
    return *r;
}

// The bus, opened on first need (a process that never publishes nor subscribes has
// no socket and no thread for it). REQUIRES: r.mu held.
net::ProcessBus* bus_locked(Registry& r) {
    if (r.bus || !r.bus_placed || r.bus_tried) return r.bus.get();
    r.bus_tried = true;
    std::string err;
    r.bus = net::ProcessBus::open(r.bus_dir, r.bus_index, r.bus_slots, &err);
    if (r.bus) r.bus->start(&from_bus);
    else util::log(util::LogLevel::Error, "%s: publish() will not reach the other worker processes", err.c_str());
    return r.bus.get();
}

void forget_loop(void* p) {
    auto* t = static_cast<LoopTopics*>(p);
    {
        Registry& r = registry();
        std::lock_guard<std::mutex> lock(r.mu);
        std::erase_if(r.loops, [t](const auto& e) { return e.first == t->loop; });
    }
    if (t_topics == t) t_topics = nullptr;
    delete t;
}

LoopTopics& loop_topics() {
    if (t_topics) return *t_topics;
    net::Loop* loop = net::Loop::current();
    if (!loop) throw std::logic_error("WebSocket::subscribe outside an event loop thread");
    t_topics = new LoopTopics{loop, {}, 0, {}};
    {
        Registry& r = registry();
        std::lock_guard<std::mutex> lock(r.mu);
        r.loops.emplace_back(loop, loop->mailbox());
        if (!r.bridge.send) bus_locked(r);  // to hear the other workers' messages
    }
    loop->at_exit(&forget_loop, t_topics);
    if (registry().bridge.loop_joined) registry().bridge.loop_joined(*loop);
    return *t_topics;
}

// To every loop of this process but `except` (posted: run on each loop's thread). The
// message is copied once, and only if another loop has subscribers.
void post_to_loops(std::string_view topic, std::string_view data, bool binary, net::Loop* except) {
    Registry& r = registry();
    std::shared_ptr<const Published> msg;
    std::lock_guard<std::mutex> lock(r.mu);
    for (auto& [loop, mailbox] : r.loops) {
        if (loop == except) continue;
        if (!msg) msg = std::make_shared<const Published>(Published{std::string(topic), std::string(data), binary});
        mailbox->post([msg] { WsTopics::deliver(msg->topic, msg->data, msg->binary); });
    }
}

// A datagram: [binary flag][topic length, 2 bytes][topic][data].
std::string encode(std::string_view topic, std::string_view data, bool binary) {
    std::string d;
    d.reserve(3 + topic.size() + data.size());
    d.push_back(binary ? 1 : 0);
    d.push_back(static_cast<char>(topic.size() >> 8));
    d.push_back(static_cast<char>(topic.size() & 0xFF));
    d.append(topic).append(data);
    return d;
}

// An encoded message's parts; false if it is not one.
bool decode(std::string_view d, std::string_view* topic, std::string_view* data, bool* binary) {
    if (d.size() < 3) return false;
    size_t tlen = static_cast<size_t>(static_cast<uint8_t>(d[1])) << 8 | static_cast<uint8_t>(d[2]);
    if (d.size() < 3 + tlen) return false;
    *topic = d.substr(3, tlen);
    *data = d.substr(3 + tlen);
    *binary = d[0] != 0;
    return true;
}

void from_bus(std::string_view d) {
    std::string_view topic, data;
    bool binary;
    if (!decode(d, &topic, &data, &binary)) return;
    post_to_loops(topic, data, binary, nullptr);
}

}  // namespace

void WsTopics::join(void* subscriber, Deliver fn, std::string_view topic) {
    LoopTopics::Topic& t = loop_topics().subscribers[std::string(topic)];
    if (!t.at.emplace(subscriber, t.sinks.size()).second) return;  // (once per topic)
    t.sinks.push_back({subscriber, fn});
}

void WsTopics::leave(void* subscriber, std::string_view topic) {
    LoopTopics* t = t_topics;
    if (!t) return;  // the loop is going: its table went first
    auto it = t->subscribers.find(topic);
    if (it == t->subscribers.end()) return;
    LoopTopics::Topic& v = it->second;
    auto at = v.at.find(subscriber);
    if (at == v.at.end()) return;
    size_t i = at->second;
    v.at.erase(at);
    if (t->delivering) {  // a delivery walks this list: blank the entry, compact later
        v.sinks[i].subscriber = nullptr;
        t->blanked.emplace_back(topic);
        return;
    }
    if (i + 1 != v.sinks.size()) {
        v.sinks[i] = v.sinks.back();
        if (v.sinks[i].subscriber) v.at[v.sinks[i].subscriber] = i;
    }
    v.sinks.pop_back();
    if (v.sinks.empty()) t->subscribers.erase(it);
}

void WsTopics::leave_all(WebSocket& ws) {
    for (const std::string& topic : ws.topics_) leave(&ws, topic);
    ws.topics_.clear();
}

void WsTopics::deliver(std::string_view topic, std::string_view data, bool binary) {
    LoopTopics* t = t_topics;
    if (!t) return;
    auto it = t->subscribers.find(topic);
    if (it == t->subscribers.end()) return;
    ++t->delivering;
    http::WsOneMessage one(data);  // compressed once per setting, not once per subscriber
    auto& v = it->second.sinks;
    for (size_t i = 0, n = v.size(); i < n; ++i)  // subscribers joining meanwhile wait for the next
        if (LoopTopics::Sink s = v[i]; s.subscriber) s.fn(s.subscriber, data, binary);
    if (--t->delivering == 0 && !t->blanked.empty()) {
        std::sort(t->blanked.begin(), t->blanked.end());
        t->blanked.erase(std::unique(t->blanked.begin(), t->blanked.end()), t->blanked.end());
        for (const std::string& name : t->blanked) {  // once per topic, however many left it
            auto b = t->subscribers.find(name);
            if (b == t->subscribers.end()) continue;
            LoopTopics::Topic& topic_of = b->second;
            std::erase_if(topic_of.sinks, [](const auto& sink) { return sink.subscriber == nullptr; });
            for (size_t i = 0; i < topic_of.sinks.size(); ++i) topic_of.at[topic_of.sinks[i].subscriber] = i;
            if (topic_of.sinks.empty()) t->subscribers.erase(b);
        }
        t->blanked.clear();
    }
}

}  // namespace detail

void WebSocket::subscribe(std::string_view topic) {
    if (std::find(topics_.begin(), topics_.end(), topic) != topics_.end()) return;
    detail::WsTopics::join(this, &WebSocket::on_published, topic);
    topics_.emplace_back(topic);
}

void WebSocket::unsubscribe(std::string_view topic) {
    auto mine = std::find(topics_.begin(), topics_.end(), topic);
    if (mine == topics_.end()) return;
    topics_.erase(mine);
    detail::WsTopics::leave(this, topic);
}

void WebSocket::on_published(void* self, std::string_view data, bool binary) {
    static_cast<WebSocket*>(self)->send_message(binary, data);
}

// Subscription

namespace detail {

// One next() that suspended. A Pending: the coroutine resumes from Loop::defer (never
// inside the publish() or the deadline that woke it), and either side may let go
// first. The subscription holds one reference while the message or the timeout may
// still come (waiting_), the awaiting Next the other.
class TopicPending final : public net::Pending {
public:
    explicit TopicPending(net::Loop& l) : net::Pending(l) {}

    // The subscription takes its reference: a message or the timeout may come.
    void attach(Subscription& s, std::chrono::milliseconds timeout) {
        hold();
        sub_ = &s;
        s.waiting_ = this;
        if (timeout.count() <= 0) return;
        deadline_.owner = this;
        deadline_.fire = [](net::Deadline* d) { static_cast<TopicPending*>(d->owner)->wake(true); };
        loop.deadlines().arm(deadline_, loop.now_ms() + static_cast<uint64_t>(timeout.count()));
    }

    // The source's side: a message came, or the timeout passed (timed_out).
    void wake(bool timeout) {
        timed_out = timeout;
        Subscription* s = std::exchange(sub_, nullptr);
        loop.deadlines().disarm(deadline_);
        s->waiting_ = nullptr;
        finish();  // a cancelled wait is left to its scope's own resume
        release();
    }
    // The awaiting side ends first (cancelled, or its frame destroyed): no message or
    // timeout will finish it any more.
    void drop_source() {
        if (!sub_) return;
        loop.deadlines().disarm(deadline_);
        std::exchange(sub_, nullptr)->waiting_ = nullptr;
        release();
    }
    bool timed_out = false;

private:
    ~TopicPending() override { loop.deadlines().disarm(deadline_); }
    Subscription* sub_ = nullptr;  // while this is sub_->waiting_
    net::Deadline deadline_;
};

}  // namespace detail

Subscription::Subscription(std::string topic) : topic_(std::move(topic)) {
    detail::WsTopics::join(this, &Subscription::on_message, topic_);
}

Subscription::~Subscription() {
    if (waiting_) waiting_->drop_source();  // (its Next, in the same frame, is gone first)
    detail::WsTopics::leave(this, topic_);
}

void Subscription::on_message(void* self, std::string_view data, bool) {
    auto* sub = static_cast<Subscription*>(self);
    while (!sub->queue_.empty() &&
           (sub->queue_.size() >= sub->max_queued || sub->queued_bytes_ + data.size() > sub->max_queued_bytes)) {
        sub->queued_bytes_ -= sub->queue_.front().size();
        sub->queue_.pop_front();
        ++sub->dropped_;
    }
    sub->queue_.emplace_back(data);
    sub->queued_bytes_ += data.size();
    if (sub->waiting_) sub->waiting_->wake(false);
}

Subscription::Next Subscription::next() { return Next(*this, std::chrono::milliseconds(0)); }
Subscription::Next Subscription::next(std::chrono::milliseconds timeout) {
    return Next(*this, std::max(timeout, std::chrono::milliseconds(1)));
}

Subscription::Next::Next(Subscription& sub, std::chrono::milliseconds timeout) : sub_(&sub), timeout_(timeout) {}
Subscription::Next::Next(Next&& o) noexcept
    : sub_(o.sub_), timeout_(o.timeout_), pending_(std::exchange(o.pending_, nullptr)) {}
Subscription::Next::~Next() {
    if (!pending_) return;  // (a frame destroyed while suspended)
    pending_->drop_source();
    pending_->abandon();
}

bool Subscription::Next::await_ready() const noexcept { return !sub_->queue_.empty(); }

bool Subscription::Next::await_suspend(std::coroutine_handle<> h) {
    if (sub_->waiting_) throw std::logic_error("kiln::Subscription: awaited by two coroutines at once");
    net::Loop* loop = net::Loop::current();
    if (!loop) throw std::logic_error("kiln: a coroutine awaited a loop operation outside an event loop thread");
    pending_ = new detail::TopicPending(*loop);
    if (!pending_->suspend(h)) return false;  // the request is cancelled already: await_resume throws
    pending_->attach(*sub_, timeout_);
    return true;
}

std::optional<std::string> Subscription::Next::await_resume() {
    if (detail::TopicPending* p = std::exchange(pending_, nullptr)) {
        p->drop_source();  // cancelled before a message or the timeout came
        const bool timed_out = p->timed_out;
        try {
            p->settle();  // throws Cancelled
        } catch (...) {
            p->release();
            throw;
        }
        p->release();
        if (timed_out && sub_->queue_.empty()) return std::nullopt;
    }
    if (sub_->queue_.empty()) return std::nullopt;  // (only after a timeout)
    std::string m = std::move(sub_->queue_.front());
    sub_->queue_.pop_front();
    sub_->queued_bytes_ -= m.size();
    return m;
}

void publish(std::string_view topic, std::string_view message, bool binary) {
    if (topic.size() > 0xFFFF) throw std::invalid_argument("publish: a topic of more than 65,535 bytes");
    detail::Registry& reg = detail::registry();
    if (reg.bridge.send) {  // every node's subscribers, this one's included, hear it from the bridge
        reg.bridge.send(detail::encode(topic, message, binary));
        return;
    }
    net::Loop* here = net::Loop::current();
    detail::post_to_loops(topic, message, binary, here);
    if (here) detail::WsTopics::deliver(topic, message, binary);
    net::ProcessBus* bus;
    {
        std::lock_guard<std::mutex> lock(reg.mu);
        bus = detail::bus_locked(reg);
    }
    if (bus && !bus->send_others(detail::encode(topic, message, binary)))
        util::log(util::LogLevel::Warn, "publish: a %zu-byte message is too large for the other worker processes",
                  message.size());
}

namespace app {

void place_ws_bus(std::string dir, unsigned index, unsigned slots) {
    detail::Registry& r = detail::registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.bus_placed = true;
    r.bus_dir = std::move(dir);
    r.bus_index = index;
    r.bus_slots = slots;
}

void close_ws_bus() {
    detail::Registry& r = detail::registry();
    std::unique_ptr<net::ProcessBus> bus;
    {
        std::lock_guard<std::mutex> lock(r.mu);
        bus = std::move(r.bus);
    }
}  // its thread joined here, outside the lock (it posts under it)

void set_topic_bridge(TopicBridge bridge) { detail::registry().bridge = std::move(bridge); }

void deliver_encoded(std::string_view encoded) {
    std::string_view topic, data;
    bool binary;
    if (detail::decode(encoded, &topic, &data, &binary)) detail::WsTopics::deliver(topic, data, binary);
}

bool post_to_a_loop(std::function<void()> fn) {
    detail::Registry& r = detail::registry();
    std::lock_guard<std::mutex> lock(r.mu);
    auto& some = r.loops.empty() ? r.serving : r.loops;
    if (some.empty()) return false;
    some.front().second->post(std::move(fn));
    return true;
}

void loop_serves(net::Loop& loop) {
    detail::Registry& r = detail::registry();
    {
        std::lock_guard<std::mutex> lock(r.mu);
        r.serving.emplace_back(&loop, loop.mailbox());
    }
    loop.at_exit([](void* l) {
        detail::Registry& reg = detail::registry();
        std::lock_guard<std::mutex> lock(reg.mu);
        std::erase_if(reg.serving, [l](const auto& e) { return e.first == l; });
    }, &loop);
}

}  // namespace app
}  // namespace kiln
