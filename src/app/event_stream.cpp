#include <kiln/event_stream.hpp>

#include <kiln/task.hpp>

#include <stdexcept>
#include <string>

#include "http/response.hpp"

namespace kiln {
namespace {

bool has_line_break(std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; }

}  // namespace

EventStream Response::event_stream() {
    status(200);
    header("Content-Type", "text/event-stream");
    header("Cache-Control", "no-cache");
    header("X-Accel-Buffering", "no");
    write("");  // the head, now: the browser's EventSource opens on it
    return EventStream(*this);
}

std::optional<std::string_view> last_event_id(const Request& req) { return req.header("last-event-id"); }

size_t EventStream::backlog() const {
    // Without a stream (a plain handler on the hybrid pool, the testing client) the
    // events gather in the body, sent when the handler returns: bounded the same.
    return res_->msg_->has_stream() ? res_->msg_->buffered() : res_->msg_->body().size();
}

void EventStream::put(std::string_view text) {
    if (backlog() > max_backlog) throw Cancelled();  // a reader this slow is let go
    res_->write(text);
}

void EventStream::send(std::string_view data, std::string_view event, std::string_view id) {
    if (has_line_break(event)) throw std::invalid_argument("EventStream::send: a line break in the event name");
    if (has_line_break(id) || id.find('\0') != std::string_view::npos)
        throw std::invalid_argument("EventStream::send: a line break or NUL in the id");
    std::string out;
    out.reserve(data.size() + event.size() + id.size() + 32);
    if (!event.empty()) out.append("event: ").append(event).append("\n");
    if (!id.empty()) out.append("id: ").append(id).append("\n");
    // Every line of data its own "data:" line; CRLF, CR and LF all end one.
    size_t at = 0;
    for (;;) {
        size_t end = data.find_first_of("\r\n", at);
        out.append("data: ").append(data.substr(at, end - at)).append("\n");
        if (end == std::string_view::npos) break;
        at = end + (data[end] == '\r' && end + 1 < data.size() && data[end + 1] == '\n' ? 2 : 1);
        if (at == data.size()) break;  // a final line break ends the last line, adds none
    }
    out.append("\n");
    put(out);
}

void EventStream::retry(std::chrono::milliseconds delay) {
    put("retry: " + std::to_string(delay.count()) + "\n\n");
}

void EventStream::comment(std::string_view text) {
    if (has_line_break(text)) throw std::invalid_argument("EventStream::comment: a line break in the text");
    std::string out(":");
    if (!text.empty()) out.append(" ").append(text);
    out.append("\n\n");
    put(out);
}

}  // namespace kiln
