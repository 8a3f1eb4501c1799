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
#include <string>

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

// A name as shown: 1 to 32 characters, "anonymous" otherwise.
std::string clean_name(std::string_view name) {
    if (name.empty() || name.size() > 32) return "anonymous";
    return std::string(name);
}

// What goes to the room: a JSON object the page renders as text.
std::string chat_line(std::string_view name, std::string_view text) {
    return nlohmann::json{{"name", name}, {"text", text}, {"worker", kWorker}}.dump();
}

std::string welcome(std::string_view transport) {
    return nlohmann::json{{"welcome", true}, {"worker", kWorker}, {"transport", transport}}.dump();
}

// One WebSocket's member of the room: its name, and its allowance of messages (a
// token bucket, kBurst at most, kMessagesPerSecond more each second).
struct Member {
    std::string name;
    double allowance = kBurst;
    std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();

    bool may_send() {
        auto now = std::chrono::steady_clock::now();
        double seconds = std::chrono::duration<double>(now - last).count();
        last = now;
        allowance = std::min(kBurst, allowance + seconds * kMessagesPerSecond);
        if (allowance < 1) return false;
        allowance -= 1;
        return true;
    }
};

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
            if (!me.may_send()) return ws.close(1008, "too many messages: at most 5 a second");
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
    // (Each POST is a request: limits.rate bounds a client's, per address.)
    app.post("/send", [](kiln::Request& req, kiln::Response& res) {
        // JSON only: a cross-site form cannot send it without the page's origin (CORS).
        if (!req.header("content-type").value_or("").starts_with("application/json"))
            throw kiln::HttpError(415, "send JSON");
        const nlohmann::json& body = req.json();
        std::string text = body.value("text", "");
        if (text.empty() || text.size() > kMaxText) throw kiln::HttpError(400, "text: 1 to 2000 bytes");
        kiln::publish(kTopic, chat_line(clean_name(body.value("name", "")), text));
        res.status(204);
    });

    app.files("/", std::string(CHAT_ROOT) + "/public");
    return app.run(argc, argv);
}
