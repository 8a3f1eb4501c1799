// Fuzzes the session record format (app::SessionRecord::write / read: what a store hands
// back from memory every worker process writes) and the cookie's id (parse_session_id).
// deserialize accepts exactly what a reference reader written here accepts (kind 1-3,
// 2-byte key and 4-byte value lengths, little-endian, integers of 8 bytes, nothing left
// over); then serialize gives the input back byte for byte, and a vector holding old
// entries (a reused Request) parses to the same entries. Entries made from the input
// round-trip through a record. An id is exactly 32 lower-case hex digits.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/app.hpp>
#include <kiln/response.hpp>
#include <kiln/session.hpp>

#include "app/session_record.hpp"
#include "fuzz_check.hpp"

using Record = kiln::app::SessionRecord;

// session.cpp sets and clears its cookie through Response, whose cookie code lives in
// the app layer (not built here). The record format never gets there: if a change
// makes it, these say so.
kiln::Response& kiln::Response::cookie(std::string_view, std::string_view, const CookieOptions&) {
    FUZZ_CHECK(!"Response::cookie reached from the session record code");
    std::abort();
}
kiln::Response& kiln::Response::clear_cookie(std::string_view, const CookieOptions&) {
    FUZZ_CHECK(!"Response::clear_cookie reached from the session record code");
    std::abort();
}
// Session::begin answers 503 (an HttpError, app.cpp) when a remote store failed to
// load; the record code never gets there either.
kiln::HttpError::HttpError(int status, const std::string& message) : std::runtime_error(message), status_(status) {
    FUZZ_CHECK(!"HttpError raised from the session record code");
}

namespace {

uint64_t le(std::string_view s, size_t at, size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) v |= uint64_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
    return v;
}

// The format as the header and session.cpp describe it; returns the entry count or -1.
long reference_count(std::string_view s) {
    long n = 0;
    size_t at = 0;
    while (at < s.size()) {
        if (s.size() - at < 7) return -1;
        uint8_t kind = static_cast<uint8_t>(s[at]);
        uint64_t klen = le(s, at + 1, 2), vlen = le(s, at + 3, 4);
        if (kind < 1 || kind > 3) return -1;
        if (kind == 2 && vlen != 8) return -1;
        if (s.size() - at - 7 < klen + vlen) return -1;
        at += 7 + klen + vlen;
        ++n;
    }
    return n;
}

bool same(const std::vector<Record::Entry>& a, const std::vector<Record::Entry>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].key != b[i].key || a[i].kind != b[i].kind || a[i].value != b[i].value) return false;
    return true;
}

void check_parse(std::string_view in) {
    std::vector<Record::Entry> fresh;
    bool ok = Record::read(in, fresh);
    long expected = reference_count(in);
    FUZZ_CHECK(ok == (expected >= 0));
    if (!ok) return;
    FUZZ_CHECK(fresh.size() == static_cast<size_t>(expected));
    for (const Record::Entry& e : fresh) {
        FUZZ_CHECK(e.kind == Record::Kind::String || e.kind == Record::Kind::Int || e.kind == Record::Kind::Blob);
        if (e.kind == Record::Kind::Int) FUZZ_CHECK(e.value.size() == 8);
    }
    std::string out = "stale bytes the serializer must clear";
    Record::write(fresh, out);
    FUZZ_CHECK(out == in);

    // Reuse: more, fewer and differently shaped entries already in the vector.
    std::vector<Record::Entry> reused(in.size() % 5, {std::string(300, 'k'), Record::Kind::Int, "old"});
    FUZZ_CHECK(Record::read(in, reused));
    FUZZ_CHECK(same(reused, fresh));
}

// Entries from the input: per entry a kind byte and a length byte, then key and value
// bytes; an integer always takes 8 value bytes (zero-padded), as set_int writes it.
void check_build(std::string_view in) {
    std::vector<Record::Entry> entries;
    while (in.size() >= 2) {
        auto kind = static_cast<Record::Kind>(static_cast<uint8_t>(in[0]) % 3 + 1);
        size_t klen = static_cast<uint8_t>(in[1]) & 0x0f, vlen = static_cast<uint8_t>(in[1]) >> 4;
        in.remove_prefix(2);
        std::string key(in.substr(0, klen));
        in.remove_prefix(key.size());
        std::string value(in.substr(0, kind == Record::Kind::Int ? 8 : vlen));
        in.remove_prefix(value.size());
        if (kind == Record::Kind::Int) value.resize(8, '\0');
        entries.push_back({std::move(key), kind, std::move(value)});
    }
    std::string record;
    Record::write(entries, record);
    std::vector<Record::Entry> back;
    FUZZ_CHECK(Record::read(record, back));
    FUZZ_CHECK(same(back, entries));
}

// The session cookie's value: an id is exactly 32 lower-case hex digits, read back
// to the same text.
void check_id(std::string_view text) {
    kiln::SessionId id;
    bool ok = kiln::parse_session_id(text, id);
    bool hex = text.size() == 32;
    for (char c : text) hex &= (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    FUZZ_CHECK(ok == hex);
    if (!ok) return;
    std::string back;
    for (uint8_t b : id) {
        back += "0123456789abcdef"[b >> 4];
        back += "0123456789abcdef"[b & 15];
    }
    FUZZ_CHECK(back == text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    check_parse(in);
    check_build(in);
    check_id(in);
    return 0;
}
