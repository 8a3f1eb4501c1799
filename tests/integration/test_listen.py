"""Several listen addresses at once: IPv4, IPv6 and a unix socket, from flags or a
config array, in every concurrency model; the unix socket file is removed at stop,
a stale one is replaced, and anything else in the way is refused."""
import http.client
import os
import pwd
import socket
import subprocess
import tempfile
import time
import unittest

import harness


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=5)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(5)
        self.sock.connect(self.path)


def body(conn):
    try:
        conn.request("GET", "/plaintext")
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def start(args, env=None):
    proc = subprocess.Popen([harness.BINARIES["hello"], *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, **(env or {})))
    return proc


def wait_tcp(host, port, family=socket.AF_INET):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            s = socket.socket(family)
            s.settimeout(1)
            s.connect((host, port))
            s.close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("nothing listens on %s:%d" % (host, port))


def stop(proc):
    proc.terminate()
    _, err = proc.communicate(timeout=15)
    harness.assert_no_sanitizer_report(err)
    return proc.returncode, err


class ListenAddresses(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.sock = os.path.join(self.dir.name, "kiln.sock")

    def tearDown(self):
        self.dir.cleanup()

    def check_all(self, v4, v6):
        self.assertEqual(body(http.client.HTTPConnection("127.0.0.1", v4, timeout=5)), (200, b"Hello, World!"))
        self.assertEqual(body(http.client.HTTPConnection("::1", v6, timeout=5)), (200, b"Hello, World!"))
        self.assertEqual(body(UnixHTTPConnection(self.sock)), (200, b"Hello, World!"))

    def test_ipv4_ipv6_and_unix_in_every_model(self):
        for mpm in ("event", "hybrid", "prefork"):
            with self.subTest(mpm=mpm):
                v4, v6 = harness.free_port(), harness.free_port()
                proc = start(["--port", str(v4), "--listen", "[::1]:%d" % v6, "--listen", "unix:" + self.sock,
                              "--mpm", mpm, "--workers", "2"])
                try:
                    wait_tcp("127.0.0.1", v4)
                    wait_tcp("::1", v6, socket.AF_INET6)
                    self.check_all(v4, v6)
                finally:
                    code, err = stop(proc)
                self.assertEqual(code, 0, err)
                self.assertIn("unix:" + self.sock, err)
                self.assertFalse(os.path.exists(self.sock), "the socket file must be removed at stop")

    def test_started_as_root_the_socket_is_the_users(self):
        # Bound as root, it was root's (0755 under the usual umask): not even the app
        # user, nor a proxy running as it, could connect.
        if os.geteuid() != 0:
            self.fail("this test needs root (kiln started as root with --user nobody); run `make test` as root")
        nobody = pwd.getpwnam("nobody")
        os.chmod(self.dir.name, 0o755)
        os.chown(self.dir.name, nobody.pw_uid, nobody.pw_gid)  # the run directory is the app user's

        def status_as_nobody():
            """GET /plaintext over the socket from a child process running as nobody."""
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: never returns into the test
                out = b"?"
                try:
                    os.setgid(nobody.pw_gid)
                    os.setgroups([])
                    os.setuid(nobody.pw_uid)
                    c = socket.socket(socket.AF_UNIX)
                    c.settimeout(10)
                    c.connect(self.sock)
                    c.sendall(b"GET /plaintext HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    out = c.recv(64).split(b" ")[1]
                except OSError as e:
                    out = str(e).encode()
                finally:
                    os.write(write, out)
                    os._exit(0)
            os.close(write)
            os.waitpid(pid, 0)
            with os.fdopen(read, "rb") as f:
                return f.read().decode()

        v4 = harness.free_port()
        proc = start(["--port", str(v4), "--listen", "unix:" + self.sock, "--workers", "1", "--user", "nobody"])
        try:
            wait_tcp("127.0.0.1", v4)
            st = os.stat(self.sock)
            self.assertEqual((st.st_uid, st.st_gid, st.st_mode & 0o777), (nobody.pw_uid, nobody.pw_gid, 0o660))
            self.assertEqual(status_as_nobody(), "200")
        finally:
            code, err = stop(proc)
        self.assertEqual(code, 0, err)
        self.assertFalse(os.path.exists(self.sock), "the socket file must be removed at stop")

    def test_config_array(self):
        v4, v6 = harness.free_port(), harness.free_port()
        cfg = os.path.join(self.dir.name, "kiln.toml")
        with open(cfg, "w") as f:
            f.write('workers = 1\nlisten = ["127.0.0.1:%d", "[::1]:%d", "unix:%s"]\n' % (v4, v6, self.sock))
        proc = start(["--config", cfg])
        try:
            wait_tcp("127.0.0.1", v4)
            wait_tcp("::1", v6, socket.AF_INET6)
            self.check_all(v4, v6)
        finally:
            code, err = stop(proc)
        self.assertEqual(code, 0, err)

    def test_a_stale_socket_file_is_replaced(self):
        stale = socket.socket(socket.AF_UNIX)
        stale.bind(self.sock)  # bound, never listening: what a killed server leaves
        stale.close()
        v4 = harness.free_port()
        proc = start(["--port", str(v4), "--listen", "unix:" + self.sock, "--workers", "1"])
        try:
            wait_tcp("127.0.0.1", v4)
            self.assertEqual(body(UnixHTTPConnection(self.sock)), (200, b"Hello, World!"))
        finally:
            code, err = stop(proc)
        self.assertEqual(code, 0, err)

    def test_per_address_limits_warn_of_a_unix_listener_that_names_no_client(self):
        # A unix socket's client has no address: limits.rate and the per-address cap
        # cannot count it. Said once at the start, naming the listener; not for a
        # listener given the PROXY protocol, nor when no such limit is on.
        quiet = os.path.join(self.dir.name, "proxied.sock")
        for env, warned in (({"KILN_LIMITS_RATE": "5"}, True), ({"KILN_LIMITS_MAX_CONNECTIONS_PER_ADDRESS": "4"}, True),
                            ({}, False)):
            v4 = harness.free_port()
            proc = start(["--port", str(v4), "--listen", "unix:" + self.sock, "--listen", "unix:%s proxy_protocol" % quiet,
                          "--workers", "0"], env)
            try:
                wait_tcp("127.0.0.1", v4)
                # Serving (not only bound): its stop signal is handled, so it exits 0.
                self.assertEqual(body(http.client.HTTPConnection("127.0.0.1", v4, timeout=5 * harness.TIME_SCALE)),
                                 (200, b"Hello, World!"))
            finally:
                code, err = stop(proc)
            self.assertEqual(code, 0, err)
            self.assertEqual("listener unix:%s names no client address" % self.sock in err, warned, (env, err))
            self.assertNotIn("listener unix:%s names" % quiet, err)

    def test_a_live_socket_or_a_plain_file_is_refused(self):
        with open(self.sock, "w") as f:
            f.write("not a socket")
        p = subprocess.run([harness.BINARIES["hello"], "--port", str(harness.free_port()), "--listen", "unix:" + self.sock],
                           capture_output=True, text=True, timeout=10)
        self.assertEqual(p.returncode, 2)
        self.assertIn("a file that is not a socket is there", p.stderr)
        os.unlink(self.sock)
        live = socket.socket(socket.AF_UNIX)
        live.bind(self.sock)
        live.listen()
        try:
            p = subprocess.run([harness.BINARIES["hello"], "--port", str(harness.free_port()), "--listen", "unix:" + self.sock],
                               capture_output=True, text=True, timeout=10)
        finally:
            live.close()
        self.assertEqual(p.returncode, 2)
        self.assertIn("another server is listening there", p.stderr)

    def test_a_tcp_port_another_process_listens_on_is_refused(self):
        # With SO_REUSEPORT set on both sides the kernel would share the port: kiln's
        # probe binds without it first. The probe never listens, so it takes no
        # connection meant for the other process.
        for reuse_port, host in ((False, "127.0.0.1"), (True, "127.0.0.1"), (False, "0.0.0.0")):
            other = socket.socket()
            if reuse_port:
                other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            other.bind((host, 0))
            other.listen()
            port = other.getsockname()[1]
            try:
                for workers in ("0", "2"):
                    p = subprocess.run([harness.BINARIES["hello"], "--port", str(port), "--workers", workers],
                                       capture_output=True, text=True, timeout=10)
                    self.assertEqual(p.returncode, 2, p.stderr)
                    self.assertIn("cannot listen on 127.0.0.1:%d: Address already in use" % port, p.stderr)
            finally:
                other.close()


if __name__ == "__main__":
    harness.main()
