"""Request bodies: Content-Length and chunked uploads are echoed byte for byte,
Expect: 100-continue works with raw bytes and with curl, and the per-route body
limit answers 413 without reading the body."""

import os
import subprocess
import tempfile
import time

import harness
from harness import build_request, chunked

ALL_BYTES = bytes(range(256)) * 4


class Bodies(harness.ServerTestCase):

    def test_content_length_body_is_echoed(self):
        with self.connect() as c:
            r = c.request("POST", "/echo", body=ALL_BYTES)
            self.assertEqual(r.status, 200)
            self.assertEqual(r.body, ALL_BYTES)
            self.assertEqual(r.header("X-Body-Length"), str(len(ALL_BYTES)))
            self.assertEqual(r.header("Content-Type"), "application/octet-stream")

    def test_empty_body_is_echoed(self):
        with self.connect() as c:
            r = c.request("POST", "/echo", body=b"")
            self.assertEqual((r.status, r.body, r.header("X-Body-Length")), (200, b"", "0"))
            # No Content-Length at all on a POST is a zero-length body too.
            c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\n\r\n")
            r = c.read_response()
            self.assertEqual((r.status, r.body, r.header("X-Body-Length")), (200, b"", "0"))
            c.assert_open(self)

    def test_body_bytes_are_not_parsed_as_a_request(self):
        smuggled = build_request("GET", "/users/666")
        with self.connect() as c:
            r = c.request("POST", "/echo", body=smuggled)
            self.assertEqual(r.body, smuggled)
            c.assert_open(self, msg="the body must not have produced a second response")

    def test_chunked_body_with_extensions_and_trailers_is_echoed(self):
        raw = (b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"5;name=value\r\nhello\r\n"
               b"1;a=\"quoted;string\";b\r\n \r\n"
               b"A\r\n0123456789\r\n"
               b"0;last=1\r\nX-Trailer: t1\r\nX-Other: t2\r\n\r\n")
        with self.connect() as c:
            c.send(raw)
            r = c.read_response()
            self.assertEqual(r.status, 200)
            self.assertEqual(r.body, b"hello 0123456789")
            self.assertEqual(r.header("X-Body-Length"), "16")
            # The connection is in sync after the trailers.
            r = c.request("GET", "/plaintext")
            self.assertEqual(r.body, b"Hello, World!")

    def test_large_chunked_body_is_echoed(self):
        body = os.urandom(3 * 1024 * 1024 + 17)
        with self.connect() as c:
            c.send(build_request("POST", "/echo", [("Transfer-Encoding", "chunked")],
                                 chunked(body, (65536, 1, 4093))))
            r = c.read_response()
            self.assertEqual(r.status, 200)
            self.assertEqual(len(r.body), len(body))
            self.assertTrue(r.body == body, "large chunked body differs")

    def test_large_content_length_body_is_echoed(self):
        body = os.urandom(5 * 1024 * 1024)
        with self.connect() as c:
            r = c.request("POST", "/echo", body=body)
            self.assertEqual(r.status, 200)
            self.assertEqual(r.header("X-Body-Length"), str(len(body)))
            self.assertTrue(r.body == body, "large body differs")

    def test_expect_100_continue_raw(self):
        body = b"payload after the interim response"
        with self.connect() as c:
            c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                   b"Content-Length: %d\r\n\r\n" % len(body))
            interim = c.read_response(timeout=3)
            self.assertEqual(interim.status, 100)
            self.assertTrue(interim.raw_head.startswith(b"HTTP/1.1 100 Continue\r\n"),
                            interim.raw_head)
            c.send(body)
            r = c.read_response()
            self.assertEqual(r.status, 200)
            self.assertEqual(r.body, body)
            c.assert_open(self)

    def test_expect_100_continue_with_chunked_body(self):
        with self.connect() as c:
            c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                   b"Transfer-Encoding: chunked\r\n\r\n")
            self.assertEqual(c.read_response(timeout=3).status, 100)
            c.send(chunked(b"abcdefghij", (3,)))
            r = c.read_response()
            self.assertEqual((r.status, r.body), (200, b"abcdefghij"))

    def test_expect_100_continue_when_body_already_sent(self):
        # A client may send the body without waiting; the 100 (if any) then
        # precedes the final response, and the final response is correct.
        with self.connect() as c:
            c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                   b"Content-Length: 3\r\n\r\nabc")
            r = c.read_response()
            if r.status == 100:
                r = c.read_response()
            self.assertEqual((r.status, r.body), (200, b"abc"))

    def test_expect_100_continue_with_curl(self):
        body = os.urandom(2 * 1024 * 1024)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "body.bin")
            with open(path, "wb") as f:
                f.write(body)
            out = os.path.join(d, "out.bin")
            p = subprocess.run(
                ["curl", "-sS", "--max-time", "30", "-H", "Expect: 100-continue",
                 "-H", "Content-Type: application/octet-stream", "--data-binary", "@" + path,
                 "-o", out, "-w", "%{http_code} %{size_download}",
                 "http://127.0.0.1:%d/echo" % self.port],
                capture_output=True, timeout=40)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.decode(), "200 %d" % len(body))
            with open(out, "rb") as f:
                self.assertTrue(f.read() == body, "curl got a different body back")

    def test_curl_verbose_sees_100_continue(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "body.bin")
            with open(path, "wb") as f:
                f.write(b"z" * 100000)
            p = subprocess.run(
                ["curl", "-sS", "-v", "--max-time", "30", "-H", "Expect: 100-continue",
                 "--data-binary", "@" + path, "-o", os.devnull,
                 "http://127.0.0.1:%d/echo" % self.port],
                capture_output=True, timeout=40)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(b"HTTP/1.1 100 Continue", p.stderr)

    def test_small_route_accepts_body_under_its_limit(self):
        with self.connect() as c:
            r = c.request("POST", "/small", body=b"a" * 1024)
            self.assertEqual((r.status, r.body), (200, b"ok"))

    def test_over_limit_content_length_gets_413_before_the_body(self):
        with self.connect() as c:
            # Headers only: the server must answer without waiting for 2000 bytes.
            start = time.monotonic()
            c.send(b"POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n")
            r = c.read_response(timeout=3)
            self.assertEqual(r.status, 413)
            self.assertLess(time.monotonic() - start, 2.0)
            c.assert_closed(self, msg="after 413")
        self.assert_server_alive()

    def test_over_limit_with_expect_gets_413_not_100(self):
        with self.connect() as c:
            c.send(b"POST /small HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                   b"Content-Length: 2000\r\n\r\n")
            r = c.read_response(timeout=3)
            self.assertEqual(r.status, 413, "must refuse instead of inviting the body")
            c.assert_closed(self, msg="after 413")

    def test_over_limit_chunked_body_gets_413(self):
        with self.connect() as c:
            c.send(build_request("POST", "/small", [("Transfer-Encoding", "chunked")],
                                 chunked(b"q" * 2000, (500,))), tolerate_close=True)
            r = c.read_response(timeout=5)
            self.assertEqual(r.status, 413)
            c.assert_closed(self, msg="after chunked 413")
        self.assert_server_alive()

    def test_default_limit_applies_to_other_routes(self):
        # Default RouteOptions.max_body is 8 MiB: a larger declared length is a 413.
        with self.connect() as c:
            c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
                   % (8 * 1024 * 1024 + 1))
            r = c.read_response(timeout=3)
            self.assertEqual(r.status, 413)
            c.assert_closed(self)


class ChunkFramingMemory(harness.ServerTestCase):
    server_args = ("--workers", "0")
    # No ASan quarantine (make asan): RSS would grow with every allocation.
    server_env = {"ASAN_OPTIONS": ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "quarantine_size_mb=0",
                                                         "thread_local_quarantine_size_kb=0"]))}

    def rss_kib(self):
        with open("/proc/%d/status" % self.server.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def test_chunk_framing_is_not_kept_with_the_body(self):
        # 20,000 chunks of one byte, each with 4,000 bytes of extension: 80 MB of
        # framing for 20 KB of payload, well under the route's 8 MiB. The framing
        # was kept in the buffer with the payload until the body ended (the limit
        # counts payload only): 80 MB and more held by one request.
        chunk = b"1;" + b"e" * 4000 + b"\r\nX\r\n"
        with self.connect() as c:
            self.assertEqual(c.request("POST", "/echo", body=b"warm").status, 200)
            before = self.rss_kib()
            c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            for _ in range(20):
                c.send(chunk * 1000)
            grown = self.rss_kib() - before
            c.send(b"0\r\n\r\n")
            r = c.read_response(timeout=10)
            self.assertEqual((r.status, r.body), (200, b"X" * 20000))
        self.assertLess(grown, 16 * 1024, "%d KiB more while reading 80 MB of chunk framing" % grown)


class InterleavedBodiesOnOneLoop(harness.ServerTestCase):
    """Regression: a body arriving in a later read was dispatched with whatever head
    another connection on the same loop had parsed in between (the loop's shared
    request), so an upload could run as someone else's request."""

    server_args = ("--workers", "0", "--threads", "1")

    def interleave(self, first_part, rest):
        import socket as _socket
        a = _socket.create_connection(("127.0.0.1", self.port), timeout=5)
        b = _socket.create_connection(("127.0.0.1", self.port), timeout=5)
        try:
            a.sendall(first_part)
            time.sleep(0.2)
            b.sendall(b"GET /users/7 HTTP/1.1\r\nHost: h\r\n\r\n")
            self.assertTrue(b.recv(4096).endswith(b"user 7"))
            time.sleep(0.2)
            a.sendall(rest)
            data = b""
            while b"\r\n\r\n" not in data or not data.endswith(b"helloworld"):
                chunk = a.recv(4096)
                if not chunk:
                    break
                data += chunk
            return data
        finally:
            a.close()
            b.close()

    def test_content_length_body_keeps_its_own_request(self):
        data = self.interleave(b"POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nhello", b"world")
        self.assertTrue(data.startswith(b"HTTP/1.1 200"), data)
        self.assertTrue(data.endswith(b"helloworld"), data)
        self.assertIn(b"X-Body-Length: 10", data)

    def test_chunked_body_keeps_its_own_request(self):
        data = self.interleave(b"POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
                               b"5\r\nworld\r\n0\r\n\r\n")
        self.assertTrue(data.startswith(b"HTTP/1.1 200"), data)
        self.assertTrue(data.endswith(b"helloworld"), data)


if __name__ == "__main__":
    harness.main()
