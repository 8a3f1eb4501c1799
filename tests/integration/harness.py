"""Shared helpers for kiln's end-to-end tests (stdlib only).

A test file starts one real server binary on a free 127.0.0.1 port (ServerProcess),
opens raw TCP connections to it (RawConnection), writes exact bytes and parses
exactly one HTTP/1.1 response at a time. Every wait here is bounded in count and
in time; a server that hangs makes a test fail, never makes it hang. Only the
processes started here are ever signalled, by their own PID.

Usage from a test file:
    import harness
    class T(harness.ServerTestCase):
        def test_x(self):
            with self.connect() as c:
                c.send(b"GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
                r = c.read_response()
    if __name__ == "__main__":
        harness.main()
"""

import argparse
import errno
import http.client
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

HOST = "127.0.0.1"
READ_TIMEOUT = 5.0        # seconds, one recv()
RESPONSE_TIMEOUT = 20.0   # seconds, one whole response
START_TIMEOUT = 10.0      # seconds, until the server accepts
STOP_GRACE = 5.0          # seconds between SIGTERM and SIGKILL
MAX_HEAD_BYTES = 1 << 20  # a response head larger than this is a server bug
# Sanitizer builds run several times slower, two test processes sharing two cores:
# `make asan` and `make tsan` set KILN_TEST_TIME_SCALE, and latency bounds are
# multiplied by it (they stay far below what the failure they catch would take).
TIME_SCALE = float(os.environ.get("KILN_TEST_TIME_SCALE", "1"))

# Paths of the binaries under test, filled by main() from the command line.
BINARIES = {"server": None, "hello": None}


def require_modules(modules, package, test_name):
    """Imports `modules` (a list of names) or fails clearly. Debian's python3-* packages
    (scripts/deps.sh) are seen by /usr/bin/python3; a python3 found first on PATH
    (pyenv, a venv) may not see them: then the test runs itself again under
    /usr/bin/python3, once."""
    import importlib
    try:
        for m in modules:
            importlib.import_module(m)
        return
    except ImportError as e:
        error = e
    system = "/usr/bin/python3"
    if (not os.environ.get("KILNTEST_REEXEC") and os.access(system, os.X_OK)
            and os.path.realpath(sys.executable) != os.path.realpath(system)):
        probe = subprocess.run([system, "-c", "import " + ", ".join(modules)], capture_output=True, timeout=30)
        if probe.returncode == 0:
            sys.stderr.write("%s: %s lacks %s; running under %s\n" % (test_name, sys.executable, modules[0], system))
            sys.stderr.flush()
            os.environ["KILNTEST_REEXEC"] = "1"
            os.execv(system, [system] + sys.argv)
    sys.stderr.write("%s: FAILED: cannot import %s (%s). Install Debian's %s (scripts/deps.sh) for %s.\n"
                     % (test_name, modules[0], error, package, sys.executable))
    sys.exit(1)


def free_port():
    """A port that was free a moment ago (bind port 0, read it, close)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((HOST, 0))
        return s.getsockname()[1]
    finally:
        s.close()


# --------------------------------------------------------------------------------------
# Server process


class ServerProcess:
    """One server binary started with --port P --threads 2 plus extra flags."""

    def __init__(self, binary, extra_args=(), threads=2, env=None):
        if not binary:
            raise RuntimeError("no server binary given (--server / --hello)")
        self.binary = binary
        self.extra_args = list(extra_args)
        self.threads = threads
        self.env = dict(os.environ, **env) if env else None  # extra variables for the server
        self.proc = None
        self.port = None
        self.log = None

    def start(self):
        """Starts the server and waits until it accepts. Retries on another port
        (bounded) if the chosen one was taken in the meantime."""
        last_error = None
        for _attempt in range(3):
            self.port = free_port()
            self.log = tempfile.TemporaryFile()
            args = [self.binary, "--port", str(self.port), "--threads", str(self.threads)]
            args += self.extra_args
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, env=self.env,
                                         stdout=self.log, stderr=subprocess.STDOUT)
            try:
                self._wait_accepting()
                self._wait_every_worker()
                return self
            except Exception as e:  # noqa: BLE001 -- stop what we started, then retry
                last_error = e
                self.stop()
        raise RuntimeError("server did not start: %s\n--- server output ---\n%s"
                           % (last_error, self.output()))

    def _wait_accepting(self):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited with status %d" % self.proc.returncode)
            try:
                s = socket.create_connection((HOST, self.port), timeout=0.5)
                s.close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("server not accepting on port %d after %.0f s"
                           % (self.port, START_TIMEOUT))

    def _wait_every_worker(self):
        """Under a supervisor, the listening sockets accept (into their backlog) before
        any worker serves, and new connections go only to the slots that serve yet
        (reuseport steering). A test of several workers starts once the supervisor
        says every one serves. A server that never says it (a worker that cannot
        start, on purpose) is left to the test after START_TIMEOUT."""
        args = self.extra_args
        workers = next((args[i + 1] for i, a in enumerate(args[:-1]) if a == "--workers"), "1")
        if not workers.isdigit() or int(workers) < 2:
            return
        deadline = time.monotonic() + START_TIMEOUT * TIME_SCALE
        while time.monotonic() < deadline and self.proc.poll() is None:
            if self.wait_for_output(r"ready: every worker serves", timeout=0.2):
                return
        sys.stderr.write("harness: the supervisor did not say every worker serves\n")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        """SIGTERM, wait up to STOP_GRACE, then SIGKILL. Returns the exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=STOP_GRACE)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=STOP_GRACE)
            except ProcessLookupError:
                pass
        return self.proc.returncode

    def output(self, limit=8000):
        """What the server printed (stdout and stderr), the last `limit` bytes."""
        if self.log is None:
            return ""
        # pread, not seek+read: the server shares this file's offset, and moving it
        # while the server runs would make its next write overwrite earlier output.
        try:
            fd = self.log.fileno()
            size = os.fstat(fd).st_size
            start = max(0, size - limit)
            data = os.pread(fd, size - start, start)
        except (OSError, ValueError):
            return ""
        return data.decode("utf-8", "replace")

    def children(self):
        """PIDs of the server's direct children (a supervisor's workers), from /proc."""
        if self.proc is None:
            return []
        return child_pids(self.proc.pid)

    def wait_for_output(self, pattern, timeout=5.0, count=1):
        """Polls the server output until regex `pattern` matches at least `count`
        times. Returns the list of matches, or [] if that did not happen in time."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            matches = list(regex.finditer(self.output(limit=1 << 24)))
            if len(matches) >= count:
                return matches
            if time.monotonic() >= deadline:
                return []
            time.sleep(0.05)


def _proc_stat(pid):
    """(state, ppid) of a process from /proc/PID/stat, or None if it is gone."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            data = f.read()
    except OSError:
        return None
    # The command name is in parentheses and may itself contain spaces or ')'.
    fields = data[data.rindex(b")") + 2:].split()
    return fields[0].decode(), int(fields[1])


def child_pids(parent):
    """PIDs of the live (not zombie) processes whose parent is `parent`."""
    out = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for name in entries:
        if not name.isdigit():
            continue
        st = _proc_stat(int(name))
        if st is not None and st[1] == parent and st[0] != "Z":
            out.append(int(name))
    return sorted(out)


def pid_running(pid):
    """True if process `pid` exists and is not a zombie."""
    st = _proc_stat(pid)
    return st is not None and st[0] != "Z"


# The system call a thread in sleep_for() waits in: clock_nanosleep (glibc's nanosleep
# makes it). The sanitizers' own background threads (TSan has one) sleep in nanosleep,
# another number, and are not counted.
_CLOCK_NANOSLEEP = {"x86_64": "230", "aarch64": "115"}.get(platform.machine())


def _threads_in_sleep_for(pid):
    """How many threads of process `pid` and of its children are in clock_nanosleep, from
    /proc/PID/task/TID/syscall; None where /proc shows no thread's system call."""
    n, shown = 0, False
    for p in [pid] + child_pids(pid):
        try:
            tids = os.listdir("/proc/%d/task" % p)
        except OSError:
            continue
        for tid in tids:
            try:
                with open("/proc/%d/task/%s/syscall" % (p, tid)) as f:
                    call = f.read().split(" ", 1)[0].strip()
            except OSError:
                continue
            shown = True
            n += call == _CLOCK_NANOSLEEP
    return n if shown and _CLOCK_NANOSLEEP else None


def wait_for_sleeping_threads(pid, count=1, timeout=5.0 * TIME_SCALE, fallback=0.2):
    """Waits until `count` threads of server process `pid` (or of its workers) sleep in
    sleep_for(), as /sleep's handler and /async/blocking's job do: those requests are
    then in their handlers. Nothing else in a serving server sleeps so (its loops wait
    in epoll_wait, idle threads on a futex). True once seen; False if not within
    `timeout`. Where /proc does not show a thread's system call (another architecture,
    a sandbox) this cannot tell: it sleeps `fallback` seconds, as the tests did, and
    returns None."""
    deadline = time.monotonic() + timeout
    while True:
        n = _threads_in_sleep_for(pid)
        if n is None:
            time.sleep(fallback)
            return None
        if n >= count:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def assert_no_sanitizer_report(output):
    """Raises AssertionError if a server's output holds an ASan/LSan/UBSan report."""
    if "Sanitizer" in output or "runtime error:" in output:
        raise AssertionError("sanitizer report from the server:\n" + output)


def check_clean_stop(server):
    """Stops `server` with SIGTERM; raises AssertionError unless it exited 0 with no
    sanitizer report in its output (in `make asan` builds a leak or memory error in
    the server fails here). A server that never started passes."""
    status = server.stop()
    out = server.output(limit=20000)
    if status is None:  # never started
        return
    assert_no_sanitizer_report(out)
    if status != 0:
        raise AssertionError("server exited with status %s after SIGTERM:\n%s" % (status, out))


# --------------------------------------------------------------------------------------
# Raw HTTP client


class Response:
    def __init__(self, version, status, reason, headers, body, raw_head):
        self.version = version      # "HTTP/1.1"
        self.status = status        # int
        self.reason = reason        # str
        self.headers = headers      # [(name, value)] in order, as sent
        self.body = body            # bytes (decoded from chunked if it was chunked)
        self.raw_head = raw_head    # bytes, through the empty line
        self.chunked = False
        self.chunk_extensions = []  # raw extension strings seen in chunk-size lines

    def header(self, name, default=None):
        """Value of the first header with this name (case-insensitive)."""
        lname = name.lower()
        for n, v in self.headers:
            if n.lower() == lname:
                return v
        return default

    def header_all(self, name):
        lname = name.lower()
        return [v for n, v in self.headers if n.lower() == lname]

    def header_tokens(self, name):
        """Comma-separated tokens of every field with this name, lower-cased."""
        out = []
        for v in self.header_all(name):
            out += [t.strip().lower() for t in v.split(",") if t.strip()]
        return out

    def __repr__(self):
        return "<Response %d %r headers=%r body[:80]=%r>" % (
            self.status, self.reason, self.headers, self.body[:80])


class ProtocolError(AssertionError):
    """The server sent bytes that are not a valid HTTP/1.1 response."""


class ConnectionClosed(AssertionError):
    """The server closed (or reset) the connection before a full response."""


_STATUS_LINE = re.compile(rb"^(HTTP/\d\.\d) (\d{3}) ?(.*)$")


class RawConnection:
    """A TCP connection to 127.0.0.1:port (or, when port is a path, to that unix
    socket) that sends exact bytes and parses responses. Bytes received beyond one
    response are kept for the next one."""

    def __init__(self, port, timeout=READ_TIMEOUT, nodelay=False, source=None):
        self.port = port
        self.timeout = timeout
        if isinstance(port, str):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            self.sock.connect(port)
        else:
            # source: the local address to connect from (another 127.x.y.z is another client)
            self.sock = socket.create_connection((HOST, port), timeout=timeout,
                                                 source_address=(source, 0) if source else None)
        if nodelay:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.eof = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    # -- sending ----------------------------------------------------------------------

    def send(self, data, tolerate_close=False):
        """Sends all of `data`. With tolerate_close, a server that already closed
        (EPIPE/ECONNRESET) is not an error: it may answer and close before reading
        everything, which is allowed for a request it rejects."""
        try:
            self.sock.sendall(data)
            return True
        except (BrokenPipeError, ConnectionResetError):
            if tolerate_close:
                return False
            raise

    def send_in_pieces(self, data, cuts, pause=0.0):
        """Sends data split at the given byte offsets, one send() per piece."""
        prev = 0
        for cut in sorted(set(c for c in cuts if 0 < c < len(data))) + [len(data)]:
            self.sock.sendall(data[prev:cut])
            prev = cut
            if pause:
                time.sleep(pause)

    # -- receiving --------------------------------------------------------------------

    def _recv_more(self, deadline, what):
        """Reads at least one more byte into self.buf or raises ConnectionClosed."""
        if self.eof:
            raise ConnectionClosed("connection closed by server while reading %s; have %r"
                                   % (what, self.buf[:200]))
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError("timed out reading %s; have %r" % (what, self.buf[:200]))
        self.sock.settimeout(min(self.timeout, remaining))
        try:
            data = self.sock.recv(1 << 20)
        except socket.timeout:
            raise AssertionError("no data for %.1f s while reading %s; have %r"
                                 % (min(self.timeout, remaining), what, self.buf[:200]))
        except ConnectionResetError:
            self.eof = True
            raise ConnectionClosed("connection reset by server while reading %s; have %r"
                                   % (what, self.buf[:200]))
        if not data:
            self.eof = True
            raise ConnectionClosed("connection closed by server while reading %s; have %r"
                                   % (what, self.buf[:200]))
        self.buf += data

    def _take_exactly(self, n, deadline, what):
        chunks = []
        need = n
        # Avoid quadratic copying for large bodies: take from buf, then read straight.
        take = self.buf[:need]
        chunks.append(take)
        self.buf = self.buf[len(take):]
        need -= len(take)
        while need > 0:
            self._recv_more(deadline, what)
            take = self.buf[:need]
            chunks.append(take)
            self.buf = self.buf[len(take):]
            need -= len(take)
        return b"".join(chunks)

    def _take_line(self, deadline, what, limit=64 * 1024):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line = self.buf[:i]
                self.buf = self.buf[i + 2:]
                return line
            if len(self.buf) > limit:
                raise ProtocolError("line longer than %d bytes in %s" % (limit, what))
            self._recv_more(deadline, what)

    def read_head(self, deadline=None):
        """Reads one response head; returns (version, status, reason, headers, raw)."""
        if deadline is None:
            deadline = time.monotonic() + RESPONSE_TIMEOUT
        while b"\r\n\r\n" not in self.buf:
            if len(self.buf) > MAX_HEAD_BYTES:
                raise ProtocolError("response head larger than %d bytes" % MAX_HEAD_BYTES)
            self._recv_more(deadline, "response head")
        end = self.buf.index(b"\r\n\r\n") + 4
        raw, self.buf = self.buf[:end], self.buf[end:]
        lines = raw[:-4].split(b"\r\n")
        m = _STATUS_LINE.match(lines[0])
        if not m:
            raise ProtocolError("bad status line %r" % lines[0])
        headers = []
        for line in lines[1:]:
            if b":" not in line or line[:1] in (b" ", b"\t"):
                raise ProtocolError("bad response header line %r" % line)
            name, value = line.split(b":", 1)
            if name != name.strip() or not name:
                raise ProtocolError("bad response header name %r" % name)
            headers.append((name.decode("latin-1"), value.strip().decode("latin-1")))
        return (m.group(1).decode(), int(m.group(2)), m.group(3).decode("latin-1"),
                headers, raw)

    def read_response(self, method="GET", timeout=RESPONSE_TIMEOUT):
        """Reads exactly one response (an interim 1xx counts as one). The body is
        framed by chunked coding, Content-Length, or (neither) the server's close."""
        deadline = time.monotonic() + timeout
        version, status, reason, headers, raw = self.read_head(deadline)
        r = Response(version, status, reason, headers, b"", raw)
        if method == "HEAD" or 100 <= status < 200 or status in (204, 304):
            return r
        te = r.header_tokens("Transfer-Encoding")
        if te:
            if te[-1] != "chunked":
                raise ProtocolError("unsupported response Transfer-Encoding %r" % te)
            r.chunked = True
            r.body = self._read_chunked(deadline, r)
            return r
        cls = r.header_all("Content-Length")
        if cls:
            if len(set(cls)) != 1 or not cls[0].isdigit():
                raise ProtocolError("bad response Content-Length %r" % cls)
            r.body = self._take_exactly(int(cls[0]), deadline, "response body")
            return r
        # Close-delimited body.
        chunks = []
        while True:
            try:
                self._recv_more(deadline, "close-delimited body")
            except ConnectionClosed:
                break
            chunks.append(self.buf)
            self.buf = b""
        r.body = b"".join(chunks) + self.buf
        self.buf = b""
        return r

    def _read_chunked(self, deadline, r):
        parts = []
        while True:
            line = self._take_line(deadline, "chunk size line")
            size_part, _, ext = line.partition(b";")
            if ext:
                r.chunk_extensions.append(ext)
            size_text = size_part.strip()
            if not size_text or any(c not in b"0123456789abcdefABCDEF" for c in size_text):
                raise ProtocolError("bad chunk size line %r" % line)
            size = int(size_text, 16)
            if size == 0:
                break
            parts.append(self._take_exactly(size, deadline, "chunk data"))
            if self._take_exactly(2, deadline, "chunk CRLF") != b"\r\n":
                raise ProtocolError("chunk data not followed by CRLF")
        while self._take_line(deadline, "trailer") != b"":
            pass
        return b"".join(parts)

    def request(self, method, target, headers=(), body=None, version="HTTP/1.1"):
        """Sends one well-formed request and returns its response."""
        self.send(build_request(method, target, headers, body, version))
        return self.read_response(method)

    # -- closure ----------------------------------------------------------------------

    def wait_closed(self, timeout=3.0):
        """Waits until the server closes: recv returns b'' or ECONNRESET. Returns
        (closed, extra_bytes, seconds). Bytes that arrive meanwhile are collected."""
        start = time.monotonic()
        deadline = start + timeout
        extra = self.buf
        self.buf = b""
        if self.eof:
            return True, extra, 0.0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False, extra, time.monotonic() - start
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return False, extra, time.monotonic() - start
            except ConnectionResetError:
                self.eof = True
                return True, extra, time.monotonic() - start
            except OSError as e:
                if e.errno in (errno.ECONNRESET, errno.EPIPE):
                    self.eof = True
                    return True, extra, time.monotonic() - start
                raise
            if not data:
                self.eof = True
                return True, extra, time.monotonic() - start
            extra += data
            if len(extra) > MAX_HEAD_BYTES:
                return False, extra, time.monotonic() - start

    def assert_closed(self, test, timeout=3.0, msg=""):
        """Fails `test` unless the server closes within `timeout` without sending
        anything more."""
        closed, extra, _ = self.wait_closed(timeout)
        test.assertEqual(extra, b"", "unexpected bytes after the response %s" % msg)
        test.assertTrue(closed, "server did not close the connection within %.1f s %s"
                        % (timeout, msg))

    def assert_open(self, test, wait=0.2, msg=""):
        """Fails `test` if the server closes or sends anything within `wait`."""
        closed, extra, _ = self.wait_closed(wait)
        test.assertEqual(extra, b"", "unexpected bytes %s" % msg)
        test.assertFalse(closed, "server closed the connection %s" % msg)


def timed_get(port, path, timeout=10):
    """GET path on a fresh connection with http.client: (status, headers dict, body,
    seconds it took)."""
    c = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        t0 = time.monotonic()
        c.request("GET", path)
        r = c.getresponse()
        body = r.read()
        return r.status, dict(r.getheaders()), body, time.monotonic() - t0
    finally:
        c.close()


def build_request(method, target, headers=(), body=None, version="HTTP/1.1", host="x"):
    """Bytes of a well-formed request. Adds Host (unless given) and Content-Length
    for a body (unless a Content-Length or Transfer-Encoding is given)."""
    names = {n.lower() for n, _ in headers}
    lines = ["%s %s %s" % (method, target, version)]
    if "host" not in names and host is not None:
        lines.append("Host: %s" % host)
    for n, v in headers:
        lines.append("%s: %s" % (n, v))
    if body is not None and "content-length" not in names and "transfer-encoding" not in names:
        lines.append("Content-Length: %d" % len(body))
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + (body or b"")


def chunked(body, sizes=(7, 1, 300)):
    """Chunked encoding of body with chunk sizes cycling through `sizes`."""
    out = []
    i = 0
    k = 0
    while i < len(body):
        n = sizes[k % len(sizes)]
        k += 1
        piece = body[i:i + n]
        i += len(piece)
        out.append(b"%x\r\n%s\r\n" % (len(piece), piece))
    out.append(b"0\r\n\r\n")
    return b"".join(out)


IMF_FIXDATE = re.compile(
    r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
    r" \d{4} \d\d:\d\d:\d\d GMT$")


# --------------------------------------------------------------------------------------
# Test case base and entry point


class ServerTestCase(unittest.TestCase):
    """One server process per test class, started in setUpClass, always stopped."""

    binary_key = "server"
    server_args = ()
    server_env = {}  # extra environment variables for the server

    @classmethod
    def setUpClass(cls):
        cls.server = ServerProcess(BINARIES[cls.binary_key], cls.server_args, env=cls.server_env)
        # Registered before start: stop() is safe on a process that never started.
        cls.addClassCleanup(cls._stop_and_check)
        cls.server.start()
        cls.port = cls.server.port

    @classmethod
    def _stop_and_check(cls):
        """A graceful stop must exit 0 and leave no sanitizer report (in `make asan`
        builds a leak or memory error in the server fails the test class here)."""
        check_clean_stop(cls.server)

    def connect(self, **kw):
        return RawConnection(self.port, **kw)

    def get(self, target, headers=()):
        """One request on a fresh connection."""
        with self.connect() as c:
            return c.request("GET", target, headers)

    def assert_server_alive(self):
        """The server process runs and a fresh connection still gets a 200."""
        self.assertTrue(self.server.alive(), "server process died:\n" + self.server.output())
        r = self.get("/plaintext")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.body, b"Hello, World!")

    def tearDown(self):
        # A crash inside one test must not hide behind later, confusing failures.
        if hasattr(self, "server") and not self.server.alive():
            self.fail("server process exited (status %s); output:\n%s"
                      % (self.server.proc.returncode, self.server.output()))


# --------------------------------------------------------------------------------------
# PostgreSQL, for tests run inside tests/pg/pg_server.py (which sets KILN_TEST_PG_URL)


def pg_url():
    url = os.environ.get("KILN_TEST_PG_URL")
    if not url:
        raise RuntimeError("KILN_TEST_PG_URL is not set: run this test through tests/pg/pg_server.py (ctest does)")
    return url


def psql(url, sql):
    """Runs sql with psql on the database at url; its output, trimmed. Raises on an error."""
    import shutil
    exe = shutil.which("psql")
    if not exe:
        raise RuntimeError("psql not found: install Debian's postgresql-client (scripts/deps.sh)")
    r = subprocess.run([exe, url, "-X", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True,
                       timeout=30)
    if r.returncode != 0:
        raise RuntimeError("psql failed on %r: %s" % (sql, r.stderr.strip()))
    return r.stdout.strip()


def fresh_pg_database(name):
    """A new, empty database on the test server; its URL."""
    psql(pg_url(), "DROP DATABASE IF EXISTS %s" % name)
    psql(pg_url(), "CREATE DATABASE %s" % name)
    return pg_url().rsplit("/", 1)[0] + "/" + name


def main():
    """Parses --server/--hello, then runs the calling module's tests. Exits 0 only
    if every test passed."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", help="path to kiln_test_server")
    parser.add_argument("--hello", help="path to the hello example")
    parser.add_argument("--kiln", help="path to the kiln command-line tool (kiln bench)")
    parser.add_argument("--generic", help="path to the generic example (the session study app)")
    args, rest = parser.parse_known_args()
    BINARIES["server"] = args.server
    BINARIES["hello"] = args.hello
    BINARIES["kiln"] = args.kiln
    BINARIES["generic"] = args.generic
    program = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    result = program.result
    ok = result.wasSuccessful() and result.testsRun > 0
    sys.exit(0 if ok else 1)
