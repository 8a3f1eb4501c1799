// Differential test: kiln's request parser (parse_request_head, then ChunkedDecoder or
// Content-Length for the body, as http::Connection does) against an independent
// parser, Debian's libhttp-parser 2.9, on a deterministic corpus of generated requests.
//
// The corpus is ~60% valid requests and ~40% requests made invalid by one named
// mutation operator. Two things are checked:
//   1. kiln accepts every valid request and rejects every mutated one;
//   2. wherever the two parsers disagree (accept/reject, or any parsed field), the
//      disagreement is listed in kAllowed below with the RFC 9112 reason. Anything
//      else fails the test and prints the request, escaped.
// http_parser is used with its defaults (lenient_http_headers and
// allow_chunked_length off); which of its checks are on is a property of the Debian
// build, so the table records what it was observed to do, not what it should do.
#include <gtest/gtest.h>
#include <http_parser.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "http/chunked.hpp"
#include "http/parser.hpp"

namespace kiln::http {
namespace {

// ---------------------------------------------------------------- deterministic PRNG

struct Rng {  // splitmix64: same sequence on every platform and standard library
    uint64_t s;
    uint64_t next() {
        uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    size_t below(size_t n) { return static_cast<size_t>(next() % n); }
    size_t range(size_t lo, size_t hi) { return lo + below(hi - lo + 1); }  // inclusive
    bool chance(unsigned percent) { return below(100) < percent; }
    template <class T>
    const T& pick(const std::vector<T>& v) { return v[below(v.size())]; }
};

// ---------------------------------------------------------------- request model

struct Msg {
    std::string method = "GET";
    std::string target = "/";
    std::string version = "HTTP/1.1";
    std::vector<std::pair<std::string, std::string>> fields;
    enum class Framing { None, Length, Chunked } framing = Framing::None;
    std::string body;       // payload
    std::string body_wire;  // payload as framed on the wire
};

std::string serialize(const Msg& m) {
    std::string s = m.method + " " + m.target + " " + m.version + "\r\n";
    for (const auto& [n, v] : m.fields) s += n + ":" + v + "\r\n";
    s += "\r\n";
    return s + m.body_wire;
}

const std::string kAlnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const std::string kTchar = kAlnum + "!#$%&'*+-.^_`|~";

std::string random_from(Rng& rng, const std::string& alphabet, size_t lo, size_t hi) {
    std::string s;
    size_t n = rng.range(lo, hi);
    for (size_t i = 0; i < n; ++i) s += alphabet[rng.below(alphabet.size())];
    return s;
}

bool is_framing_or_special(std::string_view name) {
    for (std::string_view s : {"host", "content-length", "transfer-encoding", "connection", "upgrade",
                               "expect", "proxy-connection", "keep-alive"})
        if (iequals(name, s)) return true;
    return false;
}

std::string random_field_name(Rng& rng) {
    while (true) {
        std::string n = rng.chance(50) ? "X-" + random_from(rng, kAlnum + "-", 1, 12)
                                       : random_from(rng, kTchar, 1, 16);
        if (!is_framing_or_special(n)) return n;
    }
}

// VCHAR with interior SP/HTAB, optional OWS on either side (not part of the value).
std::string random_field_value(Rng& rng) {
    std::string vchar;
    for (int c = 0x21; c < 0x7f; ++c) vchar += static_cast<char>(c);
    std::string v = random_from(rng, vchar, 0, 40);
    if (v.size() > 2 && rng.chance(30)) v[rng.range(1, v.size() - 2)] = rng.chance(50) ? ' ' : '\t';
    std::string lead = rng.chance(80) ? " " : rng.chance(50) ? "" : " \t ";
    std::string trail = rng.chance(80) ? "" : rng.chance(50) ? " " : "\t ";
    return lead + v + trail;
}

std::string random_target(Rng& rng) {
    const std::string seg = kAlnum + "-._~!$&'()*+,;=:@";
    std::string t;
    size_t segs = rng.range(0, 5);
    for (size_t i = 0; i < segs; ++i) t += "/" + random_from(rng, seg, 0, 12);
    if (t.empty() || rng.chance(15)) t += "/";
    if (rng.chance(40)) {
        t += "?";
        size_t pairs = rng.range(1, 4);
        for (size_t i = 0; i < pairs; ++i)
            t += (i ? "&" : "") + random_from(rng, kAlnum, 1, 6) + "=" + random_from(rng, kAlnum + "%+-/?", 0, 8);
    }
    return t;
}

std::string hex(size_t n, bool upper) {
    char buf[32];
    std::snprintf(buf, sizeof buf, upper ? "%zX" : "%zx", n);
    return buf;
}

void set_length_body(Msg& m, Rng& rng, size_t lo, size_t hi) {
    m.body.clear();
    size_t n = rng.range(lo, hi);
    for (size_t i = 0; i < n; ++i) m.body += static_cast<char>(rng.below(256));
    m.framing = Msg::Framing::Length;
    m.body_wire = m.body;
}

void set_chunked_body(Msg& m, Rng& rng) {
    m.body.clear();
    size_t n = rng.range(0, 300);
    for (size_t i = 0; i < n; ++i) m.body += static_cast<char>(rng.below(256));
    m.framing = Msg::Framing::Chunked;
    m.body_wire.clear();
    bool upper = rng.chance(50);
    for (size_t off = 0; off < n;) {
        size_t len = std::min(n - off, rng.range(1, 64));
        m.body_wire += hex(len, upper);
        if (rng.chance(15)) m.body_wire += ";ext=" + random_from(rng, kAlnum, 1, 5);
        m.body_wire += "\r\n" + m.body.substr(off, len) + "\r\n";
        off += len;
    }
    m.body_wire += "0\r\n";
    if (rng.chance(20)) m.body_wire += "X-Trailer: " + random_from(rng, kAlnum, 1, 10) + "\r\n";
    m.body_wire += "\r\n";
}

void insert_field(Msg& m, Rng& rng, std::string name, std::string value) {
    m.fields.insert(m.fields.begin() + static_cast<long>(rng.below(m.fields.size() + 1)),
                    {std::move(name), std::move(value)});
}

// A valid request: known method, origin-form target, 0-20 random fields, Host on 1.1,
// and for body-carrying methods a Content-Length or chunked body.
Msg random_valid(Rng& rng) {
    static const std::vector<std::string> methods = {"GET", "GET", "HEAD", "POST", "POST",
                                                     "PUT", "DELETE", "PATCH", "OPTIONS"};
    Msg m;
    m.method = rng.pick(methods);
    m.target = random_target(rng);
    m.version = rng.chance(85) ? "HTTP/1.1" : "HTTP/1.0";
    size_t nfields = rng.range(0, 20);
    for (size_t i = 0; i < nfields; ++i) m.fields.emplace_back(random_field_name(rng), random_field_value(rng));
    if (m.version == "HTTP/1.1") insert_field(m, rng, rng.chance(80) ? "Host" : "host", " example.com");
    if (rng.chance(20)) insert_field(m, rng, "Connection", rng.chance(50) ? " keep-alive" : " close");
    bool has_body = m.method == "POST" || m.method == "PUT" || m.method == "PATCH";
    if (has_body) {
        if (m.version == "HTTP/1.1" && rng.chance(45)) {
            set_chunked_body(m, rng);
            insert_field(m, rng, "Transfer-Encoding", " chunked");
        } else {
            set_length_body(m, rng, 0, 300);
            insert_field(m, rng, "Content-Length", " " + std::to_string(m.body.size()));
        }
    }
    return m;
}

// A valid HTTP/1.1 request that has at least one field besides Host and a body.
Msg random_valid_with_body(Rng& rng, bool chunked) {
    Msg m;
    do m = random_valid(rng);
    while (m.fields.empty());
    m.method = "POST";
    m.version = "HTTP/1.1";
    std::erase_if(m.fields, [](auto& f) {
        return iequals(f.first, "content-length") || iequals(f.first, "transfer-encoding") ||
               iequals(f.first, "host");
    });
    insert_field(m, rng, "Host", " example.com");
    if (chunked) {
        set_chunked_body(m, rng);
        insert_field(m, rng, "Transfer-Encoding", " chunked");
    } else {
        set_length_body(m, rng, 1, 200);
        insert_field(m, rng, "Content-Length", " " + std::to_string(m.body.size()));
    }
    if (m.fields.size() < 3) insert_field(m, rng, "X-Pad", " pad");
    return m;
}

size_t field_index(const Msg& m, std::string_view name) {
    for (size_t i = 0; i < m.fields.size(); ++i)
        if (iequals(m.fields[i].first, name)) return i;
    return m.fields.size();
}

// Index of a random field that is not framing-relevant (so mutating it changes syntax only).
size_t plain_field(const Msg& m, Rng& rng) {
    std::vector<size_t> idx;
    for (size_t i = 0; i < m.fields.size(); ++i)
        if (!is_framing_or_special(m.fields[i].first)) idx.push_back(i);
    return idx.empty() ? 0 : idx[rng.below(idx.size())];
}

// Byte offset of the line end of head line `line` (0 = request line) in serialize(m).
size_t line_end_offset(const std::string& wire, size_t line) {
    size_t pos = 0;
    for (size_t i = 0; i <= line; ++i) pos = wire.find("\r\n", i ? pos + 2 : 0);
    return pos;
}

// ---------------------------------------------------------------- corpus

enum class Class { Valid, Invalid };

struct Case {
    Class cls;
    std::string op;  // "valid" or the operator that made it
    std::string wire;
};

struct Op {
    const char* name;
    Class cls;
    std::function<std::string(Rng&)> make;
};

std::vector<Op> operators() {
    using F = Msg::Framing;
    (void)F::None;
    std::vector<Op> ops;
    auto inv = [&](const char* n, std::function<std::string(Rng&)> f) { ops.push_back({n, Class::Invalid, f}); };
    auto val = [&](const char* n, std::function<std::string(Rng&)> f) { ops.push_back({n, Class::Valid, f}); };

    // Valid-class variants that exercise known differences of opinion.
    val("valid: extension method", [](Rng& rng) {
        Msg m = random_valid(rng);
        m.method = rng.chance(50) ? "FROB" : "X-CUSTOM";
        return serialize(m);
    });
    val("valid: identical duplicate Content-Length", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, false);
        insert_field(m, rng, "Content-Length", " " + std::to_string(m.body.size()));
        return serialize(m);
    });
    val("valid: obs-text in field value", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, rng.chance(50));
        insert_field(m, rng, "X-Text", " caf\xc3\xa9 \xff");
        return serialize(m);
    });
    val("valid: absolute-form target", [](Rng& rng) {
        Msg m = random_valid(rng);
        m.target = "http://example.com" + random_target(rng);
        return serialize(m);
    });

    // Invalid-class operators: each breaks exactly one rule of RFC 9112.
    inv("bare LF ends a field line", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, rng.chance(50));
        std::string w = serialize(m);
        size_t at = line_end_offset(w, 1 + rng.below(m.fields.size()));
        return w.erase(at, 1);
    });
    inv("bare LF ends the request line", [](Rng& rng) {
        std::string w = serialize(random_valid_with_body(rng, false));
        return w.erase(line_end_offset(w, 0), 1);
    });
    inv("bare LF ends the head", [](Rng& rng) {
        std::string w = serialize(random_valid_with_body(rng, false));
        return w.erase(w.find("\r\n\r\n") + 2, 1);
    });
    inv("bare CR inside a field value", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, false);
        m.fields[plain_field(m, rng)].second += "v\rX-Injected: 1";
        return serialize(m);
    });
    inv("bare CR after an empty field value", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, false);
        m.fields[plain_field(m, rng)].second = rng.chance(50) ? " \rX-Injected: 1" : "\rX-Injected: 1";
        return serialize(m);
    });
    inv("bare CR ends a field line", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, false);
        std::string w = serialize(m);
        size_t at = line_end_offset(w, 1 + rng.below(m.fields.size()));
        return w.erase(at + 1, 1);
    });
    inv("obs-fold continuation line", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, rng.chance(50));
        m.fields[plain_field(m, rng)].second += std::string("\r\n") + (rng.chance(50) ? " " : "\t") + "folded";
        return serialize(m);
    });
    inv("whitespace before first field", [](Rng& rng) {
        std::string w = serialize(random_valid_with_body(rng, false));
        return w.insert(line_end_offset(w, 0) + 2, " X-Lead: 1\r\n");
    });
    inv("SP before colon", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, false);
        m.fields[plain_field(m, rng)].first += " ";
        return serialize(m);
    });
    inv("HTAB before colon", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, false);
        m.fields[plain_field(m, rng)].first += "\t";
        return serialize(m);
    });
    inv("space before colon of Content-Length", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, false);
        m.fields[field_index(m, "content-length")].first += " ";
        return serialize(m);
    });
    inv("empty field name", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, false);
        insert_field(m, rng, "", " value");
        return serialize(m);
    });
    inv("separator in field name", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, false);
        static const std::vector<std::string> seps = {"(", ")", "<", ">", "@", ",", ";", "\\", "\"", "/",
                                                      "[", "]", "?", "=", "{", "}"};
        m.fields[plain_field(m, rng)].first.insert(0, rng.pick(seps));
        return serialize(m);
    });
    inv("control char in field value", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, false);
        static const std::vector<std::string> ctl = {std::string(1, '\0'), "\x01", "\x08", "\x0b", "\x0c",
                                                     "\x1b", "\x1f", "\x7f"};
        auto& v = m.fields[plain_field(m, rng)].second;
        v.insert(v.empty() ? 0 : rng.range(1, v.size()), "a" + rng.pick(ctl) + "b");
        return serialize(m);
    });
    inv("Content-Length with Transfer-Encoding", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, true);
        insert_field(m, rng, "Content-Length", " " + std::to_string(m.body_wire.size()));
        return serialize(m);
    });
    inv("two different Content-Lengths", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, false);
        insert_field(m, rng, "Content-Length", " " + std::to_string(m.body.size() + rng.range(1, 5)));
        return serialize(m);
    });
    inv("negative Content-Length", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, false);
        m.fields[field_index(m, "content-length")].second = " -" + std::to_string(m.body.size());
        return serialize(m);
    });
    inv("non-numeric Content-Length", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, false);
        static const std::vector<std::string> bad = {" 1a", " 0x10", " +5", " 1 2", " ", " 5,5", " 1.0"};
        m.fields[field_index(m, "content-length")].second = rng.pick(bad);
        return serialize(m);
    });
    inv("19-digit Content-Length", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, false);
        m.fields[field_index(m, "content-length")].second = " 9223372036854775807";
        return serialize(m);
    });
    inv("Transfer-Encoding gzip alone", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, false);
        m.fields.erase(m.fields.begin() + static_cast<long>(field_index(m, "content-length")));
        insert_field(m, rng, "Transfer-Encoding", " gzip");
        return serialize(m);
    });
    inv("Transfer-Encoding chunked twice", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, true);
        m.fields[field_index(m, "transfer-encoding")].second = " chunked, chunked";
        return serialize(m);
    });
    inv("Transfer-Encoding on HTTP/1.0", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, true);
        m.version = "HTTP/1.0";
        return serialize(m);
    });
    inv("bad chunk size", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, true);
        static const std::vector<std::string> bad = {"zz", "-1", "0x5", " 5", "+5", "5 5", "", "5 x"};
        m.body_wire = rng.pick(bad) + "\r\nhello\r\n0\r\n\r\n";
        return serialize(m);
    });
    inv("chunk size with more than 15 hex digits", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, true);
        m.body_wire = std::string(rng.range(15, 20), '0') + "5\r\nhello\r\n0\r\n\r\n";
        return serialize(m);
    });
    inv("chunk data longer than its size", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, true);
        m.body_wire = rng.chance(50) ? "5\r\nhelloXY\r\n0\r\n\r\n" : "3\r\nhello\r\n0\r\n\r\n";
        return serialize(m);
    });
    inv("bare LF after chunk size", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, true);
        m.body_wire = rng.chance(50) ? "5\nhello\r\n0\r\n\r\n" : "5;e=1\nhello\r\n0\r\n\r\n";
        return serialize(m);
    });
    inv("bare LF after chunk data", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, true);
        m.body_wire = rng.chance(50) ? "5\r\nhello\n0\r\n\r\n" : "1\r\nh\r\n4\r\nello\n0\r\n\r\n";
        return serialize(m);
    });
    inv("bare LF ends the trailer section", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, true);
        m.body_wire = rng.chance(50) ? "5\r\nhello\r\n0\r\n\n" : "5\r\nhello\r\n0\r\nX-T: 1\r\n\n";
        return serialize(m);
    });
    inv("bare LF in trailer", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, true);
        m.body_wire = "5\r\nhello\r\n0\r\nX-T: 1\n\r\n";
        return serialize(m);
    });
    inv("malformed version digits", [](Rng& rng) {
        Msg m = random_valid(rng);
        static const std::vector<std::string> bad = {"HTTP/1.x", "HTTP/11.1", "HTTP/1", "HTTP/1.1.1",
                                                     "HTTP/ 1.1", "HTTP/1,1", "HTTP/.1", "HTTP/1.1 "};
        m.version = rng.pick(bad);
        return serialize(m);
    });
    inv("misspelt HTTP-name", [](Rng& rng) {
        Msg m = random_valid(rng);
        static const std::vector<std::string> bad = {"HTTX/1.1", "HXTP/1.1", "HTTPS/1.1", "http/1.1", "HTTp/1.1"};
        m.version = rng.pick(bad);
        return serialize(m);
    });
    inv("unsupported major version", [](Rng& rng) {
        Msg m = random_valid(rng);
        m.version = rng.chance(50) ? "HTTP/2.0" : "HTTP/0.9";
        return serialize(m);
    });
    inv("missing Host on HTTP/1.1", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, rng.chance(50));
        m.fields.erase(m.fields.begin() + static_cast<long>(field_index(m, "host")));
        return serialize(m);
    });
    inv("duplicate Host", [](Rng& rng) {
        Msg m = random_valid_with_body(rng, rng.chance(50));
        insert_field(m, rng, "Host", rng.chance(50) ? " example.com" : " evil.example");
        return serialize(m);
    });
    inv("bad method token", [](Rng& rng) {
        Msg m = random_valid(rng);
        static const std::vector<std::string> bad = {"G(T", "GE T", "GET\t", "", "P@ST", "GET/"};
        m.method = rng.pick(bad);
        return serialize(m);
    });
    inv("control byte in target", [](Rng& rng) {
        Msg m = random_valid(rng);
        static const std::vector<std::string> bad = {"\x01", "\x7f", "\x1b", std::string(1, '\0')};
        m.target.insert(rng.range(1, m.target.size()), rng.pick(bad));
        return serialize(m);
    });
    inv("HTAB in target", [](Rng& rng) {
        Msg m = random_valid(rng);
        m.target.insert(rng.range(1, m.target.size()), "\t");
        return serialize(m);
    });
    inv("non-ASCII byte in target", [](Rng& rng) {
        Msg m = random_valid(rng);
        static const std::vector<std::string> bad = {"\xc3\xa9", "\x80", "\xff"};
        m.target.insert(rng.range(1, m.target.size()), rng.pick(bad));
        return serialize(m);
    });
    inv("asterisk-form with non-OPTIONS method", [](Rng& rng) {
        Msg m = random_valid(rng);
        if (m.method == "OPTIONS") m.method = "GET";
        m.target = "*";
        return serialize(m);
    });
    inv("request line over 8 KiB", [](Rng& rng) {
        Msg m = random_valid(rng);
        m.target = "/" + std::string(kMaxRequestLine + rng.range(1, 100), 'a');
        return serialize(m);
    });
    inv("more than 100 fields", [](Rng& rng) {
        Msg m = random_valid(rng);
        while (m.fields.size() <= kMaxHeaderCount) m.fields.emplace_back(random_field_name(rng), " v");
        return serialize(m);
    });
    return ops;
}

std::vector<Case> build_corpus(size_t n_valid, size_t n_per_op_round) {
    Rng rng{0x6b696c6e2d646966ULL};  // fixed seed: "kiln-dif"
    std::vector<Case> corpus;
    for (size_t i = 0; i < n_valid; ++i) corpus.push_back({Class::Valid, "valid", serialize(random_valid(rng))});
    auto ops = operators();
    for (size_t round = 0; round < n_per_op_round; ++round)
        for (const Op& op : ops) corpus.push_back({op.cls, op.name, op.make(rng)});
    return corpus;
}

// ---------------------------------------------------------------- the two parsers

enum class Verdict { Accept, Reject, Incomplete, Extra };  // Extra: bytes after one message

const char* verdict_name(Verdict v) {
    switch (v) {
        case Verdict::Accept: return "accept";
        case Verdict::Reject: return "reject";
        case Verdict::Incomplete: return "incomplete";
        case Verdict::Extra: return "extra bytes";
    }
    return "?";
}

struct Outcome {
    Verdict verdict = Verdict::Reject;
    std::string detail;  // error name, for the report
    std::string method, target, body;
    std::vector<std::pair<std::string, std::string>> fields;
};

std::string trim_ows(std::string s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
    size_t i = 0;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    return s.substr(i);
}

// What a server does: parse the head, then read the body it announced.
Outcome run_kiln(const std::string& wire) {
    Outcome o;
    std::string buf = wire;
    auto head = std::make_unique<RequestHead>();
    ParseResult r = parse_request_head(buf, *head);
    if (r.status == ParseStatus::Incomplete) {
        o.verdict = Verdict::Incomplete;
        return o;
    }
    if (r.status == ParseStatus::Error) {
        o.detail = std::string(describe(r.error));
        return o;
    }
    o.method = std::string(head->method_token);
    o.target = std::string(head->target);
    for (size_t i = 0; i < head->header_count; ++i)
        o.fields.emplace_back(std::string(head->headers[i].name), std::string(head->headers[i].value));
    size_t end = r.consumed;
    if (head->chunked) {
        ChunkedDecoder d;
        size_t rd = r.consumed, wr = r.consumed;
        ChunkedStatus s = d.decode(buf.data(), &rd, &wr, buf.size(), kMaxBodyBytes);
        if (s == ChunkedStatus::NeedMore) {
            o.verdict = Verdict::Incomplete;
            return o;
        }
        if (s != ChunkedStatus::Done) {
            o.detail = "chunked body: status " + std::to_string(static_cast<int>(s));
            return o;
        }
        o.body = buf.substr(r.consumed, wr - r.consumed);
        end = rd;
    } else if (head->content_length > 0) {
        if (buf.size() - r.consumed < static_cast<uint64_t>(head->content_length)) {
            o.verdict = Verdict::Incomplete;
            return o;
        }
        end = r.consumed + static_cast<size_t>(head->content_length);
        o.body = buf.substr(r.consumed, end - r.consumed);
    }
    o.verdict = end == buf.size() ? Verdict::Accept : Verdict::Extra;
    return o;
}

struct HpState {
    Outcome o;
    int begun = 0, completed = 0;
    bool last_was_value = false;
    bool headers_done = false;  // later field callbacks are chunked trailers, which kiln discards
};

HpState* S(http_parser* p) { return static_cast<HpState*>(p->data); }

Outcome run_http_parser(const std::string& wire) {
    http_parser_settings st;
    http_parser_settings_init(&st);
    st.on_message_begin = [](http_parser* p) {
        S(p)->begun++;
        return 0;
    };
    st.on_url = [](http_parser* p, const char* at, size_t n) {
        if (S(p)->completed == 0) S(p)->o.target.append(at, n);
        return 0;
    };
    st.on_header_field = [](http_parser* p, const char* at, size_t n) {
        HpState* s = S(p);
        if (s->headers_done) return 0;
        if (s->last_was_value || s->o.fields.empty()) s->o.fields.emplace_back();
        s->o.fields.back().first.append(at, n);
        s->last_was_value = false;
        return 0;
    };
    st.on_header_value = [](http_parser* p, const char* at, size_t n) {
        HpState* s = S(p);
        if (s->headers_done) return 0;
        s->o.fields.back().second.append(at, n);
        s->last_was_value = true;
        return 0;
    };
    st.on_headers_complete = [](http_parser* p) {
        S(p)->headers_done = true;
        if (S(p)->completed == 0) S(p)->o.method = http_method_str(static_cast<http_method>(p->method));
        return 0;
    };
    st.on_body = [](http_parser* p, const char* at, size_t n) {
        if (S(p)->completed == 0) S(p)->o.body.append(at, n);
        return 0;
    };
    st.on_message_complete = [](http_parser* p) {
        S(p)->completed++;
        return 0;
    };
    http_parser p;
    http_parser_init(&p, HTTP_REQUEST);
    HpState s;
    p.data = &s;
    size_t n = http_parser_execute(&p, &st, wire.data(), wire.size());
    auto err = HTTP_PARSER_ERRNO(&p);
    if (err != HPE_OK) {
        s.o.verdict = Verdict::Reject;
        s.o.detail = http_errno_name(err);
    } else if (p.upgrade) {
        s.o.verdict = Verdict::Extra;
        s.o.detail = "upgrade";
    } else if (s.completed == 0) {
        s.o.verdict = Verdict::Incomplete;
    } else {
        s.o.verdict = (s.completed == 1 && s.begun == 1 && n == wire.size()) ? Verdict::Accept : Verdict::Extra;
    }
    for (auto& f : s.o.fields) f.second = trim_ows(f.second);  // OWS is not part of a value (RFC 9112 §5)
    return s.o;
}

// ---------------------------------------------------------------- allowed disagreements

// Every known way the parsers may disagree. `op` is the corpus operator; kiln and
// http_parser are the verdicts; for both-accept field differences, kiln == hp == Accept.
struct Allowed {
    const char* category;
    const char* op;
    Verdict kiln, hp;
    const char* reason;
};

constexpr Verdict kA = Verdict::Accept, kR = Verdict::Reject, kI = Verdict::Incomplete;

const Allowed kAllowed[] = {
    // category, operator, kiln, http_parser, reason
    {"kiln stricter: bare LF line endings", "bare LF ends the request line", kR, kA,
     "RFC 9112 §2.2: a lone LF is only a MAY; kiln refuses it, as parsers may split lines differently"},
    {"kiln stricter: bare LF line endings", "bare LF ends a field line", kR, kA, "RFC 9112 §2.2, as above"},
    {"kiln stricter: bare LF line endings", "bare LF ends the head", kR, kA, "RFC 9112 §2.2, as above"},
    {"kiln stricter: bare LF line endings", "bare LF in trailer", kR, kA,
     "RFC 9112 §7.1.2: trailer lines are field lines, §2.2 applies"},
    {"kiln stricter: bare LF line endings", "bare LF ends the trailer section", kR, kA,
     "RFC 9112 §7.1: the chunked body ends in CRLF"},
    // (A bare LF after chunk data is rejected by both, so it has no row.)
    {"http_parser waits past a bare LF in a chunk-size line", "bare LF after chunk size", kR, kI,
     "RFC 9112 §7.1: the chunk-size line ends in CRLF; kiln rejects, http_parser waits for more"},
    {"http_parser accepts obs-fold", "obs-fold continuation line", kR, kA,
     "RFC 9112 §5.2: a server MUST reject obs-fold with 400 or replace it; kiln rejects"},
    {"http_parser accepts whitespace before the first field", "whitespace before first field", kR, kA,
     "RFC 9112 §2.2: such a line MUST be rejected or ignored; kiln rejects"},
    {"http_parser (non-strict build) accepts SP before ':'", "SP before colon", kR, kA,
     "RFC 9112 §5.1: whitespace between field name and colon MUST be rejected with 400"},
    {"http_parser (non-strict build) accepts SP before ':'", "space before colon of Content-Length", kR, kA,
     "RFC 9112 §5.1: MUST reject; the classic request-smuggling vector"},
    {"http_parser (non-strict build) accepts CR after an empty value", "bare CR after an empty field value", kR,
     kA, "RFC 9112 §2.2: a bare CR MUST be treated as invalid or replaced by SP"},
    {"http_parser does not enforce Host", "missing Host on HTTP/1.1", kR, kA,
     "RFC 9112 §3.2: a server MUST respond 400 to a 1.1 request without Host"},
    {"http_parser does not enforce Host", "duplicate Host", kR, kA,
     "RFC 9112 §3.2: a server MUST respond 400 to a request with more than one Host"},
    {"http_parser accepts Transfer-Encoding on HTTP/1.0", "Transfer-Encoding on HTTP/1.0", kR, kA,
     "RFC 9112 §6.1: TE in a 1.0 message MUST be treated as faulty framing"},
    {"http_parser rejects extension methods", "valid: extension method", kA, kR,
     "RFC 9112 §3.1 / RFC 9110 §9.1: method is any token; unknown methods are the router's 501, not a parse error"},
    {"http_parser rejects identical duplicate Content-Length", "valid: identical duplicate Content-Length", kA,
     kR, "RFC 9110 §8.6: a recipient MAY accept repeated identical values as one"},
    {"http_parser accepts other major versions", "unsupported major version", kR, kA,
     "RFC 9112 §2.3 / RFC 9110 §15.6.6: kiln answers 505 to versions other than 1.x"},
    {"http_parser (non-strict build) skips letters of HTTP-name", "misspelt HTTP-name", kR, kA,
     "RFC 9112 §2.3: HTTP-name is the case-sensitive \"HTTP\""},
    {"http_parser (non-strict build) accepts HTAB or non-ASCII in target", "HTAB in target", kR, kA,
     "RFC 9112 §3.2: request-target has no whitespace; RFC 3986 has no raw HTAB"},
    {"http_parser (non-strict build) accepts HTAB or non-ASCII in target", "non-ASCII byte in target", kR, kA,
     "RFC 9112 §3.2 / RFC 3986 §2: non-ASCII must be percent-encoded"},
    {"http_parser accepts asterisk-form for any method", "asterisk-form with non-OPTIONS method", kR, kA,
     "RFC 9112 §3.2.4: asterisk-form is only used for OPTIONS"},
    {"kiln limits: request line 8 KiB, 100 fields", "request line over 8 KiB", kR, kA,
     "RFC 9112 §3: a server MAY answer 414; kiln's limit is kMaxRequestLine"},
    {"kiln limits: request line 8 KiB, 100 fields", "more than 100 fields", kR, kA,
     "RFC 9112 §5 / RFC 6585 §5: a server MAY answer 431; kiln's limit is kMaxHeaderCount"},
    {"kiln stricter: Content-Length over 18 digits", "19-digit Content-Length", kR, kI,
     "RFC 9110 §8.6: recipients MUST anticipate large values and prevent overflow; http_parser waits for 2^63 bytes"},
    {"kiln stricter: chunk size over 15 hex digits", "chunk size with more than 15 hex digits", kR, kA,
     "RFC 9112 §7.1: recipients MUST anticipate large hex numbers and prevent overflow"},
    {"http_parser accepts text after whitespace in a chunk-size line", "bad chunk size", kR, kA,
     "RFC 9112 §7.1.1: only BWS \";\" chunk-ext may follow chunk-size"},
};

const Allowed* find_allowed(const std::string& op, Verdict kiln, Verdict hp) {
    for (const Allowed& a : kAllowed)
        if (op == a.op && a.kiln == kiln && a.hp == hp) return &a;
    return nullptr;
}

std::string escape(const std::string& s, size_t max = 600) {
    std::string out;
    for (size_t i = 0; i < s.size() && i < max; ++i) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '\r') out += "\\r";
        else if (c == '\n') out += "\\n\n    ";
        else if (c == '\t') out += "\\t";
        else if (c == '\\') out += "\\\\";
        else if (c < 0x20 || c >= 0x7f) {
            char b[8];
            std::snprintf(b, sizeof b, "\\x%02x", c);
            out += b;
        } else out += static_cast<char>(c);
    }
    if (s.size() > max) out += "...(" + std::to_string(s.size()) + " bytes)";
    return out;
}

// Both accepted: compare what each saw. Returns "" if equal, else what differs.
std::string field_difference(const Outcome& k, const Outcome& h) {
    if (k.method != h.method) return "method: kiln \"" + k.method + "\", http_parser \"" + h.method + "\"";
    if (k.target != h.target) return "target: kiln \"" + k.target + "\", http_parser \"" + h.target + "\"";
    if (k.fields.size() != h.fields.size())
        return "field count: kiln " + std::to_string(k.fields.size()) + ", http_parser " +
               std::to_string(h.fields.size());
    for (size_t i = 0; i < k.fields.size(); ++i) {
        if (k.fields[i].first != h.fields[i].first)
            return "field name #" + std::to_string(i) + ": kiln \"" + escape(k.fields[i].first) +
                   "\", http_parser \"" + escape(h.fields[i].first) + "\"";
        if (k.fields[i].second != h.fields[i].second)
            return "field value #" + std::to_string(i) + ": kiln \"" + escape(k.fields[i].second) +
                   "\", http_parser \"" + escape(h.fields[i].second) + "\"";
    }
    if (k.body != h.body)
        return "body: kiln " + std::to_string(k.body.size()) + " bytes, http_parser " + std::to_string(h.body.size());
    return "";
}

// ---------------------------------------------------------------- the test

TEST(ParserDifferential, EveryDisagreementWithHttpParserIsADocumentedCategory) {
    const size_t kValid = 620, kRounds = 10;
    std::vector<Case> corpus = build_corpus(kValid, kRounds);

    size_t valid = 0, invalid = 0;
    std::map<std::string, size_t> per_op;
    for (const Case& c : corpus) {
        (c.cls == Class::Valid ? valid : invalid)++;
        per_op[c.op]++;
    }
    ASSERT_GE(corpus.size(), 600u);
    EXPECT_GE(valid * 100, corpus.size() * 55) << "valid class under-represented";
    EXPECT_GE(invalid * 100, corpus.size() * 35) << "invalid class under-represented";
    for (const auto& [op, n] : per_op) EXPECT_GE(n, kRounds) << op;

    std::map<std::string, size_t> categories;
    std::map<const Allowed*, size_t> row_hits;
    size_t unexplained = 0;
    for (size_t i = 0; i < corpus.size(); ++i) {
        const Case& c = corpus[i];
        Outcome k = run_kiln(c.wire);
        Outcome h = run_http_parser(c.wire);

        // 1. kiln's own verdict must match the class of the request.
        Verdict want = c.cls == Class::Valid ? Verdict::Accept : Verdict::Reject;
        EXPECT_EQ(k.verdict, want) << "case " << i << " [" << c.op << "]: kiln said " << verdict_name(k.verdict)
                                   << " (" << k.detail << ")\n    " << escape(c.wire);

        // 2. Any disagreement with http_parser must be documented.
        std::string diff;
        if (k.verdict != h.verdict) diff = std::string("verdict: kiln ") + verdict_name(k.verdict) + " (" +
                                           k.detail + "), http_parser " + verdict_name(h.verdict) + " (" +
                                           h.detail + ")";
        else if (k.verdict == Verdict::Accept) diff = field_difference(k, h);
        if (diff.empty()) {
            categories[k.verdict == Verdict::Accept ? "agree: both accept, same fields and body"
                                                    : "agree: both reject"]++;
            continue;
        }
        if (const Allowed* a = find_allowed(c.op, k.verdict, h.verdict)) {
            categories[a->category]++;
            row_hits[a]++;
            continue;
        }
        ++unexplained;
        ADD_FAILURE() << "undocumented disagreement, case " << i << " [" << c.op << "]: " << diff << "\n    "
                      << escape(c.wire);
    }

    std::printf("parser differential: %zu requests (%zu valid, %zu invalid, %zu operators)\n", corpus.size(), valid,
                invalid, per_op.size() - 1);
    for (const auto& [cat, n] : categories) std::printf("  %5zu  %s\n", n, cat.c_str());
    if (unexplained) std::printf("  %5zu  UNDOCUMENTED\n", unexplained);

    // A row nothing matches any more means http_parser (or kiln) changed: re-check the table.
    for (const Allowed& a : kAllowed)
        EXPECT_GT(row_hits[&a], 0u) << "stale allowed row: " << a.category << " / " << a.op;
}

}  // namespace
}  // namespace kiln::http
