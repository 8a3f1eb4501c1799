"""kiln bench, the session study's load client, end to end.

Against a scripted study app written here in Python (so every request it gets can
be checked): -g fetches each asset of the page once per session however often the
connection drops, -c 2 reconnects and the cookies (two of them) come back on every
request after the first, -u posts a 15 KiB multipart file after each page, and the
JSON counts add up. Against the real servers: the generic example (the study's app)
with -g -c 2 and -u, and kiln_test_server with -c 0 and -c 2, all with zero
failures. Error paths: a server that closes mid-body, closes before answering,
answers garbage, answers 500, never answers, or is not there at all, is counted
as a failure of the right kind and exits 1; bad usage exits 2 naming the option.
"""

import json
import re
import socket
import subprocess
import threading
import time
import unittest

import harness

HOST = harness.HOST
RUN_TIMEOUT = 60  # seconds: a bench run that takes longer than this is a failure


# --------------------------------------------------------------------------------------
# A scripted server: one thread per connection, every request recorded.


class ScriptedServer:
    """Listens on a free 127.0.0.1 port; calls handler(server, sock, conn_id) in a
    thread per accepted connection. Stopped (and its threads joined) by stop()."""

    def __init__(self, handler):
        self.handler = handler
        self.lock = threading.Lock()
        self.connections = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((HOST, 0))
        self.sock.listen(512)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.running = True
        self.threads = []
        self.errors = []
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def url(self, path="/"):
        return "http://%s:%d%s" % (HOST, self.port, path)

    def _accept(self):
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self.lock:
                self.connections += 1
                conn_id = self.connections
            t = threading.Thread(target=self._serve, args=(conn, conn_id), daemon=True)
            self.threads.append(t)
            t.start()

    def _serve(self, conn, conn_id):
        conn.settimeout(harness.READ_TIMEOUT)
        try:
            self.handler(self, conn, conn_id)
        except (OSError, ValueError) as e:
            if self.running:
                with self.lock:
                    self.errors.append(repr(e))
        finally:
            conn.close()

    def stop(self):
        self.running = False
        self.sock.close()
        self.acceptor.join(timeout=2)
        for t in self.threads:
            t.join(timeout=2)


def read_request(conn, buf):
    """Reads one request from conn; returns (method, target, headers, body, rest)
    or None if the client closed the connection between requests."""
    while b"\r\n\r\n" not in buf:
        data = conn.recv(65536)
        if not data:
            if buf:
                raise ValueError("client closed inside a request head: %r" % buf[:100])
            return None
        buf += data
    head, _, buf = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = lines[0].split(" ")
    if version != "HTTP/1.1":
        raise ValueError("bad request line %r" % lines[0])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(buf) < length:
        data = conn.recv(65536)
        if not data:
            raise ValueError("client closed inside a request body")
        buf += data
    return method, target, headers, buf[:length], buf[length:]


def response(status, body, headers=(), chunked=False):
    lines = ["HTTP/1.1 %s" % status]
    lines += ["%s: %s" % h for h in headers]
    if chunked:
        lines.append("Transfer-Encoding: chunked")
        payload = harness.chunked(body, (4096, 1, 65536))
    else:
        lines.append("Content-Length: %d" % len(body))
        payload = body
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload


CSS = b"body{color:#333}\n" * (200 * 1024 // 17)        # ~200 KiB, sent chunked
JPG = bytes(range(256)) * 400                            # 100 KiB
JS = b"console.log('generic');\n" * 40


class StudyApp:
    """The study's generic web application, in Python, recording per session what
    it served. The page names three same-origin assets and one on another origin
    (which must never be asked for); the first page of a session sets two cookies."""

    def __init__(self):
        self.lock = threading.Lock()
        self.sessions = {}        # sid -> {"pages", "assets": {path: n}, "uploads", "conns": set()}
        self.cookieless = 0       # requests that came without the session cookie
        self.missing_theme = 0    # requests with the session cookie but not the second one
        self.bad_uploads = []
        self.unexpected = []      # targets that are not part of the app

    def page(self, sid):
        return ("<!DOCTYPE html><html><head><meta charset=\"UTF-8\">"
                "<link rel=\"stylesheet\" type=\"text/css\" href=\"/bootstrap.css\">"
                "<script src=\"app.js\"></script><title>Generic Web Application</title></head>"
                "<body><h1>Generic Web Application</h1><img src=\"/servers.jpg\" width=\"700\">"
                "<img src=\"http://cdn.invalid/remote.png\"><h2>Lorem Ipsum</h2>"
                + "<p>lorem ipsum dolor sit amet</p>" * 50
                + "<p>%s</p></body></html>" % sid).encode()

    def check_upload(self, headers, body):
        ctype = headers.get("content-type", "")
        m = re.match(r"multipart/form-data; boundary=(\S+)$", ctype)
        if not m:
            return "content-type %r" % ctype
        boundary = m.group(1).encode()
        if not body.startswith(b"--" + boundary + b"\r\n") or not body.endswith(b"\r\n--" + boundary + b"--\r\n"):
            return "multipart framing"
        part = body[len(boundary) + 4:-(len(boundary) + 8)]
        part_head, _, content = part.partition(b"\r\n\r\n")
        if b'name="file"' not in part_head or len(content) != 15 * 1024:
            return "file part %r with %d bytes" % (part_head, len(content))
        return None

    def __call__(self, server, conn, conn_id):
        buf = b""
        while True:
            req = read_request(conn, buf)
            if req is None:
                return
            method, target, headers, body, buf = req
            cookies = dict(p.strip().split("=", 1) for p in headers.get("cookie", "").split(";") if "=" in p)
            set_cookies = []
            with self.lock:
                sid = cookies.get("sid")
                if sid not in self.sessions:
                    self.cookieless += 1
                    sid = "s%04d" % (len(self.sessions) + 1)
                    self.sessions[sid] = {"pages": 0, "assets": {}, "uploads": 0, "conns": set()}
                    set_cookies = [("Set-Cookie", "sid=%s; Path=/; HttpOnly" % sid),
                                   ("Set-Cookie", "theme=dark; Path=/")]
                elif cookies.get("theme") != "dark":
                    self.missing_theme += 1
                s = self.sessions[sid]
                s["conns"].add(conn_id)
                if method == "GET" and target == "/":
                    s["pages"] += 1
                elif method == "GET" and target in ("/bootstrap.css", "/servers.jpg", "/app.js"):
                    s["assets"][target] = s["assets"].get(target, 0) + 1
                elif method == "POST" and target == "/upload":
                    s["uploads"] += 1
                    problem = self.check_upload(headers, body)
                    if problem:
                        self.bad_uploads.append(problem)
                else:
                    self.unexpected.append((method, target))
            if target == "/":
                out = response("200 OK", self.page(sid), set_cookies + [("Content-Type", "text/html")])
            elif target == "/bootstrap.css":
                out = response("200 OK", CSS, set_cookies, chunked=True)
            elif target == "/servers.jpg":
                out = response("200 OK", JPG, set_cookies)
            elif target == "/app.js":
                out = response("200 OK", JS, set_cookies, chunked=True)
            elif target == "/upload":
                out = response("200 OK", b"Data accepted", set_cookies)
            else:
                out = response("404 Not Found", b"no", set_cookies)
            conn.sendall(out)
            if headers.get("connection", "").lower() == "close":
                return


# --------------------------------------------------------------------------------------
# Running kiln bench


def kiln_binary():
    path = harness.BINARIES.get("kiln")
    if not path:
        raise unittest.SkipTest("no --kiln given")
    return path


def run_bench(args, timeout=RUN_TIMEOUT):
    """Runs `kiln bench ARGS`; returns (exit status, stdout, stderr)."""
    p = subprocess.run([kiln_binary(), "bench"] + list(args), stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


class BenchCase(unittest.TestCase):

    def bench_json(self, args, expect_status=0):
        status, out, err = run_bench(["--json"] + list(args))
        self.assertEqual(status, expect_status, "kiln bench %s\nstdout: %s\nstderr: %s" % (args, out, err))
        lines = out.strip().splitlines()
        self.assertEqual(len(lines), 1, out)
        return json.loads(lines[0])

    def assert_consistent(self, r):
        """The invariants of every report."""
        self.assertEqual(r["requests"], r["ok"] + r["failed"], r)
        self.assertEqual(r["failed"], sum(r["failures"].values()), r)
        self.assertEqual(r["requests"], r["pages"] + r["assets"] + r["uploads"], r)
        self.assertEqual(r["latency_ms"]["samples"], r["ok"], r)
        if r["ok"]:
            lat = r["latency_ms"]
            self.assertLessEqual(lat["p50"], lat["p90"])
            self.assertLessEqual(lat["p90"], lat["p99"])
            self.assertLessEqual(lat["p99"], lat["max"])
            self.assertGreater(r["requests_per_second"], 0)
            self.assertGreater(r["bytes_received"], 0)


# --------------------------------------------------------------------------------------
# Against the scripted study app: what the server saw


class AgainstStudyApp(BenchCase):

    def setUp(self):
        self.app = StudyApp()
        self.server = ScriptedServer(self.app)
        self.addCleanup(self.server.stop)

    def assert_server_clean(self):
        self.assertEqual(self.server.errors, [])
        self.assertEqual(self.app.unexpected, [])
        self.assertEqual(self.app.bad_uploads, [])

    def test_assets_once_per_session_across_random_disconnects(self):
        batches, per_batch = 4, 420  # > 2 x 167: every batch reconnects at least twice
        r = self.bench_json(["-g", "-c", "2", "-b", str(batches), "-r", str(per_batch), self.server.url()])
        self.assert_consistent(r)
        self.assertEqual(r["failed"], 0, r)
        self.assertEqual(r["requests"], batches * per_batch)
        self.assertEqual(r["assets"], batches * 3, "three same-origin assets once per session")
        self.assertEqual(r["pages"], batches * (per_batch - 3))
        self.assertEqual(r["uploads"], 0)
        self.assertEqual(r["new_cookies"], batches * 2, "sid and theme, each set once per session")
        self.assertGreaterEqual(r["connections"], batches * 3, "-c 2 drops after at most 167 requests")
        self.assertLessEqual(r["connections"], batches * (per_batch // 40 + 1))
        self.assertEqual(r["connections"], self.server.connections)
        self.assert_server_clean()
        # The server saw each session start once, then always with both cookies.
        self.assertEqual(len(self.app.sessions), batches)
        self.assertEqual(self.app.cookieless, batches)
        self.assertEqual(self.app.missing_theme, 0)
        for sid, s in self.app.sessions.items():
            self.assertEqual(s["assets"], {"/bootstrap.css": 1, "/servers.jpg": 1, "/app.js": 1}, sid)
            self.assertEqual(s["pages"], per_batch - 3, sid)
            self.assertGreaterEqual(len(s["conns"]), 3, "session %s found again after reconnects" % sid)

    def test_upload_after_each_page(self):
        batches, per_batch = 2, 61
        r = self.bench_json(["-u", "-b", str(batches), "-r", str(per_batch), self.server.url()])
        self.assert_consistent(r)
        self.assertEqual(r["failed"], 0, r)
        self.assertEqual(r["pages"], batches * 31)    # page, upload, page, upload, ..., page
        self.assertEqual(r["uploads"], batches * 30)
        self.assertEqual(r["connections"], batches, "keep-alive: one connection per batch")
        self.assertGreater(r["bytes_sent"], r["uploads"] * 15 * 1024)
        self.assert_server_clean()
        self.assertEqual(sum(s["uploads"] for s in self.app.sessions.values()), batches * 30)

    def test_fixed_assets_with_uploads_and_new_connection_per_request(self):
        r = self.bench_json(["-f", "-u", "-c", "0", "-b", "3", "-r", "20", self.server.url()])
        self.assert_consistent(r)
        self.assertEqual(r["failed"], 0, r)
        # page, /bootstrap.css, /servers.jpg, upload, page, upload, ...
        self.assertEqual(r["assets"], 3 * 2)
        self.assertEqual(r["connections"], 3 * 20)
        self.assertEqual(self.server.connections, 3 * 20)
        self.assert_server_clean()
        for s in self.app.sessions.values():
            self.assertEqual(s["assets"], {"/bootstrap.css": 1, "/servers.jpg": 1})
        self.assertEqual(self.app.cookieless, 3)

    def test_text_report_like_the_study_and_no_progress_when_not_a_tty(self):
        status, out, err = run_bench(["-b", "2", "-r", "10", self.server.url()])
        self.assertEqual(status, 0, out + err)
        self.assertRegex(out, r"(?m)^20 request\(s\)$")
        self.assertRegex(out, r"(?m)^elapsed: [\d,]+\.\d\d ms => [\d,]+\.\d\d request\(s\) per second$")
        self.assertRegex(out, r"(?m)^failed: +0$")
        self.assertRegex(out, r"(?m)^latency: +p50 [\d.]+ ms, p90 [\d.]+ ms, p99 [\d.]+ ms, max [\d.]+ ms$")
        self.assertEqual(err, "", "stderr is not a terminal: no progress line")

    def test_duration_ends_the_run(self):
        start = time.monotonic()
        r = self.bench_json(["-d", "1", "-b", "2", self.server.url()])
        took = time.monotonic() - start
        self.assert_consistent(r)
        self.assertEqual(r["failed"], 0, r)
        self.assertGreater(r["ok"], 10)
        self.assertGreaterEqual(r["elapsed_ms"], 1000)
        self.assertLess(took, 10)

    def test_verbose_names_every_request(self):
        status, out, err = run_bench(["-v", "-g", "-r", "4", self.server.url()])
        self.assertEqual(status, 0, out + err)
        for target in ("GET / -> 200", "GET /bootstrap.css -> 200", "GET /app.js -> 200", "GET /servers.jpg -> 200"):
            self.assertIn(target, err)
        self.assertNotIn("cdn.invalid", err)


# --------------------------------------------------------------------------------------
# Against the real servers


class AgainstGeneric(BenchCase):
    """The study's app on kiln: -g -c 2 (the study's read test) and -u (write test)."""

    @classmethod
    def setUpClass(cls):
        if not harness.BINARIES.get("generic"):
            raise unittest.SkipTest("no --generic given")
        cls.server = harness.ServerProcess(harness.BINARIES["generic"])
        cls.addClassCleanup(harness.check_clean_stop, cls.server)
        cls.server.start()
        cls.url = "http://%s:%d/" % (HOST, cls.server.port)

    def test_read_test_assets_once_sessions_found_again(self):
        batches = 8
        r = self.bench_json(["-g", "-c", "2", "-b", str(batches), "-d", "2", self.url])
        self.assert_consistent(r)
        self.assertEqual(r["failed"], 0, r)
        self.assertGreater(r["pages"], batches * 167, "long enough for reconnects")
        self.assertEqual(r["assets"], batches * 2, "/bootstrap.css and /servers.jpg once per session")
        self.assertGreater(r["connections"], batches, "-c 2 reconnected")
        self.assertEqual(r["new_cookies"], batches, "the session is found again after every reconnect")

    def test_write_test_uploads(self):
        batches = 4
        r = self.bench_json(["-u", "-c", "2", "-b", str(batches), "-d", "2", self.url])
        self.assert_consistent(r)
        self.assertEqual(r["failed"], 0, r)
        self.assertGreater(r["uploads"], 0)
        self.assertLessEqual(abs(r["pages"] - r["uploads"]), batches)


class AgainstTestServer(BenchCase):

    @classmethod
    def setUpClass(cls):
        cls.server = harness.ServerProcess(harness.BINARIES["server"])
        cls.addClassCleanup(harness.check_clean_stop, cls.server)
        cls.server.start()
        cls.url = "http://%s:%d/plaintext" % (HOST, cls.server.port)

    def test_keep_alive_uses_one_connection_per_batch(self):
        r = self.bench_json(["-b", "16", "-r", "500", "-t", "2", self.url])
        self.assert_consistent(r)
        self.assertEqual((r["ok"], r["failed"], r["connections"], r["threads"]), (8000, 0, 16, 2))
        self.assertEqual(r["bytes_received"] % 8000, 0, "every response the same size")

    def test_random_drops_and_close_each(self):
        r = self.bench_json(["-c", "2", "-b", "8", "-d", "1", self.url])
        self.assert_consistent(r)
        self.assertEqual(r["failed"], 0, r)
        self.assertGreater(r["connections"], 8)
        r = self.bench_json(["-c", "0", "-b", "4", "-r", "50", self.url])
        self.assert_consistent(r)
        self.assertEqual((r["ok"], r["failed"], r["connections"]), (200, 0, 200))

    def test_error_paths_not_found_is_a_4xx_failure(self):
        url = self.url.replace("/plaintext", "/no/such/page")
        r = self.bench_json(["-b", "2", "-r", "5", url], expect_status=1)
        self.assert_consistent(r)
        self.assertEqual((r["ok"], r["failures"]["status_4xx"]), (0, 10))
        self.assertEqual(r["connections"], 2, "a complete 404 keeps the connection")


# --------------------------------------------------------------------------------------
# Error paths: broken servers


def close_mid_body(server, conn, conn_id):
    if read_request(conn, b"") is not None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 10)


def close_before_response(server, conn, conn_id):
    read_request(conn, b"")


def close_mid_chunk(server, conn, conn_id):
    if read_request(conn, b"") is not None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nonly")


def garbage(server, conn, conn_id):
    if read_request(conn, b"") is not None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc")


def server_error(server, conn, conn_id):
    buf = b""
    while True:
        req = read_request(conn, buf)
        if req is None:
            return
        buf = req[4]
        conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops")


def never_answer(server, conn, conn_id):
    deadline = time.monotonic() + 5
    while server.running and time.monotonic() < deadline:
        time.sleep(0.05)


class ErrorPaths(BenchCase):

    def broken(self, handler):
        server = ScriptedServer(handler)
        self.addCleanup(server.stop)
        return server

    def test_server_closing_mid_body_is_a_truncated_failure(self):
        server = self.broken(close_mid_body)
        r = self.bench_json(["-b", "2", "-r", "3", server.url()], expect_status=1)
        self.assert_consistent(r)
        self.assertEqual((r["ok"], r["failed"], r["failures"]["truncated"]), (0, 6, 6), r)
        self.assertEqual(r["connections"], 6, "a failed connection is re-established for the next request")

    def test_server_closing_mid_chunk_is_a_truncated_failure(self):
        server = self.broken(close_mid_chunk)
        r = self.bench_json(["-r", "2", server.url()], expect_status=1)
        self.assertEqual(r["failures"]["truncated"], 2, r)

    def test_server_closing_before_answering_is_a_closed_failure(self):
        server = self.broken(close_before_response)
        r = self.bench_json(["-r", "3", server.url()], expect_status=1)
        self.assert_consistent(r)
        self.assertEqual(r["failures"]["closed"], 3, r)

    def test_malformed_response_is_a_parse_failure(self):
        server = self.broken(garbage)
        r = self.bench_json(["-r", "2", server.url()], expect_status=1)
        self.assertEqual(r["failures"]["parse"], 2, r)

    def test_server_error_is_a_5xx_failure_and_the_text_report_says_so(self):
        server = self.broken(server_error)
        status, out, _ = run_bench(["-r", "3", server.url()])
        self.assertEqual(status, 1)
        self.assertRegex(out, r"(?m)^failed: +3 \(status_5xx 3\)$")
        self.assertRegex(out, r"(?m)^0 request\(s\)$")

    def test_no_answer_is_a_timeout_failure(self):
        server = self.broken(never_answer)
        start = time.monotonic()
        r = self.bench_json(["--timeout", "200", "-r", "2", server.url()], expect_status=1)
        self.assertEqual(r["failures"]["timeout"], 2, r)
        self.assertGreaterEqual(time.monotonic() - start, 0.4)

    def test_nothing_listening_is_a_connect_failure(self):
        port = harness.free_port()
        r = self.bench_json(["-b", "2", "-r", "3", "http://127.0.0.1:%d/" % port], expect_status=1)
        self.assert_consistent(r)
        self.assertEqual((r["failures"]["connect"], r["connections"]), (6, 0), r)

    def test_bad_usage_exits_2_naming_the_option(self):
        for args, needle in ((["-b", "0", "http://127.0.0.1:1/"], "-b:"),
                             (["-c", "5", "http://127.0.0.1:1/"], "-c:"),
                             (["--timeout", "x", "http://127.0.0.1:1/"], "--timeout:"),
                             (["-q", "http://127.0.0.1:1/"], "'-q'"),
                             (["https://127.0.0.1/"], "only http://"),
                             (["-b", "2"], "missing URL")):
            status, out, err = run_bench(args, timeout=10)
            self.assertEqual(status, 2, args)
            self.assertIn(needle, err, args)
            self.assertEqual(out, "", args)
        p = subprocess.run([kiln_binary(), "no-such-command"], capture_output=True, timeout=10)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"unknown command", p.stderr)

    def test_help(self):
        status, out, _ = run_bench(["--help"], timeout=10)
        self.assertEqual(status, 0)
        self.assertIn("usage: kiln bench", out)
        p = subprocess.run([kiln_binary(), "help"], capture_output=True, timeout=10)
        self.assertEqual(p.returncode, 0)
        self.assertIn(b"bench", p.stdout)


if __name__ == "__main__":
    harness.main()
