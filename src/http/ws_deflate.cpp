#include "http/ws_deflate.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <memory>
#include <stdexcept>

#include "http/chars.hpp"
#include "http/parser.hpp"

namespace kiln::http {
namespace {

// A reader over a header value: tokens, quoted strings, separators.
struct Scanner {
    std::string_view s;
    size_t at = 0;

    void skip_ows() {
        while (at < s.size() && (s[at] == ' ' || s[at] == '\t')) ++at;
    }
    bool eat(char c) {
        skip_ows();
        if (at < s.size() && s[at] == c) {
            ++at;
            return true;
        }
        return false;
    }
    bool done() {
        skip_ows();
        return at >= s.size();
    }
    std::string_view token() {
        skip_ows();
        size_t start = at;
        while (at < s.size() && chars::is_token(static_cast<uint8_t>(s[at]))) ++at;
        return s.substr(start, at - start);
    }
    // A token or a quoted string (unquoted, escapes kept out); false if malformed.
    bool value(std::string& out) {
        skip_ows();
        out.clear();
        if (at < s.size() && s[at] == '"') {
            ++at;
            while (at < s.size() && s[at] != '"') {
                if (s[at] == '\\' && at + 1 < s.size()) ++at;
                out.push_back(s[at++]);
            }
            if (at >= s.size()) return false;
            ++at;
            return true;
        }
        out = token();
        return !out.empty();
    }
    // Skips to the next extension (past a comma not inside quotes).
    void next_extension() {
        bool quoted = false;
        while (at < s.size()) {
            char c = s[at++];
            if (c == '"') quoted = !quoted;
            else if (c == '\\' && quoted && at < s.size()) ++at;
            else if (c == ',' && !quoted) return;
        }
    }
};

// 8..15 as RFC 7692 §7.1.2 spells them (no leading zero, no sign).
int window_bits(std::string_view v) {
    if (v.size() == 1 && v[0] >= '8' && v[0] <= '9') return v[0] - '0';
    if (v.size() == 2 && v[0] == '1' && v[1] >= '0' && v[1] <= '5') return 10 + (v[1] - '0');
    return 0;
}

// One offer's parameters, the scanner placed after its name. nullopt: not acceptable.
std::optional<WsDeflateAnswer> read_offer(Scanner& sc) {
    bool seen_snct = false, seen_cnct = false, seen_smwb = false, seen_cmwb = false;
    int server_bits = 15;
    int client_bits = 0;  // 0: the client did not say it may use a smaller window
    bool ok = true;
    std::string value;
    while (sc.eat(';')) {
        std::string_view name = sc.token();
        bool has_value = false;
        if (sc.eat('=')) {
            if (!sc.value(value)) return std::nullopt;
            has_value = true;
        }
        if (iequals(name, "server_no_context_takeover")) {
            ok = ok && !seen_snct && !has_value;
            seen_snct = true;
        } else if (iequals(name, "client_no_context_takeover")) {
            ok = ok && !seen_cnct && !has_value;
            seen_cnct = true;
        } else if (iequals(name, "server_max_window_bits")) {
            ok = ok && !seen_smwb && has_value;
            seen_smwb = true;
            server_bits = has_value ? window_bits(value) : 0;
            ok = ok && server_bits >= 9;  // 8 is valid, but raw deflate cannot keep to 256 bytes
        } else if (iequals(name, "client_max_window_bits")) {
            ok = ok && !seen_cmwb;
            seen_cmwb = true;
            client_bits = has_value ? window_bits(value) : 15;
            ok = ok && client_bits != 0;
        } else {
            ok = false;  // a parameter this version does not know
        }
    }
    if (!ok) return std::nullopt;
    WsDeflateAnswer a;
    a.params.enabled = true;
    a.params.server_window_bits = server_bits;
    a.header = "permessage-deflate; server_no_context_takeover; client_no_context_takeover";
    if (seen_smwb) a.header += "; server_max_window_bits=" + std::to_string(server_bits);
    if (seen_cmwb) a.header += "; client_max_window_bits=" + std::to_string(client_bits);
    return a;
}

struct Deflater {
    z_stream z{};
    int level = 0;  // what z is set to
};

// The loop thread's streams (one deflater per window size asked for).
struct Codecs {
    std::array<std::unique_ptr<Deflater>, 16> deflaters;
    std::unique_ptr<z_stream> inflater;
    ~Codecs() {
        for (auto& d : deflaters)
            if (d) deflateEnd(&d->z);
        if (inflater) inflateEnd(inflater.get());
    }
};
thread_local Codecs codecs;

// The stream for a window size, at `level`. memLevel 5, not 8: the stream is reset
// after every message, and a reset clears the hash table (8 KiB here, 64 KiB at 8).
// A level change goes through deflateParams, which on a stream just reset codes nothing.
z_stream& deflater(int bits, int level) {
    auto& d = codecs.deflaters[static_cast<size_t>(bits)];
    if (!d) {
        auto made = std::make_unique<Deflater>();
        if (deflateInit2(&made->z, level, Z_DEFLATED, -bits, 5, Z_DEFAULT_STRATEGY) != Z_OK) throw std::bad_alloc();
        made->level = level;
        d = std::move(made);
    } else if (d->level != level) {
        if (deflateParams(&d->z, level, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("zlib: deflateParams");
        d->level = level;
    }
    return d->z;
}

z_stream& inflater() {
    auto& i = codecs.inflater;
    if (!i) {
        auto z = std::make_unique<z_stream>();
        if (inflateInit2(z.get(), -15) != Z_OK) throw std::bad_alloc();  // 15 reads any peer's window
        i = std::move(z);
    }
    return *i;
}

}  // namespace

std::optional<WsDeflateAnswer> negotiate_deflate(std::string_view offers) {
    Scanner sc{offers};
    while (!sc.done()) {
        std::string_view name = sc.token();
        if (iequals(name, "permessage-deflate")) {
            size_t start = sc.at;
            if (auto a = read_offer(sc); a && (sc.done() || sc.eat(','))) return a;
            sc.at = start;
        }
        sc.next_extension();
    }
    return std::nullopt;
}

void deflate_message(std::string_view payload, int window_bits, int level, std::string& out) {
    z_stream& z = deflater(window_bits, std::clamp(level, 1, 9));
    out.clear();
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(payload.data()));
    z.avail_in = static_cast<uInt>(payload.size());
    size_t produced = 0;
    for (;;) {
        out.resize(produced + std::max<size_t>(payload.size() / 2 + 64, 256));
        z.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
        z.avail_out = static_cast<uInt>(out.size() - produced);
        deflate(&z, Z_SYNC_FLUSH);
        produced = out.size() - z.avail_out;
        if (z.avail_in == 0 && z.avail_out > 0) break;  // everything in, and the flush fit
    }
    out.resize(produced);
    if (out.size() >= 4 && out.compare(out.size() - 4, 4, std::string_view("\0\0\xff\xff", 4)) == 0) out.resize(out.size() - 4);
    deflateReset(&z);
}

bool inflate_message(std::string_view payload, uint64_t limit, std::string& out, bool* too_big) {
    static constexpr char kTail[4] = {0, 0, '\xff', '\xff'};
    z_stream& z = inflater();
    out.clear();
    *too_big = false;
    bool ok = true;
    for (int part = 0; part < 2 && ok; ++part) {
        std::string_view in = part == 0 ? payload : std::string_view(kTail, 4);
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
        z.avail_in = static_cast<uInt>(in.size());
        while (z.avail_in > 0) {
            size_t produced = out.size();
            size_t room = std::max<size_t>(in.size() * 2, 4096);
            if (produced + room > limit + 1) room = static_cast<size_t>(limit + 1 - produced);
            if (room == 0) {
                *too_big = true;
                ok = false;
                break;
            }
            out.resize(produced + room);
            z.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
            z.avail_out = static_cast<uInt>(room);
            int rc = inflate(&z, Z_SYNC_FLUSH);
            out.resize(out.size() - z.avail_out);
            if (out.size() > limit) {
                *too_big = true;
                ok = false;
                break;
            }
            if (rc == Z_STREAM_END) {
                // A final block ends the stream: what follows (our tail) is not DEFLATE.
                ok = z.avail_in == 0 || part == 1;
                break;
            }
            if (rc == Z_BUF_ERROR && z.avail_out > 0) break;  // needs more input: the next part
            if (rc != Z_OK && rc != Z_BUF_ERROR) {
                ok = false;
                break;
            }
        }
    }
    inflateReset(&z);
    return ok;
}

}  // namespace kiln::http
