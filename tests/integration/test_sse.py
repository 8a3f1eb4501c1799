"""Server-sent events over real sockets: kiln::event_stream's head (text/event-stream,
no-cache, sent at once), events with ids, names and several data lines, retry and
heartbeat comments, each leaving as it is sent (not when the handler ends), over
HTTP/1.1 (chunked) and HTTP/2; Last-Event-ID resumes; a client that leaves cancels
the handler; a client that does not read is cut once its backlog passes the limit."""
import re
import subprocess
import time

import harness
from harness import build_request


class Events:
    """Reads a chunked text/event-stream response from a raw socket as it arrives."""

    def __init__(self, conn):
        self.c = conn
        self.buf = b""
        self.body = b""
        self.ended = False

    def head(self):
        deadline = time.monotonic() + 5
        while b"\r\n\r\n" not in self.buf and time.monotonic() < deadline:
            self.buf += self.c.sock.recv(65536)
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        return head.decode("latin-1")

    def until(self, needle, timeout=5):
        deadline = time.monotonic() + timeout
        while needle not in self.body and not self.ended and time.monotonic() < deadline:
            self._chunks()
            if needle in self.body or self.ended:
                break
            data = self.c.sock.recv(65536)
            if not data:
                break
            self.buf += data
        self._chunks()
        return needle in self.body

    def _chunks(self):
        while True:
            nl = self.buf.find(b"\r\n")
            if nl < 0:
                return
            size = int(self.buf[:nl], 16)
            if len(self.buf) < nl + 2 + size + 2:
                return
            self.body += self.buf[nl + 2:nl + 2 + size]
            self.buf = self.buf[nl + 2 + size + 2:]
            if size == 0:
                self.ended = True
                return


def parse(text):
    """The events of a stream: a list of dicts (event, id, data, retry), comments apart."""
    events, comments, cur = [], [], {}
    for line in text.split("\n"):
        if line == "":
            if cur:
                events.append(cur)
            cur = {}
        elif line.startswith(":"):
            comments.append(line[1:].strip())
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "data":
                cur["data"] = cur["data"] + "\n" + value if "data" in cur else value
            else:
                cur[field] = value
    return events, comments


class Sse(harness.ServerTestCase):
    server_args = ("--workers", "0", "--threads", "1")

    def stats(self):
        body = self.get("/events/stats").body.decode()
        m = re.match(r"done=(\d+) cut=(\d+)", body)
        return int(m.group(1)), int(m.group(2))

    def test_events_leave_as_they_are_sent(self):
        with self.connect() as c:
            t0 = time.monotonic()
            c.send(build_request("GET", "/events?n=3&ms=1000"))
            ev = Events(c)
            head = ev.head().lower()
            self.assertIn("200", head.split("\r\n")[0])
            self.assertIn("content-type: text/event-stream", head)
            self.assertIn("cache-control: no-cache", head)
            self.assertIn("transfer-encoding: chunked", head)
            self.assertTrue(ev.until(b"line two 0\n\n"))
            # Sent at once; the next event 1 s later, the handler's end at 3 s: the
            # bound leaves 0.75 s for a slow machine and 0.25 s before the next event.
            self.assertLess(time.monotonic() - t0, 0.75, "the first event waited for the others")
            self.assertTrue(ev.until(b"line two 2\n\n"))
            ev.until(b"\0", timeout=5)  # to the end of the stream
            self.assertTrue(ev.ended)
            self.assertGreater(time.monotonic() - t0, 1.9)
            events, comments = parse(ev.body.decode())
            self.assertEqual(events[0], {"retry": "1500"})
            self.assertEqual([e["id"] for e in events[1:]], ["0", "1", "2"])
            self.assertEqual(events[1], {"event": "tick", "id": "0", "data": "line one\nline two 0"})
            self.assertEqual(comments, ["heartbeat"] * 3)
            # The connection lives on after the stream.
            c.send(build_request("GET", "/plaintext"))
            self.assertEqual(c.read_response().body, b"Hello, World!")

    def test_last_event_id_resumes(self):
        with self.connect() as c:
            c.send(build_request("GET", "/events?n=2&ms=0", [("Last-Event-ID", "41")]))
            ev = Events(c)
            ev.head()
            ev.until(b"\0", timeout=3)
        events, _ = parse(ev.body.decode())
        self.assertEqual([e.get("id") for e in events[1:]], ["42", "43"])

    def test_over_http2(self):
        r = subprocess.run(["curl", "-s", "-N", "--http2-prior-knowledge", "-w", "\n%{time_starttransfer} %{time_total}",
                            "http://127.0.0.1:%d/events?n=3&ms=1000" % self.port], capture_output=True, timeout=20)
        body, _, times = r.stdout.rpartition(b"\n")
        first, total = map(float, times.split())
        events, comments = parse(body.decode())
        self.assertEqual([e.get("id") for e in events[1:]], ["0", "1", "2"])
        self.assertLess(first, 0.75)  # as above: the next event comes 1 s on, the end 3 s on
        self.assertGreater(total, 1.9)

    def test_a_client_that_leaves_cancels_the_handler(self):
        _, cut0 = self.stats()
        with self.connect() as c:
            c.send(build_request("GET", "/events?n=1000&ms=50"))
            ev = Events(c)
            ev.head()
            self.assertTrue(ev.until(b"line two 0"))
        deadline = time.monotonic() + 5
        while self.stats()[1] == cut0 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.stats()[1], cut0 + 1)


    def test_a_client_gone_before_the_first_wait_leaves_the_server_serving(self):
        # The handler writes 1 MiB before its first co_await and ends without one; the
        # client has closed, so a flush in the middle fails (the client's kernel resets
        # the connection) and the connection closes under the running coroutine.
        for _ in range(20):
            s = harness.socket.create_connection(("127.0.0.1", self.port))
            s.sendall(build_request("GET", "/events/burst?kb=1024"))
            s.close()
        time.sleep(0.2)
        self.assert_server_alive()
        self.assertEqual(self.get("/events/burst?kb=16").status, 200)

class HandlerTimeout(harness.ServerTestCase):
    server_args = ("--workers", "0", "--threads", "1", "--handler-timeout", "1000")

    def test_a_stream_outlives_the_servers_handler_timeout(self):
        # timeouts.handler_ms bounds the time until the answer begins. Before, every
        # stream was cut when it passed (30 s by default): EventSource clients
        # reconnected twice a minute, and missed what was published meanwhile.
        with self.connect() as c:
            c.send(build_request("GET", "/events?n=5&ms=400"))
            ev = Events(c)
            self.assertIn("200", ev.head().split("\r\n")[0])
            ev.until(b"\0", timeout=6)
            self.assertTrue(ev.ended, "the stream was cut: %r" % ev.body[-200:])
        events, _ = parse(ev.body.decode())
        self.assertEqual([e.get("id") for e in events[1:]], ["0", "1", "2", "3", "4"])

    def test_a_head_of_a_stream_is_still_bounded_by_it(self):
        # A HEAD's stream sends nothing, so no write timeout or backlog would ever end
        # it: the handler timeout still does (the connection closes at it).
        with self.connect() as c:
            c.send(build_request("HEAD", "/events?n=100&ms=500"))
            self.assertIn("200", Events(c).head().split("\r\n")[0])
            closed, _, took = c.wait_closed(4)
            self.assertTrue(closed, "the HEAD's handler ran past the handler timeout")

    def test_a_handler_that_has_not_begun_its_answer_still_gets_504(self):
        t0 = time.monotonic()
        r = self.get("/async/sleep?ms=3000")
        self.assertEqual(r.status, 504)
        self.assertLess(time.monotonic() - t0, 2.5)


class SlowReader(harness.ServerTestCase):
    server_args = ("--workers", "0", "--threads", "1")
    server_env = {"KILN_TIMEOUTS_WRITE_MS": "1000"}

    def test_a_client_that_does_not_read_is_cut(self):
        before = self.get("/events/stats").body
        with self.connect() as c:
            c.sock.setsockopt(harness.socket.SOL_SOCKET, harness.socket.SO_RCVBUF, 64 * 1024)
            c.send(build_request("GET", "/events/flood?kb=64"))
            deadline = time.monotonic() + 10
            while self.get("/events/stats").body == before and time.monotonic() < deadline:
                time.sleep(0.1)  # reads nothing meanwhile
            after = self.get("/events/stats").body.decode()
        self.assertRegex(after, r"cut=[1-9]")
        self.assert_server_alive()


if __name__ == "__main__":
    harness.main()
