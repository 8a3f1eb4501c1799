// Fuzzes the request-head parser the way a connection drives it: parse a head, frame
// the body (Content-Length or the in-place chunked decoder), then parse the next
// pipelined request from the rest, until an error, a short read or a closing request.
// Invariants: consumed <= input, every view lies inside the head it came from, the
// framing facts are consistent, the Incomplete/Complete answers agree with the
// shorter prefixes a real connection would have seen first, and small limits only
// ever add a 414/431 refusal.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "http/chunked.hpp"
#include "http/parser.hpp"

using namespace kiln::http;

namespace {

bool inside(std::string_view v, std::string_view outer) {
    if (v.empty()) return true;
    return v.data() >= outer.data() && v.data() + v.size() <= outer.data() + outer.size();
}

void check_head(const RequestHead& h, std::string_view head) {
    FUZZ_CHECK(h.content_length >= -1);
    FUZZ_CHECK(!(h.chunked && h.content_length >= 0));
    FUZZ_CHECK(h.version_minor <= 1);
    FUZZ_CHECK(h.header_count <= kMaxHeaderCount);
    FUZZ_CHECK(!h.method_token.empty() && inside(h.method_token, head));
    FUZZ_CHECK(!h.target.empty() && inside(h.target, head));
    FUZZ_CHECK(inside(h.query, h.target));
    FUZZ_CHECK(inside(h.path, h.target) || h.path == "/");
    FUZZ_CHECK(inside(h.host, head));
    for (size_t i = 0; i < h.header_count; ++i) {
        FUZZ_CHECK(!h.headers[i].name.empty());
        FUZZ_CHECK(inside(h.headers[i].name, head));
        FUZZ_CHECK(inside(h.headers[i].value, head));
    }
    if (h.method != Method::Other) FUZZ_CHECK(method_name(h.method) == h.method_token);
    // The helpers later code asks of a head: find() gives the first field of a name (any
    // case); list_has_token() (Connection, Upgrade, TE lists) only finds a token that is
    // in the value, and finds each item of a plain comma list.
    for (size_t i = 0; i < h.header_count; ++i) {
        const Header* f = h.find(h.headers[i].name);
        FUZZ_CHECK(f != nullptr && f <= &h.headers[i] && iequals(f->name, h.headers[i].name));
        std::string_view v = h.headers[i].value;
        std::string lower(v);
        for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
        for (std::string_view token : {"close", "keep-alive", "upgrade", "websocket", "chunked", "h2c"}) {
            if (list_has_token(v, token)) FUZZ_CHECK(lower.find(token) != std::string::npos);
        }
        size_t comma = v.find(',');
        std::string_view first = v.substr(0, comma);
        bool plain = !first.empty() && first.find_first_of(" \t=;") == first.npos;
        if (plain) FUZZ_CHECK(list_has_token(v, first));
    }
}

// When head_may_be_complete says "not yet", the connection waits for more bytes
// without parsing: the head cannot be complete then, and no size limit may have been
// crossed (a client that stops there would get a timeout instead of its 414/431). A
// syntax error found before the line ends may wait: the parser sees it at the next '\n'.
void check_hint(std::string_view in, const ParseResult& whole, const Limits& limits) {
    RequestHead tmp;
    for (size_t hint : {in.size() - 1, in.size() / 2}) {
        if (hint == 0 || hint >= in.size()) continue;
        if (parse_request_head(in.substr(0, hint), tmp, limits).status != ParseStatus::Incomplete) continue;
        if (head_may_be_complete(in, hint, limits)) continue;
        FUZZ_CHECK(whole.status != ParseStatus::Complete);
        FUZZ_CHECK(status_for(whole.error) != 414 && status_for(whole.error) != 431);
    }
}

// What a connection sees before the whole input has arrived must agree with the
// answer for the whole input.
void check_prefixes(std::string_view in, const ParseResult& whole) {
    RequestHead tmp;
    if (whole.status == ParseStatus::Complete) {
        // The head alone is complete with the same length; one byte less is not.
        ParseResult r = parse_request_head(in.substr(0, whole.consumed), tmp);
        FUZZ_CHECK(r.status == ParseStatus::Complete && r.consumed == whole.consumed);
        r = parse_request_head(in.substr(0, whole.consumed - 1), tmp);
        FUZZ_CHECK(r.status == ParseStatus::Incomplete);
    }
    check_hint(in, whole, Limits{});
}

// The same head under small limits (as an operator may set them): the limits only ever
// turn an answer into a 414 or 431 refusal (or leave it waiting where the large
// limits would have refused it too); whatever they accept is what the defaults accept.
void check_small_limits(std::string_view in, const ParseResult& whole) {
    const Limits small{.max_request_line = 64, .max_header_bytes = 256, .max_header_count = 4};
    RequestHead h;
    ParseResult r = parse_request_head(in, h, small);
    FUZZ_CHECK(r.consumed <= in.size());
    if (r.status == ParseStatus::Complete) {
        FUZZ_CHECK(whole.status == ParseStatus::Complete && r.consumed == whole.consumed);
        size_t lead = 0;  // the empty lines skipped before the request line
        while (lead + 1 < in.size() && in[lead] == '\r' && in[lead + 1] == '\n') lead += 2;
        FUZZ_CHECK(r.consumed <= lead + small.max_request_line + 2 + small.max_header_bytes + 2);
        FUZZ_CHECK(h.header_count <= small.max_header_count);
        check_head(h, in.substr(0, r.consumed));
    } else if (r.status == ParseStatus::Error && whole.status != ParseStatus::Error) {
        int status = status_for(r.error);
        FUZZ_CHECK(status == 414 || status == 431);
    } else if (r.status == ParseStatus::Error) {
        int status = status_for(r.error);
        FUZZ_CHECK(r.error == whole.error || status == 414 || status == 431);
    } else {  // waiting: the defaults wait too, or refuse
        FUZZ_CHECK(whole.status != ParseStatus::Complete);
    }
    check_hint(in, r, small);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string buf(reinterpret_cast<const char*>(data), size);  // mutable: decoded in place
    const Limits limits;
    size_t pos = 0;
    for (int request = 0; pos < buf.size(); ++request) {
        std::string_view rest(buf.data() + pos, buf.size() - pos);
        RequestHead h;
        ParseResult r = parse_request_head(rest, h, limits);
        FUZZ_CHECK(r.consumed <= rest.size());
        if (request == 0) {
            check_prefixes(rest, r);
            check_small_limits(rest, r);
        }
        if (r.status != ParseStatus::Complete) {
            FUZZ_CHECK(r.consumed == 0);
            FUZZ_CHECK((r.status == ParseStatus::Error) == (r.error != ParseError::None));
            if (r.status == ParseStatus::Error) {
                int s = status_for(r.error);
                FUZZ_CHECK(s >= 400 && s <= 505);
                FUZZ_CHECK(!describe(r.error).empty());
            }
            return 0;
        }
        FUZZ_CHECK(r.error == ParseError::None && r.consumed > 0);
        check_head(h, rest.substr(0, r.consumed));
        pos += r.consumed;

        if (h.chunked) {
            ChunkedDecoder dec;
            size_t read = pos, write = pos;
            ChunkedStatus s = dec.decode(buf.data(), &read, &write, buf.size(), kMaxBodyBytes);
            FUZZ_CHECK(pos <= write && write <= read && read <= buf.size());
            FUZZ_CHECK(dec.body_size() == write - pos);
            FUZZ_CHECK(dec.body_size() <= kMaxBodyBytes);
            if (s != ChunkedStatus::Done) return 0;
            pos = read;
        } else if (h.content_length > 0) {
            if (static_cast<uint64_t>(h.content_length) > buf.size() - pos) return 0;
            pos += static_cast<size_t>(h.content_length);
        }
        if (!h.keep_alive || h.upgrade || h.method == Method::Connect) return 0;
    }
    return 0;
}
