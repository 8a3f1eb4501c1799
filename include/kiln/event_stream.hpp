// Server-sent events (the HTML standard's text/event-stream): a handler that waits
// (a coroutine) keeps its response open and sends events as they happen; the
// browser's EventSource reconnects by itself and says where it was (Last-Event-ID).
//
//   app.get("/events", [](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
//       kiln::EventStream events = res.event_stream();
//       events.retry(std::chrono::seconds(3));
//       if (auto seen = kiln::last_event_id(req)) { /* resume after *seen */ }
//       for (long n = 0;; ++n) {
//           events.send("tick " + std::to_string(n), "tick", std::to_string(n));
//           co_await kiln::sleep(std::chrono::seconds(15));  // and a heartbeat: events.comment()
//       }
//   });
//
// Each event leaves at the end of the loop iteration it was sent in (over HTTP/1.1
// and HTTP/2 alike); a client that leaves cancels the handler's waits (kiln::Cancelled).
// A client that reads too slowly is cut: once more than max_backlog bytes wait for
// it, send() throws kiln::Cancelled and the stream ends (memory stays bounded).
#pragma once
#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

#include <kiln/request.hpp>
#include <kiln/response.hpp>

namespace kiln {

class EventStream {
public:
    // One event: its lines as "data:" lines (LF, CRLF and CR all end a line), with
    // "event:" and "id:" when given. Throws std::invalid_argument for a line break
    // in `event` or `id` (or a NUL in `id`), kiln::Cancelled past the backlog.
    void send(std::string_view data, std::string_view event = {}, std::string_view id = {});
    // How long the browser waits before reconnecting.
    void retry(std::chrono::milliseconds delay);
    // A comment line (": text"), which clients ignore: a heartbeat.
    void comment(std::string_view text = {});
    // Bytes sent that the client has not read yet.
    size_t backlog() const;

    static constexpr size_t kDefaultMaxBacklog = 1024 * 1024;
    size_t max_backlog = kDefaultMaxBacklog;

private:
    friend class Response;
    explicit EventStream(Response& res) : res_(&res) {}
    void put(std::string_view text);
    Response* res_;
};

// The id of the last event the browser saw before it reconnected (Last-Event-ID).
std::optional<std::string_view> last_event_id(const Request& req);

}  // namespace kiln
