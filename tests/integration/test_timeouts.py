"""Timeouts and backpressure. The server runs with 300 ms header, keep-alive and
body timeouts: idle, slow-head and stalled-body connections are closed within
bounds, while a client that is slow to READ a big response still gets all of it."""

import os
import socket
import tempfile
import time
import unittest

import harness
from harness import build_request

LOW, HIGH = 0.2, 3.0  # seconds: a 300 ms timeout must fire inside this window


class Timeouts(harness.ServerTestCase):
    server_args = ("--header-timeout", "300", "--keepalive-timeout", "300",
                   "--body-timeout", "300")

    def assert_closed_in_window(self, conn, label, allow_408=True):
        start = time.monotonic()
        closed, extra, _ = conn.wait_closed(timeout=HIGH + 2)
        elapsed = time.monotonic() - start
        self.assertTrue(closed, "%s: not closed after %.2f s" % (label, elapsed))
        if extra:
            self.assertTrue(allow_408 and extra.startswith(b"HTTP/1.1 408 "),
                            "%s: unexpected bytes %r" % (label, extra[:200]))
        return elapsed

    def test_idle_new_connection_is_closed(self):
        with self.connect() as c:
            start = time.monotonic()
            closed, extra, _ = c.wait_closed(timeout=HIGH + 2)
            elapsed = time.monotonic() - start
            self.assertTrue(closed, "idle connection still open after %.2f s" % elapsed)
            self.assertGreaterEqual(elapsed, LOW, "closed too early")
            self.assertLessEqual(elapsed, HIGH)
            # Nothing was asked: a 408 is allowed, anything else is not.
            self.assertTrue(extra == b"" or extra.startswith(b"HTTP/1.1 408 "), extra[:200])

    def test_idle_keepalive_connection_is_closed(self):
        with self.connect() as c:
            r = c.request("GET", "/plaintext")
            self.assertEqual(r.status, 200)
            start = time.monotonic()
            closed, extra, _ = c.wait_closed(timeout=HIGH + 2)
            elapsed = time.monotonic() - start
            self.assertTrue(closed, "idle keep-alive connection still open")
            self.assertEqual(extra, b"", "no response may be sent on an idle keep-alive close")
            self.assertGreaterEqual(elapsed, LOW)
            self.assertLessEqual(elapsed, HIGH)

    def test_active_connection_is_not_closed_early(self):
        # Requests every 60 ms for 0.6 s (twice the timeout): each one restarts the
        # keep-alive clock.
        with self.connect() as c:
            for i in range(10):
                r = c.request("GET", "/users/%d" % i)
                self.assertEqual(r.body, b"user %d" % i)
                time.sleep(0.06)

    def test_partial_head_gets_408_or_close(self):
        with self.connect() as c:
            c.send(b"GET /plaintext HTTP/1.1\r\nHost: x\r\n")  # no final CRLF
            start = time.monotonic()
            closed, extra, _ = c.wait_closed(timeout=HIGH + 2)
            elapsed = time.monotonic() - start
            self.assertTrue(closed, "partial head still open after %.2f s" % elapsed)
            self.assertTrue(extra == b"" or extra.startswith(b"HTTP/1.1 408 "), extra[:200])
            self.assertGreaterEqual(elapsed, LOW - 0.05)
            self.assertLessEqual(elapsed, HIGH)

    def test_slowloris_head_trickle_is_cut_off(self):
        # One header byte every 50 ms keeps the socket busy but the head never
        # completes: the header timeout runs from the first byte, not the last.
        head = b"GET /plaintext HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 200
        with self.connect(nodelay=True) as c:
            start = time.monotonic()
            closed_at = None
            for i in range(len(head)):
                if time.monotonic() - start > HIGH + 2:
                    break
                try:
                    c.sock.sendall(head[i:i + 1])
                except (BrokenPipeError, ConnectionResetError):
                    closed_at = time.monotonic() - start
                    break
                closed, _, _ = c.wait_closed(timeout=0.05)
                if closed:
                    closed_at = time.monotonic() - start
                    break
            self.assertIsNotNone(closed_at, "a trickled head was never cut off")
            self.assertLessEqual(closed_at, HIGH)

    def test_stalled_body_is_closed(self):
        with self.connect() as c:
            c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
            elapsed = self.assert_closed_in_window(c, "stalled Content-Length body")
            self.assertLessEqual(elapsed, HIGH)

    def test_stalled_chunked_body_is_closed(self):
        with self.connect() as c:
            c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                   b"a\r\n01234")
            elapsed = self.assert_closed_in_window(c, "stalled chunked body")
            self.assertLessEqual(elapsed, HIGH)

    def test_slow_but_steady_body_is_accepted(self):
        # 40 ms between pieces is well within the 300 ms body timeout.
        body = b"abcdefghij" * 5
        with self.connect(nodelay=True) as c:
            c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body))
            for i in range(0, len(body), 10):
                time.sleep(0.04)
                c.send(body[i:i + 10])
            r = c.read_response()
            self.assertEqual((r.status, r.body), (200, body))

    def test_slow_handler_is_not_cut_by_client_timeouts(self):
        # The handler takes longer than every client timeout; the response arrives.
        with self.connect() as c:
            r = c.request("GET", "/sleep?ms=800")
            self.assertEqual((r.status, r.body), (200, b"slept"))

    def test_backpressure_slow_reader_gets_everything(self):
        n = 32 * 1024 * 1024
        with self.connect() as c:
            c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
            c.send(build_request("GET", "/big?n=%d" % n))
            time.sleep(1.0)  # do not read: the server must hold the rest, not drop it
            r = c.read_response(timeout=60)
            self.assertEqual(r.status, 200)
            self.assertEqual(r.header("Content-Length"), str(n))
            self.assertEqual(len(r.body), n)
            self.assertTrue(r.body.count(b"x") == n, "body is not all 'x'")
            # Still in sync and usable after the big write.
            r = c.request("GET", "/plaintext")
            self.assertEqual(r.body, b"Hello, World!")

    def test_others_are_served_while_a_reader_stalls(self):
        n = 32 * 1024 * 1024
        with self.connect() as slow:
            slow.send(build_request("GET", "/big?n=%d" % n))
            time.sleep(0.2)
            for i in range(6):
                start = time.monotonic()
                r = self.get("/users/%d" % i)
                self.assertEqual(r.body, b"user %d" % i)
                self.assertLess(time.monotonic() - start, 1.0, "a stalled reader blocks others")
            r = slow.read_response(timeout=60)
            self.assertEqual(len(r.body), n)


class WriteTimeout(harness.ServerTestCase):
    """A client that never reads is dropped after the write timeout, and the
    server's memory for it is released (it goes on serving others)."""
    # 1 s (not 300 ms): the steady reader below must stay far inside it even on a
    # loaded machine, where a descheduled reader looks like a stalled one.
    server_args = ("--write-timeout", "1000")

    def test_reader_that_never_reads_is_dropped(self):
        n = 32 * 1024 * 1024
        with self.connect() as c:
            c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
            c.send(build_request("GET", "/big?n=%d" % n))
            time.sleep(3.0)  # far past 1 s without progress
            self.assert_server_alive()
            received = 0
            closed = False
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                c.sock.settimeout(5)
                try:
                    data = c.sock.recv(1 << 20)
                except ConnectionResetError:
                    closed = True
                    break
                except socket.timeout:
                    break
                if not data:
                    closed = True
                    break
                received += len(data)
            self.assertTrue(closed, "connection not closed by the write timeout")
            self.assertLess(received, n, "the whole body arrived: no write timeout fired")

    def test_steady_reader_is_not_dropped(self):
        # Reading slowly but steadily (progress every ~20 ms) is not a stall.
        n = 4 * 1024 * 1024
        with self.connect() as c:
            c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
            c.send(build_request("GET", "/big?n=%d" % n))
            got = 0
            head_seen = b""
            deadline = time.monotonic() + 60
            while got < n + 100 and time.monotonic() < deadline:
                c.sock.settimeout(5)
                data = c.sock.recv(256 * 1024)
                if not data:
                    break
                if not head_seen:
                    head_seen = data[:64]
                got += len(data)
                time.sleep(0.02)
            self.assertTrue(head_seen.startswith(b"HTTP/1.1 200 "), head_seen)
            self.assertGreater(got, n, "steady reader was cut off after %d bytes" % got)

    def test_a_stream_that_drained_is_not_cut_by_its_old_write_timer(self):
        # A coroutine's stream: 4 MiB at once (the write yields, or the socket
        # blocks: the write timer starts), then a ping every 200 ms for 2.4 s, read as
        # it comes. Once the burst had drained the timer was left running, and cut the
        # healthy stream a write timeout later.
        with self.connect() as c:
            c.send(build_request("GET", "/async/burst?kb=4096&n=12&ms=200"))
            r = c.read_response(timeout=15)
            self.assertEqual(r.status, 200)
            self.assertEqual(len(r.body), 4096 * 1024 + sum(len("ping %d\n" % i) for i in range(12)))
            self.assertTrue(r.body.endswith(b"ping 11\n"))
            c.assert_open(self)


class WriteTimeoutHybrid(harness.ServerTestCase):
    """Over a unix socket, whose buffer (about 200 KiB) takes less of a 600 KB response
    than TCP's on loopback would (the rest stays in the server, under its 1 MB
    max_pending_output, so the connection reads on)."""
    sock = os.path.join(tempfile.gettempdir(), "kiln-timeouts-%d.sock" % os.getpid())
    server_args = ("--write-timeout", "1000", "--mpm", "hybrid", "--workers", "0", "--listen", "unix:" + sock)

    def test_a_stuck_response_keeps_its_write_timeout_while_a_later_request_runs(self):
        # The first response is stuck in a client that reads nothing; a second request
        # goes to the pool. It took the connection's timer away, and nothing armed it
        # again: the connection and its output stayed until the server stopped.
        s = socket.socket(socket.AF_UNIX)
        self.addCleanup(s.close)
        s.connect(self.sock)
        s.sendall(build_request("GET", "/big?n=600000"))
        time.sleep(0.3)
        s.sendall(build_request("GET", "/plaintext"))
        time.sleep(3.0)  # the timeout is 1 s
        received, closed = 0, False
        s.settimeout(3)
        try:
            while True:
                data = s.recv(1 << 20)
                if not data:
                    closed = True
                    break
                received += len(data)
        except socket.timeout:
            pass
        except ConnectionResetError:
            closed = True
        self.assertTrue(closed, "not closed by the write timeout (%d bytes read)" % received)
        self.assertLess(received, 600000, "the whole body arrived: no write timeout fired")


class DrainAfterStuckOutput(unittest.TestCase):
    """A graceful stop while a response is stuck in a client that does not read: once
    the client reads it all, the connection gets the drain's grace (1 s), not the
    keep-alive timeout (here 20 s), so the stop ends soon after."""

    def test_a_connection_whose_output_drains_during_a_stop_closes_after_the_grace(self):
        sock = os.path.join(tempfile.gettempdir(), "kiln-drain-%d.sock" % os.getpid())
        srv = harness.ServerProcess(harness.BINARIES["server"],
                                    ("--workers", "0", "--threads", "1", "--keepalive-timeout", "20000",
                                     "--drain-timeout", "15000", "--listen", "unix:" + sock))
        srv.start()
        try:
            s = socket.socket(socket.AF_UNIX)
            self.addCleanup(s.close)
            s.connect(sock)
            s.sendall(build_request("GET", "/big?n=600000"))
            s.settimeout(5)
            s.recv(1, socket.MSG_PEEK)  # the answer began: the request was read
            time.sleep(0.2)  # stuck: the unix socket holds about 200 KiB
            srv.proc.terminate()
            time.sleep(0.3)
            got = b""
            while b"\r\n\r\n" not in got or len(got) < got.index(b"\r\n\r\n") + 4 + 600000:
                data = s.recv(1 << 20)
                if not data:
                    break
                got += data
            self.assertTrue(got.endswith(b"x" * 1000) and len(got) > 600000, "the response did not arrive whole")
            t0 = time.monotonic()
            s.settimeout(10)
            try:
                while s.recv(1 << 16):
                    pass
            except (ConnectionResetError, socket.timeout):
                pass
            took = time.monotonic() - t0
            self.assertLess(took, 3.0, "closed %.1f s after its output drained" % took)
            self.assertEqual(srv.proc.wait(timeout=15), 0)
        finally:
            srv.stop()


class EmptyLines(harness.ServerTestCase):
    """RFC 9112 §2.2: empty lines between requests (some clients send CRLF after a
    body) are ignored; the connection stays idle under its keep-alive timeout."""
    server_args = ("--header-timeout", "300", "--workers", "0")

    def test_an_empty_line_after_a_request_is_not_a_request_begun(self):
        with self.connect() as c:
            c.send(build_request("POST", "/echo", body=b"hi") + b"\r\n")
            self.assertEqual(c.read_response().body, b"hi")
            # Before, the empty line began a head: 408 at the header timeout, which a
            # client reusing the connection would read as its next answer.
            c.assert_open(self, wait=1.0, msg="after an empty line")
            self.assertEqual(c.request("GET", "/plaintext").body, b"Hello, World!")

    def test_answers_owed_go_out_when_the_client_ends_after_an_unfinished_one(self):
        for tail in (b"\r\n", b"GET /plain"):
            with self.connect() as c:
                # One write: the answer is owed when the end of the stream is read.
                c.send(build_request("POST", "/echo", body=b"hi") + tail)
                c.sock.shutdown(socket.SHUT_WR)
                r = c.read_response()
                self.assertEqual((r.status, r.body), (200, b"hi"), tail)
                closed, extra, _ = c.wait_closed(3)
                self.assertTrue(closed, tail)
                self.assertEqual(extra, b"", tail)


if __name__ == "__main__":
    harness.main()
