"""Behind a balancer or proxies: who the client is (GET /client answers
"<req.client_address()> <http|https>").

A listener marked "ADDR proxy_protocol" (here added with --listen) must get a PROXY
protocol v1 or v2 header first: its source becomes the client (also for the access log,
limits.rate and limits.max_connections_per_address), a v2 SSL TLV makes the request
secure, a LOCAL command keeps the TCP peer, and a connection without a valid header is
closed without a word. The server's ordinary port treats PROXY text as a bad request.

With --trusted-proxies, and only for a TCP peer inside those ranges, Forwarded (for=)
or X-Forwarded-For name the client (walked from the nearest hop, trusted hops skipped,
what the client wrote further left ignored) and X-Forwarded-Proto: https makes the
request secure; a server that trusts no proxy ignores all three."""

import os
import re
import socket
import struct
import tempfile
import time

import harness
from harness import build_request

V2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"
CLIENT = build_request("GET", "/client")
COMBINED = re.compile(r'^(\S+) - - \[[^\]]+\] "([^"]*)" (\d{3}) (\d+) "[^"]*" "[^"]*" \d+\.\d{6}$')


def v1(src, dst=None, sport=56324, dport=443, proto=None):
    proto = proto or ("TCP6" if ":" in src else "TCP4")
    dst = dst or ("2001:db8::80" if ":" in src else "198.51.100.1")
    return ("PROXY %s %s %s %d %d\r\n" % (proto, src, dst, sport, dport)).encode()


def tlv(kind, value):
    return bytes([kind]) + struct.pack(">H", len(value)) + value


def v2(src=None, dst=None, sport=40000, dport=443, ssl=None, local=False, tlvs=b""):
    """A v2 header: PROXY (or LOCAL) over TCP from src; ssl=True adds PP2_TYPE_SSL with
    PP2_CLIENT_SSL set, ssl=False the same TLV with the bit clear."""
    if src is None:
        fam, block = 0x00, b""
    else:
        family = socket.AF_INET6 if ":" in src else socket.AF_INET
        dst = dst or ("2001:db8::80" if family == socket.AF_INET6 else "10.0.0.1")
        fam = 0x21 if family == socket.AF_INET6 else 0x11
        block = (socket.inet_pton(family, src) + socket.inet_pton(family, dst) + struct.pack(">HH", sport, dport))
    if ssl is not None:
        tlvs += tlv(0x20, bytes([0x01 if ssl else 0x00]) + b"\x00\x00\x00\x00" + tlv(0x21, b"TLSv1.3"))
    body = block + tlvs
    return V2_SIG + bytes([0x20 if local else 0x21, fam]) + struct.pack(">H", len(body)) + body


def wait_lines(path, n, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                lines = f.read().splitlines()
            if len(lines) >= n:
                return lines
        time.sleep(0.05)
    raise AssertionError("fewer than %d lines in %s after %.1f s" % (n, path, timeout))


class ProxyServerCase(harness.ServerTestCase):
    """A server with an extra "127.0.0.1:P2 proxy_protocol" listener."""

    more_args = ()

    @classmethod
    def setUpClass(cls):
        cls.proxy_port = harness.free_port()
        cls.server_args = ("--listen", "127.0.0.1:%d proxy_protocol" % cls.proxy_port) + tuple(cls.more_args)
        super().setUpClass()

    def proxied(self, **kw):
        return harness.RawConnection(self.proxy_port, **kw)

    def client_via(self, header, request=CLIENT):
        """One request after `header` on a fresh connection to the proxy port: the body."""
        with self.proxied() as c:
            c.send(header + request)
            r = c.read_response()
            self.assertEqual(r.status, 200, r)
            return r.body.decode()


# --------------------------------------------------------------------------------------
# (a) the proxy_protocol listener


class ProxyProtocolListener(ProxyServerCase):

    def test_v1_header_names_the_client(self):
        self.assertEqual(self.client_via(v1("192.0.2.10")), "192.0.2.10 http")
        self.assertEqual(self.client_via(v1("2001:db8::1", "2001:db8::2")), "2001:db8::1 http")

    def test_v1_unknown_keeps_the_tcp_peer(self):
        self.assertEqual(self.client_via(b"PROXY UNKNOWN\r\n"), "127.0.0.1 http")

    def test_v2_header_names_the_client(self):
        self.assertEqual(self.client_via(v2("203.0.113.7")), "203.0.113.7 http")
        self.assertEqual(self.client_via(v2("2001:db8::7")), "2001:db8::7 http")

    def test_v2_ssl_tlv_makes_the_request_secure(self):
        self.assertEqual(self.client_via(v2("203.0.113.8", ssl=True)), "203.0.113.8 https")
        # Behind other TLVs (ALPN, authority) too; the bit clear means plain HTTP.
        self.assertEqual(self.client_via(v2("203.0.113.8", tlvs=tlv(0x01, b"h2") + tlv(0x02, b"example.com"),
                                            ssl=True)), "203.0.113.8 https")
        self.assertEqual(self.client_via(v2("203.0.113.8", ssl=False)), "203.0.113.8 http")
        # ...and secure() also holds for the next request on that connection.
        with self.proxied() as c:
            c.send(v2("203.0.113.8", ssl=True) + CLIENT)
            self.assertEqual(c.read_response().body, b"203.0.113.8 https")
            self.assertEqual(c.request("GET", "/client").body, b"203.0.113.8 https")

    def test_v2_local_keeps_the_tcp_peer(self):
        self.assertEqual(self.client_via(v2(local=True)), "127.0.0.1 http")
        # LOCAL's addresses and TLVs are ignored.
        self.assertEqual(self.client_via(v2("6.6.6.6", local=True, ssl=True)), "127.0.0.1 http")

    def test_no_header_closes_without_a_response(self):
        with self.proxied() as c:
            c.send(CLIENT, tolerate_close=True)
            c.assert_closed(self, timeout=5, msg="after a request without a PROXY header")
        self.assertTrue(self.server.alive())

    def test_invalid_headers_close_without_a_response(self):
        for bad in (b"PROXY TCP4 192.0.2.10 198.51.100.1 65536 443\r\n",   # port out of range
                    b"PROXY TCP4 2001:db8::1 198.51.100.1 1 2\r\n",        # IPv6 on TCP4
                    b"PROXY TCP4 192.0.2.10\n",                             # LF alone
                    b"PROXY UNKNOWN " + b"a" * 100 + b"\r\n",               # longer than 107 bytes
                    V2_SIG + b"\x11\x11\x00\x0c" + b"\x00" * 12,           # v2 header with version 1
                    V2_SIG + b"\x22\x11\x00\x0c" + b"\x00" * 12,           # command 2
                    b"\x16\x03\x01\x00\x05hello"):                          # TLS instead
            with self.subTest(header=bad), self.proxied() as c:
                c.send(bad + CLIENT, tolerate_close=True)
                c.assert_closed(self, timeout=5, msg="after %r" % bad)

    def test_header_split_across_writes(self):
        for header, want in ((v1("192.0.2.10"), "192.0.2.10 http"),
                             (v2("203.0.113.8", ssl=True), "203.0.113.8 https")):
            with self.subTest(header=header), self.proxied(nodelay=True) as c:
                # Cut inside "PROXY " / the v2 signature, then inside the addresses.
                c.send_in_pieces(header + CLIENT, [3, 20], pause=0.15)
                self.assertEqual(c.read_response().body, want.encode())
            with self.subTest(header=header, pieces="byte by byte"), self.proxied(nodelay=True) as c:
                c.send_in_pieces(header + CLIENT, range(1, len(header) + 1), pause=0.005)
                self.assertEqual(c.read_response().body, want.encode())

    def test_two_pipelined_requests_after_one_header(self):
        with self.proxied() as c:
            c.send(v1("192.0.2.10") + CLIENT + CLIENT)
            r1, r2 = c.read_response(), c.read_response()
            self.assertEqual((r1.body, r2.body), (b"192.0.2.10 http", b"192.0.2.10 http"))
            # And a third, later, on the same connection.
            self.assertEqual(c.request("GET", "/client").body, b"192.0.2.10 http")
            c.assert_open(self)

    def test_a_second_header_on_the_connection_is_not_a_header(self):
        # Only the first bytes of a connection may be a PROXY header: one after it is
        # an (invalid) request, not a new client.
        with self.proxied() as c:
            c.send(v1("192.0.2.10") + CLIENT)
            self.assertEqual(c.read_response().body, b"192.0.2.10 http")
            c.send(v1("6.6.6.6") + CLIENT, tolerate_close=True)
            self.assertEqual(c.read_response().status, 400)

    def test_plain_port_ignores_proxy_text(self):
        with self.connect() as c:
            c.send(v1("192.0.2.10") + CLIENT, tolerate_close=True)
            self.assertEqual(c.read_response().status, 400)
        with self.connect() as c:
            c.send(v2("203.0.113.8", ssl=True) + CLIENT, tolerate_close=True)
            self.assertEqual(c.read_response().status, 400)
        # And a plain request there is served as the TCP peer.
        self.assertEqual(self.get("/client").body, b"127.0.0.1 http")


class ProxyHeaderTimeout(ProxyServerCase):
    """A balancer (or anyone) that connects to the proxy port and sends no header, or
    only part of one, is bounded by the header timeout like a slow request head."""

    more_args = ("--header-timeout", "300", "--keepalive-timeout", "300")

    def test_missing_or_partial_header_is_timed_out(self):
        for sent in (b"", b"PROXY TCP4 192.0.2", V2_SIG + b"\x21\x11\x00\x0c\xc0\x00",
                     V2_SIG + b"\x21\x11\xff\xff" + b"\x00" * 100):
            with self.subTest(sent=sent), self.proxied() as c:
                if sent:
                    c.send(sent)
                start = time.monotonic()
                closed, extra, _ = c.wait_closed(timeout=5)
                elapsed = time.monotonic() - start
                self.assertTrue(closed, "still open after %.2f s" % elapsed)
                self.assertTrue(0.2 <= elapsed <= 3.0, "closed after %.2f s" % elapsed)
                self.assertTrue(extra == b"" or extra.startswith(b"HTTP/1.1 408 "), extra[:200])


# --------------------------------------------------------------------------------------
# (b) trusted proxies: Forwarded / X-Forwarded-For / X-Forwarded-Proto


class TrustedLoopback(harness.ServerTestCase):
    server_args = ("--trusted-proxies", "127.0.0.1")

    def client(self, headers, source=None):
        with harness.RawConnection(self.port, source=source) as c:
            r = c.request("GET", "/client", headers)
            self.assertEqual(r.status, 200, r)
            return r.body.decode()

    def test_xff_leftmost_spoof_is_ignored(self):
        self.assertEqual(self.client([("X-Forwarded-For", "6.6.6.6, 203.0.113.9")]), "203.0.113.9 http")
        self.assertEqual(self.client([("X-Forwarded-For", "203.0.113.9")]), "203.0.113.9 http")

    def test_two_xff_lines_are_one_list(self):
        self.assertEqual(self.client([("X-Forwarded-For", "6.6.6.6"), ("X-Forwarded-For", "203.0.113.9")]),
                         "203.0.113.9 http")
        self.assertEqual(self.client([("X-Forwarded-For", "203.0.113.9"), ("x-forwarded-for", "198.51.100.3")]),
                         "198.51.100.3 http")

    def test_a_clients_own_forwarded_is_ignored(self):
        # The proxy (nginx's $proxy_add_x_forwarded_for, HAProxy's option forwardfor)
        # writes X-Forwarded-For and passes the client's own Forwarded through: read,
        # it let any client choose its address (rate limits, log-in throttling, logs).
        self.assertEqual(self.client([("X-Forwarded-For", "198.51.100.7"), ("Forwarded", "for=203.0.113.9")]),
                         "198.51.100.7 http")
        self.assertEqual(self.client([("Forwarded", "for=203.0.113.9")]), "127.0.0.1 http")
        self.assertEqual(self.client([("Forwarded", "for=unknown"), ("X-Forwarded-For", "198.51.100.7")]),
                         "198.51.100.7 http")

    def test_unknown_keeps_the_peer(self):
        self.assertEqual(self.client([("X-Forwarded-For", "203.0.113.9, unknown")]), "127.0.0.1 http")

    def test_x_forwarded_proto_is_the_nearest_proxys(self):
        self.assertEqual(self.client([("X-Forwarded-Proto", "https")]), "127.0.0.1 https")
        self.assertEqual(self.client([("X-Forwarded-For", "203.0.113.9"), ("X-Forwarded-Proto", "https")]),
                         "203.0.113.9 https")
        self.assertEqual(self.client([("X-Forwarded-Proto", "http")]), "127.0.0.1 http")
        # A client's own value in front of the proxy's (a proxy that appends) is not it.
        self.assertEqual(self.client([("X-Forwarded-Proto", "https, http")]), "127.0.0.1 http")
        self.assertEqual(self.client([("X-Forwarded-Proto", "https"), ("X-Forwarded-Proto", "http")]),
                         "127.0.0.1 http")
        self.assertEqual(self.client([("X-Forwarded-Proto", "http, https")]), "127.0.0.1 https")

    def test_each_request_names_its_own_client(self):
        # Per request, not per connection: a request without the fields is the peer again.
        with self.connect() as c:
            self.assertEqual(c.request("GET", "/client", [("X-Forwarded-For", "203.0.113.9"),
                                                          ("X-Forwarded-Proto", "https")]).body,
                             b"203.0.113.9 https")
            self.assertEqual(c.request("GET", "/client").body, b"127.0.0.1 http")
            self.assertEqual(c.request("GET", "/client", [("X-Forwarded-For", "198.51.100.4")]).body,
                             b"198.51.100.4 http")

    def test_an_untrusted_peer_is_not_believed(self):
        # 127.0.0.2 is not in the trusted ranges: its fields are claims.
        headers = [("X-Forwarded-For", "203.0.113.9"), ("Forwarded", "for=198.51.100.7"),
                   ("X-Forwarded-Proto", "https")]
        self.assertEqual(self.client(headers, source="127.0.0.2"), "127.0.0.2 http")


class TrustedLoopbackForwarded(harness.ServerTestCase):
    """server.forwarded_header = "forwarded": RFC 7239's field names the client, and a
    client's own X-Forwarded-For is ignored."""
    server_args = ("--trusted-proxies", "127.0.0.1,10.0.0.0/8", "--forwarded-header", "forwarded")

    def client(self, headers):
        r = self.get("/client", headers)
        self.assertEqual(r.status, 200, r)
        return r.body.decode()

    def test_forwarded_names_the_client(self):
        self.assertEqual(self.client([("Forwarded", 'for="[2001:db8::1]:4711"')]), "2001:db8::1 http")
        self.assertEqual(self.client([("Forwarded", 'for=6.6.6.6, for="[2001:db8::1]:4711";proto=https')]),
                         "2001:db8::1 http")
        self.assertEqual(self.client([("Forwarded", "for=6.6.6.6, for=203.0.113.9, for=10.1.2.3")]),
                         "203.0.113.9 http")
        self.assertEqual(self.client([("Forwarded", "for=203.0.113.9, for=_hidden")]), "127.0.0.1 http")

    def test_a_clients_own_x_forwarded_for_is_ignored(self):
        self.assertEqual(self.client([("X-Forwarded-For", "198.51.100.7")]), "127.0.0.1 http")
        self.assertEqual(self.client([("X-Forwarded-For", "198.51.100.7"), ("Forwarded", "for=203.0.113.9")]),
                         "203.0.113.9 http")


class RateBehindTrustedProxies(harness.ServerTestCase):
    """limits.rate counts the client a trusted proxy names in X-Forwarded-For or
    Forwarded: one client exhausting its budget leaves another behind the same proxy
    alone. An untrusted peer is charged itself whatever it claims, so a new claim
    each request buys it nothing."""

    server_args = ("--trusted-proxies", "127.0.0.1", "--workers", "2")
    server_env = {"KILN_LIMITS_RATE": "4", "KILN_LIMITS_RATE_BURST": "4"}

    def burst(self, headers_of, source=None, n=12):
        statuses = []
        for i in range(n):
            with harness.RawConnection(self.port, source=source) as c:
                c.send(build_request("GET", "/client", headers_of(i)))
                r = c.read_response()
                statuses.append(r.status)
                if r.status == 429:
                    self.assertTrue(r.header("Retry-After"), r)
                    self.assertTrue(c.wait_closed(timeout=5)[0], "a refused request's connection stays open")
                else:
                    self.assertEqual(r.status, 200, r)
        return statuses

    def test_the_forwarded_client_is_counted_and_claims_buy_nothing(self):
        time.sleep(1.1)  # every bucket full
        statuses = self.burst(lambda i: [("X-Forwarded-For", "203.0.113.9")])
        self.assertIn(429, statuses, "12 requests in a burst of 4 at 4/s were all served: %r" % statuses)
        self.assertGreaterEqual(statuses.count(200), 4, statuses)
        # Another client behind the same proxy, by either field: its own budget.
        for headers in ([("X-Forwarded-For", "198.51.100.2")], [("Forwarded", "for=198.51.100.3")]):
            with harness.RawConnection(self.port) as c:
                r = c.request("GET", "/client", headers)
                self.assertEqual(r.status, 200, r)
        # An untrusted peer naming a new client each time is still one client.
        statuses = self.burst(lambda i: [("X-Forwarded-For", "198.51.100.%d" % (10 + i))], source="127.0.0.2")
        self.assertIn(429, statuses, "an untrusted peer's claims gave it new budgets: %r" % statuses)

    def test_an_ipv6_client_is_counted_by_its_64(self):
        time.sleep(1.1)  # every bucket full
        statuses = self.burst(lambda i: [("X-Forwarded-For", "2001:db8:7:7::%x" % (i + 1))])
        self.assertIn(429, statuses, "a new address of one /64 each request bought new budgets: %r" % statuses)
        with harness.RawConnection(self.port) as c:  # the next /64: a budget of its own
            r = c.request("GET", "/client", [("X-Forwarded-For", "2001:db8:7:8::1")])
            self.assertEqual(r.status, 200, r)


class TrustedChain(harness.ServerTestCase):
    server_args = ("--trusted-proxies", "127.0.0.1,10.0.0.0/8")

    def client(self, headers):
        r = self.get("/client", headers)
        self.assertEqual(r.status, 200, r)
        return r.body.decode()

    def test_trusted_hops_are_skipped(self):
        self.assertEqual(self.client([("X-Forwarded-For", "6.6.6.6, 203.0.113.9, 10.1.2.3")]), "203.0.113.9 http")
        self.assertEqual(self.client([("X-Forwarded-For", "6.6.6.6, 203.0.113.9"), ("X-Forwarded-For", "10.1.2.3")]),
                         "203.0.113.9 http")

    def test_all_trusted_chain_gives_the_leftmost(self):
        self.assertEqual(self.client([("X-Forwarded-For", "10.0.0.1, 10.0.0.2")]), "10.0.0.1 http")


class TrustedProxiesFromConfig(harness.ServerTestCase):
    """server.trusted_proxies in a config file (its other name proxy.trusted is covered
    by test_sessions.py)."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.addClassCleanup(cls.dir.cleanup)
        path = os.path.join(cls.dir.name, "kiln.toml")
        with open(path, "w") as f:
            f.write('[server]\ntrusted_proxies = ["127.0.0.1", "10.0.0.0/8"]\n')
        cls.server_args = ("--config", path)
        super().setUpClass()

    def test_config_key_trusts_the_ranges(self):
        self.assertEqual(self.get("/client", [("X-Forwarded-For", "6.6.6.6, 203.0.113.9, 10.1.2.3")]).body,
                         b"203.0.113.9 http")


# --------------------------------------------------------------------------------------
# (c) no trusted proxies: the fields are ignored


class Untrusted(ProxyServerCase):

    def test_forwarding_fields_are_ignored(self):
        for headers in ([("X-Forwarded-For", "203.0.113.9")],
                        [("Forwarded", 'for="[2001:db8::1]:4711";proto=https')],
                        [("X-Forwarded-Proto", "https")],
                        [("X-Forwarded-For", "203.0.113.9"), ("Forwarded", "for=198.51.100.7"),
                         ("X-Forwarded-Proto", "https")]):
            with self.subTest(headers=headers):
                self.assertEqual(self.get("/client", headers).body, b"127.0.0.1 http")

    def test_behind_a_proxy_protocol_header_too(self):
        # The PROXY header names the client; the request's own fields still prove nothing.
        headers = [("X-Forwarded-For", "6.6.6.6"), ("X-Forwarded-Proto", "https")]
        self.assertEqual(self.client_via(v1("192.0.2.10"), build_request("GET", "/client", headers)),
                         "192.0.2.10 http")


class ProxyProtocolAndTrustedProxies(ProxyServerCase):
    """Both at once: a layer-4 balancer (127.0.0.1, trusted) sends a PROXY header and
    passes the client's bytes through untouched. The header's source is the peer now;
    forwarding fields count only when that peer is itself a trusted proxy."""

    more_args = ("--trusted-proxies", "127.0.0.1,10.0.0.0/8")

    def test_fields_from_a_trusted_source_count(self):
        # 10.0.0.5 is a trusted layer-7 proxy behind the balancer: it wrote the fields.
        headers = [("X-Forwarded-For", "6.6.6.6, 203.0.113.9"), ("X-Forwarded-Proto", "https")]
        self.assertEqual(self.client_via(v1("10.0.0.5"), build_request("GET", "/client", headers)),
                         "203.0.113.9 https")

    def test_fields_of_a_client_the_balancer_cannot_name_are_claims(self):
        # PROXY UNKNOWN (v1), UNSPEC (v2): the balancer, trusted, forwards a client it
        # cannot name, byte for byte. Before, the balancer's trust stayed with the
        # connection and the client's own fields were believed.
        headers = [("X-Forwarded-For", "6.6.6.6"), ("X-Forwarded-Proto", "https")]
        for header in (b"PROXY UNKNOWN\r\n", v2()):
            with self.subTest(header=header):
                self.assertEqual(self.client_via(header, build_request("GET", "/client", headers)), "127.0.0.1 http")
        # LOCAL is the balancer's own connection: its fields still count.
        self.assertEqual(self.client_via(v2(local=True), build_request("GET", "/client", headers)),
                         "6.6.6.6 https")

    def test_fields_from_an_untrusted_source_are_claims(self):
        # 192.0.2.10 is the client itself (not a proxy): what it writes proves nothing.
        for headers in ([("X-Forwarded-For", "6.6.6.6")], [("Forwarded", "for=6.6.6.6")],
                        [("X-Forwarded-Proto", "https")]):
            with self.subTest(headers=headers):
                self.assertEqual(self.client_via(v1("192.0.2.10"), build_request("GET", "/client", headers)),
                                 "192.0.2.10 http")


# --------------------------------------------------------------------------------------
# (d) the access log


class AccessLog(ProxyServerCase):

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.addClassCleanup(cls.dir.cleanup)
        cls.log_path = os.path.join(cls.dir.name, "access.log")
        cls.more_args = ("--workers", "1", "--access-log", cls.log_path, "--trusted-proxies", "127.0.0.1")
        super().setUpClass()

    def test_the_log_names_the_proxy_source(self):
        self.assertEqual(self.client_via(v1("192.0.2.10"), build_request("GET", "/client?n=1")),
                         "192.0.2.10 http")
        self.assertEqual(self.client_via(v2("2001:db8::7", ssl=True), build_request("GET", "/client?n=2")),
                         "2001:db8::7 https")
        self.assertEqual(self.client_via(v2(local=True), build_request("GET", "/client?n=3")), "127.0.0.1 http")
        # From a trusted proxy on the plain port: the X-Forwarded-For client.
        self.assertEqual(self.get("/client?n=4", [("X-Forwarded-For", "6.6.6.6, 203.0.113.9")]).body,
                         b"203.0.113.9 http")
        # An error answered before any handler still logs the PROXY source.
        with self.proxied() as c:
            c.send(v1("192.0.2.11") + b"GET /client?n=5 HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", tolerate_close=True)
            self.assertEqual(c.read_response().status, 400)
        lines = wait_lines(self.log_path, 5)
        by_n = {}
        for line in lines:
            m = COMBINED.match(line)
            self.assertTrue(m, line)
            q = re.search(r"n=(\d)", m.group(2))
            if q:
                by_n[q.group(1)] = (m.group(1), m.group(3))
            elif m.group(2) == "-":  # the bad request has no request line to log
                by_n["5"] = (m.group(1), m.group(3))
        self.assertEqual(by_n.get("1"), ("192.0.2.10", "200"), lines)
        self.assertEqual(by_n.get("2"), ("2001:db8::7", "200"), lines)
        self.assertEqual(by_n.get("3"), ("127.0.0.1", "200"), lines)
        self.assertEqual(by_n.get("4"), ("203.0.113.9", "200"), lines)
        self.assertEqual(by_n.get("5"), ("192.0.2.11", "400"), lines)


# --------------------------------------------------------------------------------------
# (e) limits per PROXY source


class RatePerProxySource(ProxyServerCase):
    """limits.rate counts the PROXY header's source, not the balancer's address: one
    source exhausting its budget leaves another source (and the balancer's own plain
    requests) alone."""

    more_args = ("--workers", "2")
    # 1 a second: a refusal lasts up to a second, longer than the checks after the burst.
    server_env = {"KILN_LIMITS_RATE": "1", "KILN_LIMITS_RATE_BURST": "4"}

    def get_as(self, src):
        with self.proxied() as c:
            c.send(v1(src) + CLIENT)
            r = c.read_response()
            closed = r.status != 429 or c.wait_closed(timeout=5)[0]
            return r, closed

    def test_one_source_exhausted_another_served(self):
        time.sleep(1.1)  # every bucket full
        statuses = []
        for _ in range(12):
            r, closed = self.get_as("198.51.100.1")
            statuses.append(r.status)
            if r.status == 200:
                self.assertEqual(r.body, b"198.51.100.1 http")
            else:
                self.assertEqual(r.status, 429, r)
                self.assertTrue(closed, "a refused request's connection stays open")
        self.assertIn(429, statuses, "12 requests in a burst of 4 at 1/s were all served: %r" % statuses)
        self.assertGreaterEqual(statuses.count(200), 4, statuses)
        # Still refused right after the burst.
        self.assertEqual(self.get_as("198.51.100.1")[0].status, 429)
        # Another source through the same balancer (same TCP peer): its own budget.
        r, _ = self.get_as("198.51.100.2")
        self.assertEqual((r.status, r.body), (200, b"198.51.100.2 http"))
        r, _ = self.get_as("2001:db8::99")
        self.assertEqual((r.status, r.body), (200, b"2001:db8::99 http"))
        # The balancer's own address was not charged either.
        self.assertEqual(self.get("/client").status, 200)


class ConnectionsPerProxySource(ProxyServerCase):
    """limits.max_connections_per_address counts a proxied connection as its PROXY
    source: three sources through one balancer address are all served with a limit of
    two, while a third connection from one source is not."""

    more_args = ("--workers", "0")
    server_env = {"KILN_LIMITS_MAX_CONNECTIONS_PER_ADDRESS": "2"}

    def open_as(self, src):
        c = self.proxied()
        c.send(v1(src) + CLIENT)
        r = c.read_response()
        self.assertEqual((r.status, r.body), (200, ("%s http" % src).encode()))
        return c

    def test_counted_per_source_not_per_balancer(self):
        time.sleep(0.3)  # the harness's start-up probe has been closed and uncounted
        held = [self.open_as("198.51.100.1"), self.open_as("198.51.100.2"), self.open_as("198.51.100.3"),
                self.open_as("198.51.100.1")]
        try:
            # A third connection from 198.51.100.1 is over its limit: told so as at
            # accept (503, Retry-After, a log line naming the setting), not served.
            with self.proxied() as c:
                c.send(v1("198.51.100.1") + CLIENT, tolerate_close=True)
                r = c.read_response()
                self.assertEqual(r.status, 503)
                self.assertEqual(r.body, b"Service Unavailable: too many connections from your address\n")
                self.assertEqual(r.header("Retry-After"), "1")
                self.assertTrue(c.wait_closed(timeout=5)[0], "a third connection from one source stays open")
            self.assertTrue(self.server.wait_for_output(r"limits\.max_connections_per_address = 2", timeout=3),
                            self.server.output())
            # The held ones still work.
            for c in held:
                self.assertEqual(c.request("GET", "/client").status, 200)
        finally:
            for c in held:
                c.close()
        time.sleep(0.3)
        self.open_as("198.51.100.1").close()  # room again

    def test_connections_waiting_for_their_header_are_not_the_balancers(self):
        # A burst from the balancer: many connections accepted before any header is
        # read. Counted at accept as the balancer (127.0.0.1), the third was refused
        # with a 503 meant for one client's excess.
        time.sleep(0.3)
        waiting = [self.proxied() for _ in range(5)]
        try:
            time.sleep(0.3)  # all accepted, none has sent its header
            for i, c in enumerate(waiting):
                c.send(v1("198.51.100.%d" % (20 + i)) + CLIENT)
                r = c.read_response()
                self.assertEqual((r.status, r.body), (200, ("198.51.100.%d http" % (20 + i)).encode()), i)
        finally:
            for c in waiting:
                c.close()


class RefusedProxySourcesHoldNoPlace(ProxyServerCase):
    """A connection refused for its PROXY source is closed at once, as one refused at
    accept: lingering, refused connections held places under limits.max_connections,
    so one source over its own limit could keep every other client out."""

    more_args = ("--workers", "0")
    server_env = {"KILN_LIMITS_MAX_CONNECTIONS_PER_ADDRESS": "1", "KILN_LIMITS_MAX_CONNECTIONS": "3"}

    def test_another_source_is_served_right_after(self):
        time.sleep(0.3)  # the harness's start-up probe has been closed and uncounted
        held = [self.proxied()]
        try:
            held[0].send(v1("198.51.100.7") + CLIENT)
            self.assertEqual(held[0].read_response().status, 200)
            for _ in range(3):  # over 198.51.100.7's limit: each refused (and kept open by its client)
                c = self.proxied()
                held.append(c)
                c.send(v1("198.51.100.7") + CLIENT, tolerate_close=True)
                self.assertEqual(c.read_response().status, 503)
            with self.proxied() as c:
                c.send(v1("198.51.100.8") + CLIENT)
                r = c.read_response()
                self.assertEqual((r.status, r.body), (200, b"198.51.100.8 http"))
        finally:
            for c in held:
                c.close()


if __name__ == "__main__":
    harness.main()
