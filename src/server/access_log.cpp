#include "server/access_log.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
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

// One access line's fields, as they are (append_line escapes them).
struct Line {
    bool parsed = false;  // false: the request could not be parsed
    bool truncated = false;
    std::string_view remote, method, target, referer, agent;
    const char* version = "HTTP/1.1";
    int status = 0;
    uint64_t bytes = 0, elapsed_us = 0;
};

constexpr size_t kClientFields = 4;  // method, target, referer, user agent: the client's, maybe long

constexpr std::string_view kCutMark = "...";
constexpr std::string_view kTruncatedMember = ",\"truncated\":true";

void append_field(std::string& out, AccessLogFormat format, std::string_view s) {
    if (format == AccessLogFormat::Json)
        append_json_string(out, s);
    else
        append_clf(out, s);
}

void append_line(std::string& out, AccessLogFormat format, const std::string& date, const Line& l) {
    if (format == AccessLogFormat::Json) {
        out += "{\"time\":\"";
        out += date;
        out += "\",\"remote\":";
        append_json_string(out, l.remote);
        out += ",\"method\":";
        append_json_string(out, l.method);
        out += ",\"target\":";
        append_json_string(out, l.target);
        out += ",\"protocol\":\"";
        out += l.version;
        out += "\",\"status\":";
        append_num(out, static_cast<uint64_t>(l.status));
        out += ",\"bytes\":";
        append_num(out, l.bytes);
        out += ",\"referer\":";
        append_json_string(out, l.referer);
        out += ",\"user_agent\":";
        append_json_string(out, l.agent);
        out += ",\"duration_us\":";
        append_num(out, l.elapsed_us);
        if (l.truncated) out += kTruncatedMember;
        out += "}\n";
        return;
    }
    out += l.remote;
    out += " - - ";
    out += date;
    out += " \"";
    if (l.parsed) {
        append_clf(out, l.method);
        out += ' ';
        append_clf(out, l.target);
        out += ' ';
        out += l.version;
    } else {
        out += '-';
    }
    out += "\" ";
    append_num(out, static_cast<uint64_t>(l.status));
    out += ' ';
    append_num(out, l.bytes);
    out += " \"";
    append_clf(out, l.referer);
    out += "\" \"";
    append_clf(out, l.agent);
    out += "\" ";
    // Elapsed seconds with microsecond precision, like nginx's $request_time.
    append_num(out, l.elapsed_us / 1'000'000);
    out += '.';
    char us[8];
    std::snprintf(us, sizeof us, "%06llu", static_cast<unsigned long long>(l.elapsed_us % 1'000'000));
    out += us;
    out += '\n';
}

// A long start of `s` (cut before a character's continuation bytes, at most three)
// followed by "...", whose escaped form takes at most `budget` bytes: the longest
// that fits, found by halving (escaping is close to monotonic; "..." alone if none).
std::string cut_field(std::string_view s, AccessLogFormat format, size_t budget) {
    std::string value, escaped;
    auto start_at = [&](size_t n) {  // n moved back to a character's first byte
        for (int k = 0; k < 3 && n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80; ++k) --n;
        return n;
    };
    auto fits = [&](size_t n) {
        value.assign(s.substr(0, n));
        value += kCutMark;
        escaped.clear();
        append_field(escaped, format, value);
        return escaped.size() <= budget;
    };
    size_t lo = 0, hi = s.size();  // the answer is in [lo, hi): lo fits or is 0
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (fits(start_at(mid))) lo = mid;
        else hi = mid;
    }
    size_t n = start_at(lo);
    if (!fits(n)) n = 0;
    value.assign(s.substr(0, n));
    value += kCutMark;
    return value;
}

// Cuts the client's fields of a line that takes `size` bytes so that it takes at most
// `limit`. Each field is given its whole escaped size or an equal share of what is
// left, the shortest first, so one long field never cuts a short one. A cut field ends
// in "..." (its text goes to `cut`), and a JSON line says "truncated":true.
void fit_line(Line& l, AccessLogFormat format, size_t size, size_t limit, std::string (&cut)[kClientFields]) {
    std::string_view* fields[kClientFields] = {&l.method, &l.target, &l.referer, &l.agent};
    size_t sizes[kClientFields], order[kClientFields], fields_size = 0;
    std::string escaped;
    for (size_t i = 0; i < kClientFields; ++i) {
        escaped.clear();
        append_field(escaped, format, *fields[i]);
        sizes[i] = escaped.size();
        fields_size += sizes[i];
        order[i] = i;
    }
    size_t fixed = size - fields_size + (format == AccessLogFormat::Json ? kTruncatedMember.size() : 0);
    if (fixed + kClientFields * 8 > limit) return;  // cannot happen: the rest is short
    std::sort(order, order + kClientFields, [&](size_t a, size_t b) { return sizes[a] < sizes[b]; });
    size_t left = limit - fixed;
    for (size_t k = 0; k < kClientFields; ++k) {
        size_t i = order[k];
        size_t budget = std::min(sizes[i], left / (kClientFields - k));
        left -= budget;
        if (budget == sizes[i]) continue;
        cut[i] = cut_field(*fields[i], format, budget);
        *fields[i] = cut[i];
        l.truncated = true;
    }
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
    Line line;
    line.parsed = r.request != nullptr;
    line.remote = std::string_view(addr, r.peer.format(addr, sizeof addr));
    if (r.request) {
        line.method = r.request->method_name();
        line.target = r.request->target();
        line.referer = r.request->header("referer").value_or("");
        line.agent = r.request->header("user-agent").value_or("");
        line.version = r.request->version_major() == 2  ? "HTTP/2.0"
                       : r.request->version_minor() == 0 ? "HTTP/1.0"
                                                         : "HTTP/1.1";
    }
    line.status = r.status;
    line.bytes = r.body_bytes;
    line.elapsed_us = r.elapsed_us;
    size_t start = buf_.size();
    append_line(buf_, format_, date_, line);
    // On a pipe, a write of more than PIPE_BUF bytes may be split and interleaved with
    // another process's lines: such a line is written again with its longest fields cut.
    if (buf_.size() - start > PIPE_BUF && file_.is_pipe()) {
        std::string cut[kClientFields];
        fit_line(line, format_, buf_.size() - start, PIPE_BUF, cut);
        buf_.resize(start);
        append_line(buf_, format_, date_, line);
    }
    if (buf_.size() >= kFlushAt) flush();
}

}  // namespace kiln::server
