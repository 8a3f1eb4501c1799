// Fuzzes who the client is behind trusted proxies (http::forwarded_client) and the
// node parser under it (http::parse_node). Byte 0 picks the peer and the trusted
// ranges; the rest is header lines split at '\n', each line's first byte picking the
// field (Forwarded, X-Forwarded-For in any case, or another) and the rest its value.
// - parse_node: what it accepts is an address that formats and parses back to the
//   same address, bracketed with its port too.
// - The client is the peer or an address read from one hop of the list the fields
//   make (Forwarded's for= values, or else every X-Forwarded-For line in order), and
//   that hop obeys the walk: every hop right of it parses and is trusted; it is
//   untrusted, or the leftmost, or the hop left of it does not parse.
// - What the client itself wrote never counts: when the result is not trusted,
//   putting any lines of the same field in front of the others changes nothing.
// - A proxy appending an untrusted address (written as XFF or Forwarded writes it)
//   makes exactly that address the client.
#include <arpa/inet.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "http/forwarded.hpp"

using namespace kiln::http;
using kiln::Header;
using kiln::net::AddressRange;
using kiln::net::PeerAddress;

namespace {

bool same_addr(const PeerAddress& a, const PeerAddress& b) {
    return a.family == b.family && std::memcmp(a.addr, b.addr, a.family == AF_INET ? 4 : 16) == 0;
}
bool same(const PeerAddress& a, const PeerAddress& b) { return same_addr(a, b) && a.port == b.port; }

std::string text_of(const PeerAddress& a) {
    char buf[64];
    return std::string(buf, a.format(buf, sizeof buf));
}

bool ieq(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
    return true;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool trusted_by(const std::vector<AddressRange>& trusted, const PeerAddress& a) {
    for (const AddressRange& r : trusted)
        if (r.contains(a)) return true;
    return false;
}

// The fuzzer's own reading of the hops (nearest last): Forwarded's for= values if
// there is a Forwarded field, else X-Forwarded-For's elements.
std::vector<std::string> hops_of(const std::vector<Header>& headers) {
    bool rfc = false;
    for (const Header& h : headers) rfc = rfc || ieq(h.name, "forwarded");
    std::vector<std::string> hops;
    for (const Header& h : headers) {
        if (!ieq(h.name, rfc ? "forwarded" : "x-forwarded-for")) continue;
        std::string_view v = h.value;
        while (!v.empty()) {
            size_t comma = v.find(',');
            std::string_view item = trim(v.substr(0, comma));
            v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
            if (!rfc) {
                hops.emplace_back(item);
                continue;
            }
            std::string value;  // the first for= pair of the element
            while (!item.empty()) {
                size_t semi = item.find(';');
                std::string_view pair = trim(item.substr(0, semi));
                item = semi == std::string_view::npos ? std::string_view() : item.substr(semi + 1);
                size_t eq = pair.find('=');
                if (eq != std::string_view::npos && ieq(trim(pair.substr(0, eq)), "for")) {
                    value = std::string(trim(pair.substr(eq + 1)));
                    break;
                }
            }
            hops.push_back(value);
        }
    }
    return hops;
}

void check_node(std::string_view text) {
    PeerAddress a;
    if (!parse_node(text, &a)) return;
    FUZZ_CHECK(a.family == AF_INET || a.family == AF_INET6);
    FUZZ_CHECK(text.size() <= 66);
    std::string s = text_of(a);
    PeerAddress b;
    FUZZ_CHECK(parse_node(s, &b) && same_addr(a, b) && b.port == 0);
    std::string with_port = (a.family == AF_INET6 ? "[" + s + "]" : s) + ":" + std::to_string(a.port);
    FUZZ_CHECK(parse_node("\"" + with_port + "\"", &b) && same(a, b));
}

const char* const kRanges[] = {"127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8", "192.0.2.0/24", "0.0.0.0/0"};
const char* const kPeers[] = {"127.0.0.1", "10.1.2.3", "::1", "fd00::5"};
const char* const kNames[] = {"Forwarded", "X-Forwarded-For", "forwarded", "X-FORWARDED-FOR", "X-Real-IP", "Host"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    check_node(in);
    if (size < 1) return 0;

    uint8_t cfg = data[0];
    std::vector<AddressRange> trusted;
    for (size_t i = 0; i < 6; ++i) {
        if (!(cfg & (1u << i))) continue;
        AddressRange r;
        FUZZ_CHECK(AddressRange::parse(kRanges[i], &r));
        trusted.push_back(r);
    }
    PeerAddress peer;
    const char* peer_text = kPeers[cfg >> 6];
    peer.family = std::strchr(peer_text, ':') ? AF_INET6 : AF_INET;
    FUZZ_CHECK(inet_pton(peer.family, peer_text, peer.addr) == 1);
    peer.port = 54321;

    std::vector<Header> headers;
    std::string_view rest = in.substr(1);
    while (!rest.empty() && headers.size() < 64) {
        size_t nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
        if (line.empty()) continue;
        headers.push_back({kNames[static_cast<uint8_t>(line[0]) % 6], line.substr(1)});
        check_node(line.substr(1));
    }

    // The field read: Forwarded if the input has one (as the harness's corpus was made),
    // else X-Forwarded-For. The other field never changes the answer.
    bool rfc = false;
    for (const Header& h : headers) rfc = rfc || ieq(h.name, "forwarded");
    const ForwardedField field = rfc ? ForwardedField::Forwarded : ForwardedField::XForwardedFor;
    PeerAddress client = forwarded_client(headers, peer, trusted, field);
    std::vector<std::string> hops = hops_of(headers);
    {
        std::vector<Header> only;
        for (const Header& h : headers)
            if (!ieq(h.name, rfc ? "x-forwarded-for" : "forwarded")) only.push_back(h);
        FUZZ_CHECK(same(forwarded_client(only, peer, trusted, field), client));
        const ForwardedField other = rfc ? ForwardedField::XForwardedFor : ForwardedField::Forwarded;
        std::vector<Header> other_only;
        for (const Header& h : headers)
            if (!ieq(h.name, rfc ? "forwarded" : "x-forwarded-for")) other_only.push_back(h);
        FUZZ_CHECK(same(forwarded_client(headers, peer, trusted, other), forwarded_client(other_only, peer, trusted, other)));
    }

    // Which hop the client came from, by the walk's rule.
    size_t from = hops.size();  // none: the peer
    for (size_t i = hops.size(); i-- > 0;) {
        PeerAddress a;
        if (!parse_node(hops[i], &a)) break;
        from = i;
        if (!trusted_by(trusted, a)) break;
    }
    if (from == hops.size()) {
        FUZZ_CHECK(same(client, peer));
    } else {
        PeerAddress a;
        FUZZ_CHECK(parse_node(hops[from], &a) && same(client, a));
        for (size_t j = from + 1; j < hops.size(); ++j) {
            PeerAddress b;
            FUZZ_CHECK(parse_node(hops[j], &b) && trusted_by(trusted, b));
        }
    }

    // Spoofing from the left: lines of the same field in front change nothing once the
    // client is an untrusted address (the line itself is this input's own text).
    if (from < hops.size() && !trusted_by(trusted, client)) {
        std::vector<Header> spoofed;
        spoofed.push_back({rfc ? "Forwarded" : "X-Forwarded-For", "for=6.6.6.6, 6.6.6.6, unknown"});
        spoofed.push_back({rfc ? "forwarded" : "x-forwarded-for", in.substr(1, 80)});
        spoofed.insert(spoofed.end(), headers.begin(), headers.end());
        FUZZ_CHECK(same(forwarded_client(spoofed, peer, trusted, field), client));
    }

    // A trusted proxy appending an untrusted address: that address is the client.
    PeerAddress outsider;
    outsider.family = (cfg & 1) ? AF_INET6 : AF_INET;
    FUZZ_CHECK(inet_pton(outsider.family, (cfg & 1) ? "2001:db8::1" : "203.0.113.9", outsider.addr) == 1);
    if (!trusted_by(trusted, outsider)) {
        std::vector<Header> appended = headers;
        std::string hop = rfc ? "for=\"[2001:db8::1]:4711\"" : text_of(outsider);
        if (rfc && outsider.family == AF_INET) hop = "for=\"203.0.113.9:4711\"";
        appended.push_back({rfc ? "Forwarded" : "X-Forwarded-For", hop});
        PeerAddress got = forwarded_client(appended, peer, trusted, field);
        FUZZ_CHECK(same_addr(got, outsider));
        FUZZ_CHECK(got.port == (rfc ? 4711 : 0));
    }
    return 0;
}
