#include "http/serializer.hpp"

#include <charconv>
#include <cstring>

#include "http/parser.hpp"

namespace kiln::http {
namespace {
struct Writer {
    char* p;
    void put(std::string_view s) {
        std::memcpy(p, s.data(), s.size());
        p += s.size();
    }
    void num(size_t v) { p = std::to_chars(p, p + 20, v).ptr; }
};
}  // namespace

void serialize_head(const Response& res, const HeadParams& hp, net::OutputQueue& out, net::BufferPool& pool) {
    const int status = res.status();
    const std::string_view reason = reason_phrase(status);
    const std::string_view ctype = res.content_type();
    bool user_server = false, user_date = false;
    size_t size = 9 + 3 + 1 + reason.size() + 2 + 6 + hp.date.size() + 2 + 2;
    for (const auto& [name, value] : res.headers()) {
        size += name.size() + 2 + value.size() + 2;
        user_server = user_server || iequals(name, "server");
        user_date = user_date || iequals(name, "date");
    }
    if (!user_server) size += 8 + hp.server.size() + 2;
    if (!ctype.empty()) size += 14 + ctype.size() + 2;
    size += 16 + 20 + 2 + 28 + 24;  // the largest of the framing/connection lines

    net::Buffer& b = out.tail(pool, size);
    Writer w{b.write_ptr()};
    char* const start = w.p;
    w.put("HTTP/1.1 ");
    w.num(static_cast<size_t>(status));
    w.put(" ");
    w.put(reason);
    w.put("\r\n");
    if (!user_server) {
        w.put("Server: ");
        w.put(hp.server);
        w.put("\r\n");
    }
    if (!user_date) {
        w.put("Date: ");
        w.put(hp.date);
        w.put("\r\n");
    }
    if (!ctype.empty()) {
        w.put("Content-Type: ");
        w.put(ctype);
        w.put("\r\n");
    }
    switch (hp.framing) {
        case Framing::Length:
            w.put("Content-Length: ");
            w.num(hp.content_length);
            w.put("\r\n");
            break;
        case Framing::Chunked: w.put("Transfer-Encoding: chunked\r\n"); break;
        case Framing::UntilClose:
        case Framing::NoBody: break;
    }
    if (hp.upgrade) w.put("Connection: Upgrade\r\n");
    else if (!hp.keep_alive) w.put("Connection: close\r\n");
    else if (hp.http10) w.put("Connection: keep-alive\r\n");
    for (const auto& [name, value] : res.headers()) {
        w.put(name);
        w.put(": ");
        w.put(value);
        w.put("\r\n");
    }
    w.put("\r\n");
    size_t n = static_cast<size_t>(w.p - start);
    b.commit(n);
    out.note_appended(n);
}

}  // namespace kiln::http
