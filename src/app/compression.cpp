#include "app/compression.hpp"

#include <algorithm>

#include "app/file_http.hpp"
#include "http/chars.hpp"
#include "http/parser.hpp"

namespace kiln::app {
namespace {

std::string_view media_type(std::string_view content_type) {
    return http::chars::trim_ows(content_type.substr(0, content_type.find(';')));
}

std::string_view content_type_of(const http::Response& res) {
    if (!res.content_type().empty()) return res.content_type();
    return res.header("content-type").value_or(std::string_view());
}

}  // namespace

bool codable(const CompressionPolicy& p, const http::Response& res) {
    int s = res.status();
    if (!p.enabled || s < 200 || s == 204 || s == 206 || s == 304) return false;
    if (res.header("content-encoding") || res.header("etag")) return false;
    if (auto cc = res.header("cache-control"); cc && http::list_has_token(*cc, "no-transform")) return false;
    std::string_view type = media_type(content_type_of(res));
    return std::any_of(p.types.begin(), p.types.end(), [&](const std::string& t) { return http::iequals(t, type); });
}

namespace {

void add_vary(http::Response& res) {
    auto vary = res.header("vary");
    if (!vary) {
        res.header("Vary", "Accept-Encoding");
    } else if (!http::list_has_token(*vary, "accept-encoding") && !http::list_has_token(*vary, "*")) {
        res.header("Vary", std::string(*vary) + ", Accept-Encoding");
    }
}

}  // namespace

http::Coding preferred_coding(std::string_view accept_encoding) {
    AcceptedCodings a = parse_accept_encoding(accept_encoding);
    int best = std::max({a.br, a.zstd, a.gzip});
    if (best <= 0) return http::Coding::Identity;
    // Ties: zstd, br, gzip. At the default levels zstd costs a sixth of br's CPU for an
    // output a few percent larger (bench/results/compression.md).
    if (a.zstd == best) return http::Coding::Zstd;
    if (a.br == best) return http::Coding::Brotli;
    return http::Coding::Gzip;
}

http::Coding preferred_stream_coding(std::string_view accept_encoding) {
    AcceptedCodings a = parse_accept_encoding(accept_encoding);
    if (a.gzip > 0 && a.gzip >= std::max(a.br, a.zstd)) return http::Coding::Gzip;
    return preferred_coding(accept_encoding);
}

constexpr size_t kKeptCodingBuffer = 256 * 1024;

void compress_body(const CompressionPolicy& p, std::string_view accept_encoding, http::Response& res) {
    if (res.has_file() || res.body().size() < p.min_size || !codable(p, res)) return;
    add_vary(res);
    http::Coding c = preferred_coding(accept_encoding);
    if (c == http::Coding::Identity) return;
    thread_local std::string coded;
    // A large buffer is not kept for the thread's life (up to 64 pool threads, each
    // with its largest body): after the swap it holds the plain body's.
    struct Trim {
        ~Trim() {
            if (coded.capacity() > kKeptCodingBuffer) std::string().swap(coded);
            else coded.clear();
        }
    } trim;
    coded.clear();
    if (!http::compress(c, res.body(), p.levels, &coded) || coded.size() >= res.body().size()) return;
    res.body().swap(coded);
    res.header("Content-Encoding", http::coding_name(c));
}

void compress_stream(const CompressionPolicy& p, std::string_view accept_encoding, http::Response& res) {
    if (!res.has_stream() || res.streaming() || !codable(p, res)) return;
    add_vary(res);
    http::Coding c = preferred_stream_coding(accept_encoding);
    if (c == http::Coding::Identity) return;
    auto encoder = http::StreamEncoder::make(c, p.levels);
    if (!encoder) return;
    res.header("Content-Encoding", http::coding_name(c));
    res.encode_stream(std::move(encoder));
}

}  // namespace kiln::app
