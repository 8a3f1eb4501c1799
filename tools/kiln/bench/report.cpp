// Result formatting (see the header).
#include "bench/report.hpp"

#include <cmath>
#include <cstdio>

namespace kiln::bench {
namespace {

const char* mode_name(ConnMode m) {
    switch (m) {
        case ConnMode::CloseEach: return "new connection per request";
        case ConnMode::KeepAlive: return "keep-alive";
        case ConnMode::RandomDrop: return "keep-alive, random drops after 40-167 requests";
    }
    return "?";
}

std::string ms(uint64_t ns) { return format_fixed(static_cast<double>(ns) / 1e6, 3); }

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

std::string json_number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", std::isfinite(v) ? v : 0.0);
    return buf;
}

std::string url_of(const BenchOptions& o) { return "http://" + o.target.authority + o.target.path; }

}  // namespace

double requests_per_second(const RunResult& r) {
    return r.elapsed_ms > 0 ? static_cast<double>(r.stats->ok) * 1000.0 / r.elapsed_ms : 0.0;
}

std::string format_count(uint64_t n) {
    std::string digits = std::to_string(n);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string format_fixed(double v, int decimals) {
    if (!std::isfinite(v) || v < 0) v = 0;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    std::string s = buf;
    size_t dot = s.find('.');
    std::string whole = s.substr(0, dot);
    std::string frac = dot == std::string::npos ? "" : s.substr(dot);
    return format_count(std::stoull(whole)) + frac;
}

std::string text_report(const BenchOptions& o, const RunResult& r) {
    const Stats& s = *r.stats;
    std::string line(60, '-');
    std::string out;
    out += "kiln bench " + url_of(o) + ": " + std::to_string(o.batches) + " batch(es), " + mode_name(o.mode) +
           ", " + std::to_string(r.threads) + " thread(s)\n";
    out += format_count(s.ok) + " request(s)\n" + line + "\n";
    out += "elapsed: " + format_fixed(r.elapsed_ms, 2) + " ms => " + format_fixed(requests_per_second(r), 2) +
           " request(s) per second\n" + line + "\n";
    out += "requests:    " + format_count(s.requests()) + " (pages " + format_count(s.pages) + ", assets " +
           format_count(s.assets) + ", uploads " + format_count(s.uploads) + ")\n";
    out += "ok:          " + format_count(s.ok) + "\n";
    out += "failed:      " + format_count(s.failed_total());
    std::string kinds;
    for (size_t i = 0; i < kFailureKinds; ++i) {
        if (s.failed[i] == 0) continue;
        if (!kinds.empty()) kinds += ", ";
        kinds += std::string(failure_name(static_cast<Failure>(i))) + " " + format_count(s.failed[i]);
    }
    out += kinds.empty() ? "\n" : " (" + kinds + ")\n";
    if (s.abandoned != 0)
        out += "abandoned:   " + format_count(s.abandoned) + " (in flight when the run ended; not counted)\n";
    out += "connections: " + format_count(s.connections) + "\n";
    out += "new cookies: " + format_count(s.new_cookies) + "\n";
    out += "received:    " + format_count(s.bytes_received) + " bytes\n";
    out += "sent:        " + format_count(s.bytes_sent) + " bytes\n";
    const Histogram& h = s.latency_ns;
    if (h.count() != 0)
        out += "latency:     p50 " + ms(h.percentile(50)) + " ms, p90 " + ms(h.percentile(90)) + " ms, p99 " +
               ms(h.percentile(99)) + " ms, max " + ms(h.max()) + " ms\n";
    return out;
}

std::string json_report(const BenchOptions& o, const RunResult& r) {
    const Stats& s = *r.stats;
    const Histogram& h = s.latency_ns;
    auto n = [](uint64_t v) { return std::to_string(v); };
    auto lat = [](uint64_t ns) { return json_number(static_cast<double>(ns) / 1e6); };
    std::string out = "{";
    out += "\"url\":" + json_string(url_of(o));
    out += ",\"batches\":" + std::to_string(o.batches);
    out += ",\"threads\":" + std::to_string(r.threads);
    out += ",\"mode\":" + std::to_string(static_cast<int>(o.mode));
    out += ",\"requests\":" + n(s.requests());
    out += ",\"ok\":" + n(s.ok);
    out += ",\"failed\":" + n(s.failed_total());
    out += ",\"failures\":{";
    for (size_t i = 0; i < kFailureKinds; ++i) {
        if (i != 0) out += ",";
        out += "\"" + std::string(failure_name(static_cast<Failure>(i))) + "\":" + n(s.failed[i]);
    }
    out += "}";
    out += ",\"pages\":" + n(s.pages) + ",\"assets\":" + n(s.assets) + ",\"uploads\":" + n(s.uploads);
    out += ",\"connections\":" + n(s.connections);
    out += ",\"new_cookies\":" + n(s.new_cookies);
    out += ",\"abandoned\":" + n(s.abandoned);
    out += ",\"bytes_received\":" + n(s.bytes_received) + ",\"bytes_sent\":" + n(s.bytes_sent);
    out += ",\"elapsed_ms\":" + json_number(r.elapsed_ms);
    out += ",\"requests_per_second\":" + json_number(requests_per_second(r));
    out += ",\"latency_ms\":{\"p50\":" + lat(h.percentile(50)) + ",\"p90\":" + lat(h.percentile(90)) +
           ",\"p99\":" + lat(h.percentile(99)) + ",\"max\":" + lat(h.max()) +
           ",\"mean\":" + json_number(h.mean() / 1e6) + ",\"samples\":" + n(h.count()) + "}";
    out += "}";
    return out;
}

}  // namespace kiln::bench
