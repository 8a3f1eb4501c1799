// A chat room: the page at / talks to /ws (WebSocket); a browser without WebSocket
// (or ?transport=sse) reads /events (server-sent events) and posts to /send. Every
// message reaches everyone in the room, whichever worker process serves them: both
// paths publish on the topic "room" (kiln::publish), which spans the node's loops
// and worker processes.
//
//   build/bin/chat --port 8080 --workers 2
//   build/bin/chat --topics-store redis --redis-url redis://127.0.0.1:6379   (one room across nodes)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <kiln/kiln.hpp>
#include <nlohmann/json.hpp>

namespace {

constexpr std::string_view kTopic = "room";
constexpr size_t kMaxText = 2000;
// What one WebSocket may send: every message goes to everyone, and a reader slower
// than the room is cut past its backlog (1 MiB), so a flood from one would cut off
// the others. A person types far slower; a client past it is closed (1008).
constexpr double kMessagesPerSecond = 5;
constexpr double kBurst = 10;
const std::string kWorker = std::to_string(getpid());

// Whether a (valid UTF-8) name shows as it reads: no control character (C0, DEL,
// C1), no line or paragraph separator, and none of the marks and overrides that
// reorder the text around them (a name "\u202Eevil" would show reversed).
bool shows_as_it_reads(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        auto lead = static_cast<unsigned char>(s[i]);
        size_t len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
        char32_t c = len == 1 ? lead : lead & (0x7F >> len);
        for (size_t k = 1; k < len; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
        i += len;
        if (c < 0x20 || (c >= 0x7F && c < 0xA0) || c == 0x2028 || c == 0x2029) return false;
        if (c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069))
            return false;
    }
    return true;
}

// A name as shown: 1 to 32 characters of UTF-8 that show as they read, "anonymous"
// otherwise (a name that is not UTF-8 could not go into the room's JSON at all).
std::string clean_name(std::string_view name) {
    std::optional<size_t> chars = kiln::utf8_length(name);
    if (!chars || *chars == 0 || *chars > 32 || !shows_as_it_reads(name)) return "anonymous";
    return std::string(name);
}

// What goes to the room: a JSON object the page renders as text.
std::string chat_line(std::string_view name, std::string_view text) {
    return nlohmann::json{{"name", name}, {"text", text}, {"worker", kWorker}}.dump();
}

std::string welcome(std::string_view transport) {
    return nlohmann::json{{"welcome", true}, {"worker", kWorker}, {"transport", transport}}.dump();
}

// An allowance of messages: a token bucket, kBurst at most, kMessagesPerSecond more
// each second.
struct Allowance {
    double left = kBurst;
    std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();

    bool take() {
        auto now = std::chrono::steady_clock::now();
        left = std::min(kBurst, left + std::chrono::duration<double>(now - last).count() * kMessagesPerSecond);
        last = now;
        if (left < 1) return false;
        left -= 1;
        return true;
    }
};

// One WebSocket's member of the room: its name and its allowance.
struct Member {
    std::string name;
    Allowance allowance;
};

// The POSTs to /send of one client (IPv6 by its /64) share an allowance, in each
// worker process; a flood of addresses starts them all over rather than grow.
bool client_may_send(const std::string& client) {
    static std::mutex mutex;
    static std::unordered_map<std::string, Allowance> by_client;
    std::lock_guard lock(mutex);
    if (by_client.size() >= 100000 && !by_client.count(client)) by_client.clear();
    return by_client[client].take();
}

}  // namespace

int main(int argc, char** argv) {
    kiln::App app;
    app.use(kiln::security_headers());

    app.ws("/ws", kiln::WsHandlers{
        .open = [](kiln::WebSocket& ws, kiln::Request& req) {
            ws.set_local(Member{clean_name(req.query("name").value_or(""))});
            ws.subscribe(kTopic);
            ws.send(welcome("websocket"));
        },
        .message = [](kiln::WebSocket& ws, std::string_view data, bool binary) {
            if (binary || data.empty() || data.size() > kMaxText) return;
            Member& me = *ws.local<Member>();
            if (!me.allowance.take()) return ws.close(1008, "too many messages: at most 5 a second");
            kiln::publish(kTopic, chat_line(me.name, data));
        }});

    // The fallback: events down, POSTs up.
    app.get("/events", [](kiln::Request&, kiln::Response& res) -> kiln::Task<> {
        kiln::Subscription room{std::string(kTopic)};
        kiln::EventStream events = res.event_stream();
        events.retry(std::chrono::seconds(2));
        events.send(welcome("sse"));
        for (;;) {
            if (auto msg = co_await room.next(std::chrono::seconds(15))) events.send(*msg);
            else events.comment("keep-alive");
        }
    });
    app.post("/send", [](kiln::Request& req, kiln::Response& res) {
        // JSON only: a cross-site form cannot send it without the page's origin (CORS).
        if (!req.header("content-type").value_or("").starts_with("application/json"))
            throw kiln::HttpError(415, "send JSON");
        const nlohmann::json& body = req.json();
        std::string text = body.value("text", "");
        if (text.empty() || text.size() > kMaxText) throw kiln::HttpError(400, "text: 1 to 2000 bytes");
        if (!client_may_send(req.client_block())) {
            res.status(429);
            res.header("Retry-After", "1");
            res.text("too many messages: at most 5 a second\n");
            return;
        }
        kiln::publish(kTopic, chat_line(clean_name(body.value("name", "")), text));
        res.status(204);
    });

    app.files("/", std::string(CHAT_ROOT) + "/public");
    return app.run(argc, argv);
}
