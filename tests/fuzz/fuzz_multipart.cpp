// Fuzzes the multipart/form-data push parser: the body is fed whole, then again in
// pseudo-random pieces (down to single bytes); both runs must report the same parts,
// data, status and error. The sink checks the call order, and the parser's memory must
// stay within its bound however large the input. Input layout: byte 0 picks limits and
// an aborting sink (in on_part, or in on_data), bytes 1..4 seed the split points, then
// the boundary up to the first '\n', then the body. The boundary line is also read as a
// whole Content-Type by multipart_boundary() (untrusted header bytes), and a
// Content-Type built around the boundary must give it back.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "http/multipart.hpp"

using namespace kiln::http;

namespace {

struct Part {
    std::string name, content_type, raw_headers, data;
    std::optional<std::string> filename;
    size_t header_count = 0;
    bool ended = false;
    bool operator==(const Part&) const = default;
};

struct Recorder : MultipartSink {
    std::vector<Part> parts;
    size_t refuse_part = SIZE_MAX;  // on_part (or on_data) returns false for this index
    bool refuse_in_data = false;
    bool on_part(const PartHead& h) override {
        FUZZ_CHECK(h.index == parts.size());
        FUZZ_CHECK(parts.empty() || parts.back().ended);
        FUZZ_CHECK(h.headers != nullptr || h.header_count == 0);
        Part p;
        p.name = h.name;
        p.content_type = h.content_type;
        p.raw_headers = h.raw_headers;
        p.header_count = h.header_count;
        if (h.filename) p.filename = std::string(*h.filename);
        // filename or the decoded filename*: text a header may carry (TAB at most).
        if (h.filename)
            for (char c : *h.filename) FUZZ_CHECK(c == '\t' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f));
        parts.push_back(std::move(p));
        return refuse_in_data || h.index != refuse_part;
    }
    bool on_data(std::string_view d) override {
        FUZZ_CHECK(!d.empty());
        FUZZ_CHECK(!parts.empty() && !parts.back().ended);
        if (refuse_in_data && parts.size() - 1 == refuse_part) return false;  // (kept nothing: pieces agree)
        parts.back().data.append(d);
        return true;
    }
    bool on_part_end() override {
        FUZZ_CHECK(!parts.empty() && !parts.back().ended);
        parts.back().ended = true;
        return true;
    }
};

struct Run {
    MultipartStatus status;
    MultipartError error;
    std::vector<Part> parts;
};

// Largest heap the parser may hold for these limits: the delimiter, then the head, name
// and filename, each at most twice (string growth) the head limit. Never the data.
size_t memory_bound(const MultipartLimits& l) {
    return 128 + 6 * l.max_part_header_bytes + 2 * l.max_headers_per_part * sizeof(kiln::Header);
}

Run parse(std::string_view boundary, std::string_view body, const MultipartLimits& limits, size_t refuse,
          bool refuse_in_data, uint32_t seed, bool whole) {
    MultipartParser p(boundary, limits);
    Recorder r;
    r.refuse_part = refuse;
    r.refuse_in_data = refuse_in_data;
    MultipartStatus s = MultipartStatus::NeedMore;
    size_t span = 1 + (seed >> 24) % 64;
    size_t at = 0;
    do {
        size_t n = body.size() - at;
        if (!whole) {
            seed = seed * 1103515245u + 12345u;
            n = std::min(n, 1 + (seed >> 16) % span);
        }
        s = p.feed(body.substr(at, n), r);
        at += n;
        FUZZ_CHECK(p.buffered_bytes() <= memory_bound(limits));
        FUZZ_CHECK(p.parts() == r.parts.size());
    } while (s == MultipartStatus::NeedMore && at < body.size());
    if (s == MultipartStatus::NeedMore) s = p.finish();
    FUZZ_CHECK(s != MultipartStatus::NeedMore);
    FUZZ_CHECK((s == MultipartStatus::Error) == (p.error() != MultipartError::None));
    FUZZ_CHECK(p.finish() == s);  // finish() is idempotent once decided
    return {s, p.error(), std::move(r.parts)};
}

bool is_tchar(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

// The boundary line as a Content-Type: what comes back is a valid boundary inside it,
// of a multipart/form-data type. And a Content-Type built around a valid boundary
// (quoted, and bare when every byte is a token byte) gives exactly that boundary.
void check_content_type(std::string_view line) {
    if (std::optional<std::string_view> b = multipart_boundary(line)) {
        FUZZ_CHECK(valid_boundary(*b));
        FUZZ_CHECK(b->data() >= line.data() && b->data() + b->size() <= line.data() + line.size());
        std::string_view type = line.substr(std::min(line.find_first_not_of(" \t"), line.size()));
        std::string lower(type.substr(0, 19));  // (the type, after any leading whitespace)
        for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
        FUZZ_CHECK(lower == "multipart/form-data");
    }
    if (!valid_boundary(line) || line.find_first_of("\"\\") != line.npos) return;
    std::string quoted = "Multipart/Form-Data; charset=utf-8; BOUNDARY=\"" + std::string(line) + "\"";
    std::optional<std::string_view> q = multipart_boundary(quoted);
    FUZZ_CHECK(q && *q == line);
    bool bare = true;
    for (char c : line) bare = bare && is_tchar(c);
    if (bare) {
        std::string plain = "multipart/form-data;boundary=" + std::string(line);
        std::optional<std::string_view> p = multipart_boundary(plain);
        FUZZ_CHECK(p && *p == line);
        FUZZ_CHECK(!multipart_boundary(plain + "; boundary=" + std::string(line)));  // repeated
        FUZZ_CHECK(!multipart_boundary("multipart/mixed; boundary=" + std::string(line)));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 6) return 0;
    static const MultipartLimits kLimits[] = {{}, {3, 64, 2}, {1, 200, 4}, {100, 1024, 1}};
    const MultipartLimits& limits = kLimits[data[0] % 4];
    size_t refuse = (data[0] & 0x10) ? (data[0] >> 5) : SIZE_MAX;
    bool refuse_in_data = (data[0] & 0x08) != 0;
    uint32_t seed;
    std::memcpy(&seed, data + 1, 4);
    std::string_view rest(reinterpret_cast<const char*>(data + 5), size - 5);
    size_t nl = rest.find('\n');
    if (nl == rest.npos) return 0;
    std::string_view boundary = rest.substr(0, nl), body = rest.substr(nl + 1);

    check_content_type(boundary);
    Run whole = parse(boundary, body, limits, refuse, refuse_in_data, seed, true);
    Run split = parse(boundary, body, limits, refuse, refuse_in_data, seed, false);

    FUZZ_CHECK(whole.status == split.status);
    FUZZ_CHECK(whole.error == split.error);
    FUZZ_CHECK(whole.parts == split.parts);
    if (!valid_boundary(boundary)) FUZZ_CHECK(whole.error == MultipartError::BadBoundary);
    FUZZ_CHECK(whole.parts.size() <= limits.max_parts);
    size_t total = 0;
    for (const Part& p : whole.parts) {
        total += p.data.size() + p.raw_headers.size();
        FUZZ_CHECK(p.header_count <= limits.max_headers_per_part);
        FUZZ_CHECK(p.raw_headers.size() + 2 <= limits.max_part_header_bytes);
        FUZZ_CHECK(p.data.find("\r\n--" + std::string(boundary)) == std::string::npos);
        if (whole.status == MultipartStatus::Done) FUZZ_CHECK(p.ended);
    }
    FUZZ_CHECK(total <= body.size());
    if (whole.status == MultipartStatus::Done) FUZZ_CHECK(body.find("--" + std::string(boundary) + "--") != body.npos);
    return 0;
}
