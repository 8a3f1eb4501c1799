#include "server/access_log.hpp"

#include <charconv>
#include <cstdio>
#include <cstring>

#include "server/log_escape.hpp"

namespace kiln::server {
namespace {
constexpr size_t kFlushAt = 32 * 1024;
constexpr uint32_t kFlushEveryMs = 1000;

void append_num(std::string& out, uint64_t v) {
    char b[24];
    out.append(b, static_cast<size_t>(std::to_chars(b, b + sizeof b, v).ptr - b));
}

}  // namespace

AccessLog::AccessLog(net::Loop& loop, const LogFile& file, AccessLogFormat format)
    : loop_(loop), file_(file), format_(format) {
    buf_.reserve(kFlushAt + 4096);
    tick_.owner = this;
    tick_.fire = [](net::Timer* t) {
        auto* self = static_cast<AccessLog*>(t->owner);
        self->flush();
        self->loop_.timers(kFlushEveryMs).arm(self->tick_, self->loop_.now_ms());
    };
    loop_.timers(kFlushEveryMs).arm(tick_, loop_.now_ms());
}

AccessLog::~AccessLog() {
    tick_.disarm();
    flush();
}

void AccessLog::flush() {
    if (buf_.empty()) return;
    file_.write(buf_.data(), buf_.size());
    buf_.clear();
}

void AccessLog::refresh_date(time_t now) {
    if (now == date_second_) return;
    date_second_ = now;
    tm t;
    gmtime_r(&now, &t);
    char b[40];
    size_t n = format_ == AccessLogFormat::Json ? std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &t)
                                                       : std::strftime(b, sizeof b, "[%d/%b/%Y:%H:%M:%S +0000]", &t);
    date_.assign(b, n);
}

void AccessLog::on_response(const Record& r) {
    refresh_date(loop_.wall_seconds());
    char addr[64];
    std::string_view remote(addr, r.peer.format(addr, sizeof addr));
    std::string_view method = r.request ? r.request->method_name() : std::string_view();
    std::string_view target = r.request ? r.request->target() : std::string_view();
    std::string_view referer, agent;
    if (r.request) {
        referer = r.request->header("referer").value_or("");
        agent = r.request->header("user-agent").value_or("");
    }
    const char* version = !r.request                         ? "HTTP/1.1"
                          : r.request->version_major() == 2  ? "HTTP/2.0"
                          : r.request->version_minor() == 0 ? "HTTP/1.0"
                                                             : "HTTP/1.1";
    if (format_ == AccessLogFormat::Json) {
        buf_ += "{\"time\":\"";
        buf_ += date_;
        buf_ += "\",\"remote\":";
        append_json_string(buf_, remote);
        buf_ += ",\"method\":";
        append_json_string(buf_, method);
        buf_ += ",\"target\":";
        append_json_string(buf_, target);
        buf_ += ",\"protocol\":\"";
        buf_ += version;
        buf_ += "\",\"status\":";
        append_num(buf_, static_cast<uint64_t>(r.status));
        buf_ += ",\"bytes\":";
        append_num(buf_, r.body_bytes);
        buf_ += ",\"referer\":";
        append_json_string(buf_, referer);
        buf_ += ",\"user_agent\":";
        append_json_string(buf_, agent);
        buf_ += ",\"duration_us\":";
        append_num(buf_, r.elapsed_us);
        buf_ += "}\n";
    } else {
        buf_ += remote;
        buf_ += " - - ";
        buf_ += date_;
        buf_ += " \"";
        if (r.request) {
            append_clf(buf_, method);
            buf_ += ' ';
            append_clf(buf_, target);
            buf_ += ' ';
            buf_ += version;
        } else {
            buf_ += '-';
        }
        buf_ += "\" ";
        append_num(buf_, static_cast<uint64_t>(r.status));
        buf_ += ' ';
        append_num(buf_, r.body_bytes);
        buf_ += " \"";
        append_clf(buf_, referer);
        buf_ += "\" \"";
        append_clf(buf_, agent);
        buf_ += "\" ";
        // Elapsed seconds with microsecond precision, like nginx's $request_time.
        append_num(buf_, r.elapsed_us / 1'000'000);
        buf_ += '.';
        char us[8];
        std::snprintf(us, sizeof us, "%06llu", static_cast<unsigned long long>(r.elapsed_us % 1'000'000));
        buf_ += us;
        buf_ += '\n';
    }
    if (buf_.size() >= kFlushAt) flush();
}

}  // namespace kiln::server
