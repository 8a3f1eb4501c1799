"""The access and error logs. Access log: one line per response in combined or JSON format, hostile bytes
escaped so no line can be forged, lines flushed within about a second and at a
graceful stop, and the file reopened on SIGUSR1 (logrotate)."""
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
import unittest

import harness

COMBINED = re.compile(r'^(\S+) - - \[(\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000)\] "([^"]*)" (\d{3}) (\d+) "([^"]*)" "([^"]*)" (\d+\.\d{6})$')


def send(port, data):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            d = s.recv(65536)
            if not d:
                return out
            out += d


def wait_lines(path, n, timeout=5.0, containing=None):
    """The file's lines once it has n of them (and, if given, one containing that text)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                lines = f.read().splitlines()
            if len(lines) >= n and (containing is None or any(containing in l for l in lines)):
                return lines
        time.sleep(0.05)
    raise AssertionError("fewer than %d lines%s in %s after %.1f s" %
                         (n, "" if containing is None else " (one with %r)" % containing, path, timeout))


def is_root_warning(line):
    """The warning a server started as root without --user gives (tests run as root in CI)."""
    return "started as root without `user`" in line


def wait_reopened(path, timeout=5.0):
    """After a rename and SIGUSR1: the worker made a new access log under the old name
    (only a worker opens the access log, so the file is its reopen)."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() >= deadline:
            raise AssertionError("%s not made again within %.1f s of SIGUSR1" % (path, timeout))
        time.sleep(0.02)


def pid_of(port):
    """The pid of the worker that answers /pid on a fresh connection."""
    with harness.RawConnection(port, timeout=5) as c:
        c.send(harness.build_request("GET", "/pid"))
        return c.read_response(timeout=5).body


class Server:
    def __init__(self, *extra):
        self.port = harness.free_port()
        self.proc = subprocess.Popen([harness.BINARIES["server"], "--port", str(self.port), "--workers", "1",
                                      "--threads", "1", *extra], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise AssertionError("server did not start")

    def stop(self):
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        harness.assert_no_sanitizer_report(err)
        return self.proc.returncode, err


class AccessLog(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "access.log")

    def tearDown(self):
        self.dir.cleanup()

    def test_combined_lines_with_escaped_hostile_bytes(self):
        srv = Server("--access-log", self.path)
        try:
            send(srv.port, b'GET /users/7?x=1 HTTP/1.1\r\nHost: h\r\nUser-Agent: ev"il\xff\r\n'
                           b'Referer: http://r/\r\nConnection: close\r\n\r\n')
            send(srv.port, b"HEAD /plaintext HTTP/1.0\r\n\r\n")
            send(srv.port, b"BAD REQUEST\r\n\r\n")
            lines = wait_lines(self.path, 3)
        finally:
            code, err = srv.stop()
        self.assertEqual(code, 0, err)
        parsed = [COMBINED.match(l) for l in lines]
        self.assertTrue(all(parsed), lines)
        first = parsed[0].groups()
        self.assertEqual(first[0], "127.0.0.1")
        self.assertEqual(first[2], "GET /users/7?x=1 HTTP/1.1")
        self.assertEqual((first[3], first[4]), ("200", "6"))  # "user 7"
        self.assertEqual(first[5], "http://r/")
        self.assertEqual(first[6], r"ev\x22il\xFF")
        self.assertEqual(parsed[1].group(3), "HEAD /plaintext HTTP/1.0")
        self.assertEqual(parsed[1].group(5), "0")  # HEAD: no body bytes
        self.assertEqual((parsed[2].group(3), parsed[2].group(4)), ("-", "400"))

    def test_json_lines_parse_and_carry_the_fields(self):
        srv = Server("--access-log", self.path, "--access-log-format", "json")
        try:
            send(srv.port, b'GET /query?name=a%20b HTTP/1.1\r\nHost: h\r\nUser-Agent: a"b\\c\xff\xc3\xa9\xe2\x82\r\nConnection: close\r\n\r\n')
            send(srv.port, b"POST /plaintext HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            lines = wait_lines(self.path, 2)
        finally:
            code, err = srv.stop()
        self.assertEqual(code, 0, err)
        records = [json.loads(l) for l in lines]
        self.assertEqual(records[0]["target"], "/query?name=a%20b")
        # Ill-formed UTF-8 (a lone 0xFF, a cut 3-byte character) becomes U+FFFD per run, so
        # the line stays JSON; the well-formed é between them is kept.
        self.assertEqual(records[0]["user_agent"], 'a"b\\c\ufffdé\ufffd')
        self.assertEqual(records[0]["status"], 200)
        self.assertEqual(records[0]["remote"], "127.0.0.1")
        self.assertRegex(records[0]["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertIsInstance(records[0]["duration_us"], int)
        self.assertEqual((records[1]["method"], records[1]["status"]), ("POST", 405))

    def test_sigusr1_reopens_the_file_after_rotation(self):
        srv = Server("--access-log", self.path)
        try:
            send(srv.port, b"GET /plaintext HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
            wait_lines(self.path, 1)
            os.rename(self.path, self.path + ".1")
            srv.proc.send_signal(signal.SIGUSR1)
            wait_reopened(self.path)
            send(srv.port, b"GET /users/9 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
            fresh = wait_lines(self.path, 1)
        finally:
            code, err = srv.stop()
        self.assertEqual(code, 0, err)
        self.assertIn("GET /users/9", fresh[0])
        with open(self.path + ".1") as f:
            self.assertNotIn("/users/9", f.read())

    def test_a_draining_worker_reopens_the_file_too(self):
        # After a SIGHUP the old worker drains its streams (a WebSocket may take
        # minutes); a rotation meanwhile left its lines going to the renamed file,
        # which logrotate then compresses away.
        srv = Server("--access-log", self.path)
        try:
            send(srv.port, b"GET /plaintext HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
            wait_lines(self.path, 1)
            old = pid_of(srv.port)
            with harness.RawConnection(srv.port, timeout=10) as c:
                c.send(b"GET /events?n=3&ms=2000 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
                time.sleep(0.3)
                srv.proc.send_signal(signal.SIGHUP)  # the worker with the stream drains
                deadline = time.monotonic() + 3  # until the new worker answers alone: the old one drains
                while time.monotonic() < deadline and any(pid_of(srv.port) == old for _ in range(3)):
                    time.sleep(0.05)
                os.rename(self.path, self.path + ".1")
                srv.proc.send_signal(signal.SIGUSR1)
                c.read_response(timeout=10)
            # (The probes' lines, buffered in the new worker, may reach the new file first.)
            fresh = wait_lines(self.path, 1, containing="GET /events")
        finally:
            code, err = srv.stop()
        self.assertEqual(code, 0, err)
        self.assertIn("GET /events", "".join(fresh))
        with open(self.path + ".1") as f:
            self.assertNotIn("/events", f.read())

    # Three long fields (the agent 10,000 bytes) and a short one; on a pipe a line
    # over PIPE_BUF could be split and interleaved with another worker's lines.
    LONG = (b"GET /plaintext?q=" + b"t" * 3000 + b" HTTP/1.1\r\nHost: h\r\nReferer: http://r/" + b"r" * 2000 +
            b"\r\nUser-Agent: " + "\u00e9".encode() * 3000 + b'"\\' * 500 + b"\r\nConnection: close\r\n\r\n")

    def read_fifo_lines(self, *extra):
        """Starts a server logging to a FIFO, sends LONG, and returns the line it wrote."""
        fifo = os.path.join(self.dir.name, "access.fifo")
        os.mkfifo(fifo)
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader first, or the server's open waits
        data = b""
        try:
            srv = Server("--access-log", fifo, *extra)
            try:
                send(srv.port, self.LONG)
                deadline = time.monotonic() + 5
                while not data.endswith(b"\n") and time.monotonic() < deadline:
                    try:
                        data += os.read(fd, 65536)
                    except BlockingIOError:
                        time.sleep(0.05)
            finally:
                code, err = srv.stop()
            self.assertEqual(code, 0, err)
        finally:
            os.close(fd)
        self.assertTrue(data.endswith(b"\n"), data[-200:])
        return data.decode().splitlines()

    def test_on_a_pipe_a_long_line_is_cut_to_pipe_buf(self):
        (line,) = self.read_fifo_lines()
        self.assertLessEqual(len(line) + 1, 4096)
        m = COMBINED.match(line)
        self.assertTrue(m, line[:300])
        # Each field gets an equal share of what the line has room for, or less if
        # it needs less: the referer and agent get the same, the request line's target too.
        self.assertTrue(m.group(3).startswith("GET /plaintext?q=ttt"), m.group(3)[:100])
        self.assertTrue(m.group(3).endswith("t... HTTP/1.1"), m.group(3)[-100:])
        self.assertTrue(m.group(6).startswith("http://r/rrr") and m.group(6).endswith("r..."), m.group(6)[-20:])
        self.assertTrue(m.group(7).startswith(r"\xC3\xA9") and m.group(7).endswith("..."), m.group(7)[-20:])
        self.assertGreater(len(m.group(7)), 1000)
        self.assertLess(abs(len(m.group(6)) - len(m.group(7))), 16)

    def test_on_a_pipe_a_long_json_line_stays_json(self):
        (line,) = self.read_fifo_lines("--access-log-format", "json")
        self.assertLessEqual(len(line.encode()) + 1, 4096)
        record = json.loads(line)
        self.assertIs(record["truncated"], True)
        self.assertTrue(record["target"].startswith("/plaintext?q=ttt") and record["target"].endswith("t..."))
        # Cut between characters: é whole, none split into U+FFFD.
        self.assertRegex(record["user_agent"], r"^(\u00e9)+\.\.\.$")
        self.assertEqual(record["status"], 200)

    def test_a_file_keeps_a_long_line_whole(self):
        srv = Server("--access-log", self.path, "--access-log-format", "json")
        try:
            send(srv.port, self.LONG)
            (line,) = wait_lines(self.path, 1)
        finally:
            code, err = srv.stop()
        self.assertEqual(code, 0, err)
        record = json.loads(line)
        self.assertNotIn("truncated", record)
        self.assertEqual(record["user_agent"], "\u00e9" * 3000 + '"\\' * 500)
        self.assertEqual(len(record["target"]), len("/plaintext?q=") + 3000)

    def test_unwritable_destination_is_refused_before_starting(self):
        p = subprocess.run([harness.BINARIES["server"], "--port", str(harness.free_port()), "--access-log",
                            "/nonexistent-dir/a.log"], capture_output=True, text=True, timeout=10)
        self.assertEqual(p.returncode, 2)
        self.assertIn("cannot open access log '/nonexistent-dir/a.log'", p.stderr)


class ErrorLog(unittest.TestCase):
    def test_file_level_and_reopen(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "error.log")
            srv = Server("--error-log", path, "--log-level", "warn")
            try:
                status = send(srv.port, b"GET /throw HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
                self.assertTrue(status.startswith(b"HTTP/1.1 500"))
                lines = [l for l in wait_lines(path, 1, containing="[error]") if not is_root_warning(l)]
                self.assertRegex(lines[0], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \[error\] \[\d+\] GET /throw: handler threw .*boom$")
                os.rename(path, path + ".1")
                srv.proc.send_signal(signal.SIGUSR1)
                time.sleep(0.3)
                send(srv.port, b"GET /throw HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
                fresh = wait_lines(path, 1)
            finally:
                code, err = srv.stop()
            self.assertEqual(code, 0, err)
            self.assertIn("handler threw", fresh[0])
            with open(path) as f:
                # "info" lines (start, stop) are below the "warn" level.
                self.assertNotIn("[info]", f.read())
            self.assertNotIn("handler threw", err, "errors go to the file, not stderr")

    def test_exception_text_cannot_forge_or_split_a_line(self):
        # Security review note: exception text reached the error log unescaped.
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "error.log")
            srv = Server("--error-log", path, "--log-level", "warn")
            try:
                send(srv.port, b"GET /throw-lines HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
                lines = [l for l in wait_lines(path, 1, containing="[error]") if not is_root_warning(l)]
                time.sleep(0.2)
                with open(path, "rb") as f:
                    data = b"".join(l for l in f if not is_root_warning(l.decode()))
            finally:
                code, err = srv.stop()
            self.assertEqual(code, 0, err)
            self.assertEqual(data.count(b"\n"), 1, data)
            self.assertNotIn(b"\r", data)
            self.assertNotIn(b"\x1b", data)
            self.assertIn("handler threw std::runtime_error: first\\x0A2026-01-01T00:00:00Z [error] [1] forged"
                          "\\x0D\\x1B[31m", lines[0])


class LogFilesAsRoot(unittest.TestCase):
    """Security finding 4: started as root with --user, kiln opened log paths
    following symlinks and chown()ed the path, so the app user could plant
    access.log -> /etc/shadow and be handed the target. Needs root, as the attack
    does; CI runs as root."""

    def setUp(self):
        if os.geteuid() != 0:
            self.fail("this test needs root (kiln started as root with --user nobody); run `make test` as root")
        import pwd
        self.nobody = pwd.getpwnam("nobody")
        self.dir = tempfile.mkdtemp(prefix="kiln-logs-")
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", self.dir]))
        # A root-owned file only root may read: what the attacker wants handed over.
        self.target = os.path.join(tempfile.mkdtemp(prefix="kiln-target-"), "secret")
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", os.path.dirname(self.target)]))
        with open(self.target, "w") as f:
            f.write("root only\n")
        os.chmod(self.target, 0o600)

    def start(self, *flags):
        return subprocess.run([harness.BINARIES["server"], "--port", str(harness.free_port()), "--workers", "1",
                               "--threads", "1", "--user", "nobody", *flags],
                              capture_output=True, text=True, timeout=10)

    def assert_target_untouched(self):
        st = os.stat(self.target)
        self.assertEqual((st.st_uid, st.st_mode & 0o777), (0, 0o600))
        with open(self.target) as f:
            self.assertEqual(f.read(), "root only\n")

    def test_a_symlink_planted_by_the_app_user_is_refused(self):
        os.chown(self.dir, self.nobody.pw_uid, self.nobody.pw_gid)  # the workers must reopen logs here
        for flag in ("--access-log", "--error-log"):
            link = os.path.join(self.dir, flag[2:] + ".log")
            os.symlink(self.target, link)
            p = self.start(flag, link)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("symbolic link", p.stderr)
            self.assert_target_untouched()

    def test_a_linked_directory_on_the_way_is_refused(self):
        # The link is a directory on the way, not the file: in a sticky directory
        # everyone may write (or one the app user owns), pub/logs -> a directory of
        # root's. Only the last directory was checked (through the link) and only the
        # file was opened without following one: root's file was handed to nobody.
        os.chmod(self.dir, 0o1777)
        roots = os.path.dirname(self.target)
        os.symlink(roots, os.path.join(self.dir, "logs"))
        p = self.start("--access-log", os.path.join(self.dir, "logs", os.path.basename(self.target)))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("a symbolic link or not a directory", p.stderr)
        self.assert_target_untouched()
        p = self.start("--access-log", os.path.join(self.dir, "logs", "new.log"))  # nor made there
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertFalse(os.path.exists(os.path.join(roots, "new.log")))

    def test_a_hard_link_is_refused(self):
        link = os.path.join(self.dir, "access.log")
        os.link(self.target, link)
        p = self.start("--access-log", link)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("hard links", p.stderr)
        self.assert_target_untouched()

    def test_a_directory_others_can_write_is_refused(self):
        for mode, owner, who in ((0o777, 0, "everyone"), (0o755, 12345, "its owner (uid 12345)")):
            os.chmod(self.dir, mode)
            os.chown(self.dir, owner, 0)
            path = os.path.join(self.dir, "access.log")
            p = self.start("--access-log", path)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("its directory %s is writable by %s" % (self.dir, who), p.stderr)
            self.assertFalse(os.path.exists(path))

    def test_log_files_are_created_for_the_app_user_who_can_reopen_them(self):
        os.chown(self.dir, self.nobody.pw_uid, self.nobody.pw_gid)
        path = os.path.join(self.dir, "access.log")
        srv = Server("--user", "nobody", "--access-log", path)
        try:
            send(srv.port, b"GET /users/1 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
            wait_lines(path, 1)
            self.assertEqual(os.stat(path).st_uid, self.nobody.pw_uid)
            self.assertEqual(os.stat(path).st_mode & 0o077, 0, "a log is its owner's only")
            os.rename(path, path + ".1")  # logrotate, then SIGUSR1: the workers (nobody) make the new file
            srv.proc.send_signal(signal.SIGUSR1)
            wait_reopened(path)
            send(srv.port, b"GET /users/2 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
            self.assertIn("/users/2", wait_lines(path, 1)[0])
        finally:
            code, err = srv.stop()
        self.assertEqual(code, 0, err)


if __name__ == "__main__":
    harness.main()
