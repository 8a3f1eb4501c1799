"""TLS on kiln's own listeners, checked with Python's ssl module (OpenSSL), curl and
openssl s_client: TLS 1.2 and 1.3 only, ALPN h2 and http/1.1, SNI choosing among several
certificates, the same self-signed certificate from every worker, keep-alive,
pipelining, large bodies both ways and files through sendfile's TLS path,
req.secure(), a plain listener beside a TLS one, and the error paths: plain HTTP to
the TLS port is closed, a client that says nothing is closed at the header timeout,
an old protocol, a cipher without forward secrecy or AEAD, a finite-field key
exchange and a renegotiation are refused, a connection past limits.max_connections is closed unanswered, SIGHUP takes
up a renewed certificate, and a bad certificate stops the start naming its file."""

import os
import re
import select
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import unittest

import harness
from harness import build_request

HOST = "127.0.0.1"


def make_cert(d, name):
    """A self-signed certificate for `name` (EC P-256): (cert path, key path, combined path)."""
    cert, key, both = (os.path.join(d, name + s) for s in (".crt", ".key", ".pem"))
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=" + name,
                    "-addext", "subjectAltName=DNS:" + name], check=True, capture_output=True, timeout=30)
    with open(both, "w") as f, open(cert) as c, open(key) as k:
        f.write(c.read() + k.read())
    return cert, key, both


def client_context(**kw):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    for k, v in kw.items():
        setattr(ctx, k, v)
    return ctx


def tls_connect(port, server_hostname="localhost", ctx=None, alpn=None):
    ctx = ctx or client_context()
    if alpn:
        ctx.set_alpn_protocols(alpn)
    raw = socket.create_connection((HOST, port), timeout=5)
    return ctx.wrap_socket(raw, server_hostname=server_hostname)


def read_response(s, limit=None):
    """One HTTP/1.1 response from socket-like s: (status, headers dict, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the head: %r" % data)
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
    n = int(headers.get("content-length", "0"))
    while len(rest) < n:
        chunk = s.recv(1 << 20)
        if not chunk:
            raise ConnectionError("closed mid-body")
        rest += chunk
    return status, headers, rest[:n], rest[n:]


def get(s, target, extra=()):
    s.sendall(build_request("GET", target, list(extra)))
    status, headers, body, _ = read_response(s)
    return status, headers, body


class SelfSigned(harness.ServerTestCase):
    server_args = ("--workers", "2", "--tls-self-signed", "--header-timeout", "800")

    def test_https_serves_and_the_request_is_secure(self):
        with tls_connect(self.port) as s:
            self.assertIn(s.version(), ("TLSv1.3", "TLSv1.2"))
            self.assertEqual(get(s, "/plaintext")[2], b"Hello, World!")
            self.assertEqual(get(s, "/secure")[2], b"https")  # keep-alive: the same connection
            # Two requests in one write: both answered, in order.
            s.sendall(build_request("GET", "/plaintext") + build_request("GET", "/secure"))
            st1, _, b1, left = read_response(s)
            self.assertEqual((st1, b1), (200, b"Hello, World!"))
            buf = left
            while b"https" not in buf:
                buf += s.recv(65536)
            self.assertTrue(buf.endswith(b"https"))

    def test_a_stream_cut_short_ends_without_close_notify(self):
        # An HTTP/1.0 response runs until the connection closes. A whole one ends with
        # TLS's close_notify; one cut short (its handler threw mid-way) must not, or the
        # client takes the truncated body for the complete one.
        def read_to_the_end(target):
            raw = socket.create_connection((HOST, self.port), timeout=5)
            s = client_context().wrap_socket(raw, server_hostname="localhost", suppress_ragged_eofs=False)
            with s:
                s.sendall(("GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n" % target).encode())
                data = b""
                try:
                    while True:
                        chunk = s.recv(65536)
                        if not chunk:
                            return data, "close_notify"
                        data += chunk
                except ssl.SSLEOFError:
                    return data, "cut"

        data, end = read_to_the_end("/stream")
        self.assertTrue(data.endswith(b"one,two,three"), data)
        self.assertEqual(end, "close_notify")
        data, end = read_to_the_end("/stream-throw")
        self.assertIn(b"partial,", data)
        self.assertEqual(end, "cut", "a truncated body ended as a complete one")

    def test_every_worker_presents_the_same_certificate(self):
        seen = set()
        pids = set()
        for _ in range(20):
            with tls_connect(self.port) as s:
                seen.add(s.getpeercert(binary_form=True))
                pids.add(get(s, "/pid")[2])
        self.assertEqual(len(pids), 2, "both workers should have answered")
        self.assertEqual(len(seen), 1)

    def test_tls_1_2_and_1_3_only(self):
        for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
            with self.subTest(version=version):
                ctx = client_context(minimum_version=version, maximum_version=version)
                with tls_connect(self.port, ctx=ctx) as s:
                    self.assertEqual(get(s, "/plaintext")[0], 200)
        old = client_context()
        try:
            old.minimum_version = ssl.TLSVersion.TLSv1
            old.maximum_version = ssl.TLSVersion.TLSv1_1
            old.set_ciphers("ALL:@SECLEVEL=0")
        except (ValueError, ssl.SSLError):
            self.skipTest("this Python's OpenSSL cannot even offer TLS 1.1")
        with self.assertRaises((ssl.SSLError, ConnectionError, OSError)):
            with tls_connect(self.port, ctx=old) as s:
                get(s, "/plaintext")

    def test_tls_1_2_only_with_forward_secret_aead_ciphers(self):
        ctx = client_context(maximum_version=ssl.TLSVersion.TLSv1_2)
        ctx.set_ciphers("ECDHE-ECDSA-CHACHA20-POLY1305")
        with tls_connect(self.port, ctx=ctx) as s:
            self.assertEqual(get(s, "/plaintext")[0], 200)
        for weak in ("ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA384",  # CBC
                     "AES128-GCM-SHA256:AES256-GCM-SHA384"):  # no forward secrecy
            with self.subTest(ciphers=weak):
                ctx = client_context(maximum_version=ssl.TLSVersion.TLSv1_2)
                ctx.set_ciphers(weak)
                with self.assertRaises((ssl.SSLError, ConnectionError)):
                    with tls_connect(self.port, ctx=ctx) as s:
                        get(s, "/plaintext")

    def test_key_exchange_on_elliptic_curves_only(self):
        # A finite-field group is the client's choice and costs the server up to 400
        # X25519 handshakes (ffdhe8192): TLS 1.3 does not offer them (and TLS 1.2 has
        # no DHE suite). In TLS 1.2 the ECDSA certificate's own curve must be offered.
        def handshake(version, group):
            return subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % self.port, version,
                                   "-groups", group], input="", capture_output=True, text=True, timeout=30)
        for version, group, shown in (("-tls1_3", "X25519", "X25519"), ("-tls1_3", "P-256", "prime256v1"),
                                      ("-tls1_3", "P-384", "secp384r1"), ("-tls1_2", "X25519:P-256", "X25519"),
                                      ("-tls1_2", "P-384:P-256", "secp384r1")):
            with self.subTest(version=version, group=group):
                p = handshake(version, group)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertRegex(p.stdout, "Server Temp Key: [^\\n]*" + shown)
        for group in ("ffdhe2048", "ffdhe8192"):
            with self.subTest(group=group):
                p = handshake("-tls1_3", group)
                self.assertNotEqual(p.returncode, 0, p.stdout)
                self.assertNotIn("Server Temp Key", p.stdout)

    def test_tls_1_2_renegotiation_is_refused(self):
        # s_client renegotiates when its input starts a line with R (and it is not
        # told -ign_eof); the server answers with a no_renegotiation alert, on which
        # the client gives up. Had it been allowed, s_client would go on waiting. The
        # R goes as soon as the handshake is done: this server's head timeout is short.
        p = subprocess.Popen(["openssl", "s_client", "-connect", "127.0.0.1:%d" % self.port, "-tls1_2",
                              "-alpn", "http/1.1"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out, deadline = b"", time.monotonic() + 10
            while b"Verify return code" not in out and time.monotonic() < deadline:  # the handshake's summary
                ready, _, _ = select.select([p.stdout], [], [], 0.5)
                if ready:
                    chunk = os.read(p.stdout.fileno(), 65536)
                    if not chunk:
                        break
                    out += chunk
            self.assertIn(b"Verify return code", out, "no handshake")
            p.stdin.write(b"R\n")
            p.stdin.flush()
            rc = p.wait(timeout=5)
            err = p.stderr.read().decode()
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            for f in (p.stdin, p.stdout, p.stderr):
                try:
                    f.close()
                except BrokenPipeError:
                    pass
        self.assertIn("RENEGOTIATING", err)
        self.assertIn("no renegotiation", err)
        self.assertNotEqual(rc, 0)

    def test_alpn_prefers_h2_and_keeps_http_1_1(self):
        with tls_connect(self.port, alpn=["http/1.1", "h2"]) as s:  # the server's preference decides
            self.assertEqual(s.selected_alpn_protocol(), "h2")
        with tls_connect(self.port, alpn=["http/1.1"]) as s:
            self.assertEqual(s.selected_alpn_protocol(), "http/1.1")
            self.assertEqual(get(s, "/plaintext")[0], 200)
        with tls_connect(self.port, alpn=["spdy/3"]) as s:  # nothing in common: no ALPN, HTTP/1.1
            self.assertIsNone(s.selected_alpn_protocol())
            self.assertEqual(get(s, "/plaintext")[0], 200)

    def test_large_bodies_both_ways(self):
        with tls_connect(self.port) as s:
            status, _, body = get(s, "/big?n=%d" % (5 << 20))
            self.assertEqual(status, 200)
            self.assertEqual(len(body), 5 << 20)
            payload = os.urandom(3 << 20)
            s.sendall(build_request("POST", "/echo", [("Content-Type", "application/octet-stream")], payload))
            status, headers, body, _ = read_response(s)
            self.assertEqual(status, 200)
            self.assertEqual(body, payload)

    def test_plain_http_to_the_tls_port_is_closed(self):
        with socket.create_connection((HOST, self.port), timeout=5) as c:
            c.sendall(build_request("GET", "/plaintext"))
            try:
                data = c.recv(4096)
            except ConnectionResetError:
                data = b""
            self.assertNotIn(b"HTTP/1.1 200", data)
            self.assertFalse(data.startswith(b"HTTP/"), data)

    def test_a_silent_client_is_closed_at_the_header_timeout(self):
        with socket.create_connection((HOST, self.port), timeout=5) as c:
            t0 = time.monotonic()
            try:
                self.assertEqual(c.recv(1), b"")
            except ConnectionResetError:
                pass
            self.assertLess(time.monotonic() - t0, 4)
        # and one stalled mid-handshake (a ClientHello cut short)
        with socket.create_connection((HOST, self.port), timeout=5) as c:
            c.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
            t0 = time.monotonic()
            try:
                self.assertEqual(c.recv(1), b"")
            except ConnectionResetError:
                pass
            self.assertLess(time.monotonic() - t0, 4)

    def test_curl_and_openssl_s_client(self):
        curl = shutil.which("curl")
        self.assertIsNotNone(curl, "curl is needed (scripts/deps.sh)")
        out = subprocess.run([curl, "-sk", "--http1.1", "https://127.0.0.1:%d/secure" % self.port],
                             capture_output=True, text=True, timeout=20)
        self.assertEqual(out.stdout, "https")
        p = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % self.port, "-servername", "localhost",
                            "-alpn", "http/1.1", "-ign_eof"],
                           input="GET /plaintext HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", capture_output=True,
                           text=True, timeout=20)
        self.assertIn("Hello, World!", p.stdout)
        self.assertIn("ALPN protocol: http/1.1", p.stdout)
        self.assertNotIn("unexpected eof", p.stderr, "the server ends with close_notify")


class StopMidStream(unittest.TestCase):
    def test_a_stream_the_stop_cuts_ends_without_close_notify(self):
        # A stop whose drain time runs out closes the connections still streaming: an
        # HTTP/1.0 response, read to the close, must not end with close_notify, or the
        # client takes what it has for the whole.
        server = harness.ServerProcess(harness.BINARIES["server"], ["--workers", "0", "--tls-self-signed"],
                                       env={"KILN_TIMEOUTS_DRAIN_MS": "300"})
        self.addCleanup(harness.check_clean_stop, server)
        server.start()
        raw = socket.create_connection((HOST, server.port), timeout=10)
        with client_context().wrap_socket(raw, server_hostname="localhost", suppress_ragged_eofs=False) as s:
            s.sendall(b"GET /events?n=10&ms=5000 HTTP/1.0\r\nHost: localhost\r\n\r\n")
            data = b""
            while b"line two 0" not in data:
                chunk = s.recv(65536)
                self.assertTrue(chunk, data)
                data += chunk
            server.proc.send_signal(signal.SIGTERM)
            try:
                while s.recv(65536):
                    pass
                end = "close_notify"
            except ssl.SSLEOFError:
                end = "cut"
        self.assertEqual(end, "cut", "a stream the stop cut short ended as a complete one")
        self.assertEqual(server.proc.wait(timeout=10), 0, server.output())


class RefusedWhenFull(harness.ServerTestCase):
    """Past limits.max_connections a TLS listener closes the new connection without
    writing: a client in its handshake waits for a ServerHello, and a plain-text 503
    would read to it as a broken peer."""
    server_args = ("--workers", "0", "--tls-self-signed")
    server_env = {"KILN_LIMITS_MAX_CONNECTIONS": "1"}

    def test_a_connection_past_the_limit_is_closed_unanswered(self):
        deadline = time.monotonic() + 5
        while True:  # the harness's start-up probe counts until the server has seen it close
            try:
                held = tls_connect(self.port)
                if get(held, "/plaintext")[0] == 200:
                    break
                held.close()
            except (ssl.SSLError, ConnectionError):
                pass
            self.assertLess(time.monotonic(), deadline, "no connection was served")
            time.sleep(0.05)
        try:
            with socket.create_connection((HOST, self.port), timeout=5) as c:
                try:
                    data = c.recv(4096)
                except ConnectionResetError:
                    data = b""
                self.assertEqual(data, b"", "plain bytes on a TLS port")
            with self.assertRaises((ssl.SSLError, ConnectionError)):
                with tls_connect(self.port) as s:
                    get(s, "/plaintext")
            self.assertTrue(self.server.wait_for_output(r"limits\.max_connections = 1", timeout=3),
                            self.server.output())
        finally:
            held.close()


class SessionResumption(harness.ServerTestCase):
    """Session tickets sealed with keys the supervisor shares with every worker: a
    ticket from one worker resumes on the other; keys rotate (every 2 s here), and a
    ticket past its lifetime gets a full handshake."""
    server_args = ("--workers", "2", "--tls-self-signed")
    server_env = {"KILN_TLS_TICKET_ROTATE_S": "2"}

    def connect(self, ctx, session=None):
        raw = socket.create_connection((HOST, self.port), timeout=5)
        s = ctx.wrap_socket(raw, server_hostname="localhost", session=session)
        pid = get(s, "/pid")[2]  # the response also brings TLS 1.3's tickets in
        return s, pid

    def test_a_ticket_resumes_on_every_worker_until_it_expires(self):
        for version in (ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_2):
            with self.subTest(version=version):
                ctx = client_context(minimum_version=version, maximum_version=version)
                s, _ = self.connect(ctx)
                ticket = s.session
                s.close()
                pids, resumed = set(), 0
                for _ in range(16):
                    s, pid = self.connect(ctx, ticket)
                    pids.add(pid)
                    resumed += s.session_reused
                    s.close()
                self.assertEqual(len(pids), 2, "both workers should have answered")
                self.assertEqual(resumed, 16, "a ticket resumes on whichever worker answers")
        ctx = client_context(maximum_version=ssl.TLSVersion.TLSv1_2)
        s, _ = self.connect(ctx)
        ticket = s.session
        s.close()
        time.sleep(4.5)  # two rotations: the key that sealed it is gone, and its lifetime is over
        s, _ = self.connect(ctx, ticket)
        self.assertFalse(s.session_reused)
        s.close()


STATIC_DIR = tempfile.mkdtemp(prefix="kiln-tls-files-")
with open(os.path.join(STATIC_DIR, "big.bin"), "wb") as _f:
    _f.write(os.urandom(3 << 20))


class FilesOverTls(harness.ServerTestCase):
    """Files go through sendfile(2) on plain TCP; over TLS they are read and sealed."""
    server_args = ("--workers", "0", "--tls-self-signed")
    server_env = {"KILNTEST_STATIC_DIR": STATIC_DIR}

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(STATIC_DIR, True)

    def test_a_file_whole_and_a_range(self):
        want = open(os.path.join(STATIC_DIR, "big.bin"), "rb").read()
        with tls_connect(self.port) as s:
            status, headers, body = get(s, "/raw/big.bin")  # /raw caches nothing: the file path
            self.assertEqual(status, 200)
            self.assertEqual(body, want)
            status, headers, body = get(s, "/raw/big.bin", [("Range", "bytes=1000000-1999999")])
            self.assertEqual(status, 206)
            self.assertEqual(body, want[1000000:2000000])


class ClientLeavesOverTls(harness.ServerTestCase):
    """A coroutine handler's client that closes over TLS: its close_notify comes before
    its FIN, so the socket is not empty when the FIN says it is gone."""
    server_args = ("--workers", "0", "--threads", "1", "--tls-self-signed")

    def cut(self):
        with tls_connect(self.port) as s:
            body = get(s, "/events/stats")[2].decode()
        return int(re.search(r"cut=(\d+)", body).group(1))

    def test_a_client_that_closes_cancels_the_waiting_handler(self):
        cut0 = self.cut()
        s = tls_connect(self.port)
        s.sendall(build_request("GET", "/events?n=10&ms=5000"))  # the next event (a write that fails) in 5 s
        data = b""
        while b"line two 0" not in data:
            chunk = s.recv(65536)
            self.assertTrue(chunk, "closed before the first event")
            data += chunk
        s.settimeout(0.3)  # the rest of the first event's bytes (its heartbeat): nothing
        try:               # left unread, else closing sends a reset, not a FIN
            while s.recv(65536):
                pass
        except TimeoutError:
            pass
        try:
            s.unwrap()  # sends close_notify, then waits for the server's: none comes
        except (TimeoutError, ssl.SSLError):
            pass
        s.close()  # the FIN
        deadline = time.monotonic() + 2.5
        while self.cut() == cut0 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.cut(), cut0 + 1, "the handler waited on for a client that had closed")


class SniAndMixedListeners(unittest.TestCase):
    """tls.cert for a.test, tls.certificates with b.test; the main port plain, one
    extra listener marked tls."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="kiln-tls-")
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        a_cert, a_key, _ = make_cert(cls.dir, "a.test")
        _, _, b_both = make_cert(cls.dir, "b.test")
        _, _, star_both = make_cert(cls.dir, "*.wild.test")
        cls.tls_port = harness.free_port()
        cfg = os.path.join(cls.dir, "kiln.toml")
        with open(cfg, "w") as f:
            f.write('listen = ["127.0.0.1:%d", "127.0.0.1:%d tls"]\n[tls]\ncert = "%s"\nkey = "%s"\ncertificates = ["%s", "%s"]\n'
                    % (harness.free_port(), cls.tls_port, a_cert, a_key, b_both, star_both))
        cls.server = harness.ServerProcess(harness.BINARIES["server"], ["--workers", "0", "--config", cfg])
        cls.addClassCleanup(harness.check_clean_stop, cls.server)
        # --port (the harness's) replaces the first address: it stays plain.
        cls.server.start()

    def subject(self, name):
        with tls_connect(self.tls_port, server_hostname=name) as s:
            der = s.getpeercert(binary_form=True)
            self.assertEqual(get(s, "/secure")[2], b"https")
        pem = ssl.DER_cert_to_PEM_cert(der)
        out = subprocess.run(["openssl", "x509", "-noout", "-subject"], input=pem, capture_output=True, text=True,
                             check=True).stdout
        return out.strip().split("CN", 1)[1].lstrip(" =")

    def test_sni_picks_the_certificate(self):
        self.assertEqual(self.subject("a.test"), "a.test")
        self.assertEqual(self.subject("b.test"), "b.test")
        self.assertEqual(self.subject("B.TEST"), "b.test")          # names match without case
        self.assertEqual(self.subject("x.wild.test"), "*.wild.test")  # one label under a wildcard
        self.assertEqual(self.subject("y.x.wild.test"), "a.test")    # not two: the default
        self.assertEqual(self.subject("unknown.test"), "a.test")     # the default

    def test_the_plain_listener_stays_plain(self):
        with harness.RawConnection(self.server.port) as c:
            c.send(build_request("GET", "/secure"))
            r = c.read_response()
        self.assertEqual(r.status, 200)
        self.assertEqual(r.body, b"http")


class CertificateReload(unittest.TestCase):
    """A renewed certificate (certbot's way: new files at the same paths) is taken up
    by SIGHUP: the new workers present it, and no connection fails meanwhile."""

    def test_sighup_presents_the_renewed_certificate(self):
        d = tempfile.mkdtemp(prefix="kiln-tls-reload-")
        self.addCleanup(shutil.rmtree, d, True)
        old_cert, old_key, _ = make_cert(d, "old.test")
        new_cert, new_key, _ = make_cert(d, "new.test")
        cert, key = os.path.join(d, "live.crt"), os.path.join(d, "live.key")
        shutil.copy(old_cert, cert)
        shutil.copy(old_key, key)
        server = harness.ServerProcess(harness.BINARIES["server"],
                                       ["--workers", "2", "--tls-cert", cert, "--tls-key", key])
        self.addCleanup(harness.check_clean_stop, server)
        server.start()
        # Each worker reads the files as it starts: swap them only once all have.
        self.assertTrue(server.wait_for_output(r"ready: every worker serves \(2\)", timeout=15), server.output())

        def presented():
            with tls_connect(server.port) as s:
                der = s.getpeercert(binary_form=True)
                self.assertEqual(get(s, "/plaintext")[0], 200)
            return ssl.DER_cert_to_PEM_cert(der)

        with open(old_cert) as f:
            old_pem = ssl.DER_cert_to_PEM_cert(ssl.PEM_cert_to_DER_cert(f.read()))
        with open(new_cert) as f:
            new_pem = ssl.DER_cert_to_PEM_cert(ssl.PEM_cert_to_DER_cert(f.read()))
        self.assertEqual(presented(), old_pem)
        shutil.copy(new_cert, cert + ".tmp")
        shutil.copy(new_key, key + ".tmp")
        os.rename(key + ".tmp", key)
        os.rename(cert + ".tmp", cert)
        self.assertEqual(presented(), old_pem, "the files alone changed what was served")
        server.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 15
        seen = []
        while time.monotonic() < deadline:
            seen.append(presented())  # every handshake during the swap succeeds
            if seen[-4:] == [new_pem] * 4:
                break
            time.sleep(0.05)
        self.assertEqual(seen[-4:], [new_pem] * 4, "the renewed certificate was not presented after SIGHUP")


class RedirectToHttps(harness.ServerTestCase):
    """tls.redirect_http: plain listeners answer 308 to the same host and target over
    HTTPS (the TLS listener's port in it), except the health endpoint and what a
    trusted proxy says came over HTTPS."""
    TLS_PORT = harness.free_port()
    server_args = ("--workers", "0", "--tls-self-signed", "--listen", "127.0.0.1:%d tls" % TLS_PORT,
                   "--health-path", "/health", "--trusted-proxies", "127.0.0.1")
    server_env = {"KILN_TLS_REDIRECT_HTTP": "true"}

    def plain(self, method, target, headers=(), body=None):
        with harness.RawConnection(self.port) as c:
            c.send(build_request(method, target, list(headers), body, host="shop.example:8080"))
            return c.read_response(method)

    def test_plain_requests_are_sent_to_https(self):
        r = self.plain("GET", "/plaintext?a=1&b=%20")
        self.assertEqual(r.status, 308)
        self.assertEqual(r.header("Location"), "https://shop.example:%d/plaintext?a=1&b=%%20" % self.TLS_PORT)
        r = self.plain("POST", "/echo", body=b"kept")  # 308: the client repeats the POST with its body
        self.assertEqual(r.status, 308)
        self.assertEqual(self.plain("GET", "/health").status, 200, "the balancer's check stays on plain HTTP")
        r = self.plain("GET", "/secure", [("X-Forwarded-Proto", "https")])
        self.assertEqual((r.status, r.body), (200, b"https"), "HTTPS at a trusted proxy is HTTPS")
        with tls_connect(self.TLS_PORT) as s:
            self.assertEqual(get(s, "/secure")[:3:2], (200, b"https"))


class IdleMemory(harness.ServerTestCase):
    server_args = ("--workers", "0", "--tls-self-signed")
    # Under AddressSanitizer (make asan) freed memory waits in a quarantine before it is
    # reused, so RSS would grow with every allocation: no quarantine for this server.
    # (A plain build ignores the variable.)
    server_env = {"ASAN_OPTIONS": ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "quarantine_size_mb=0",
                                                         "thread_local_quarantine_size_kb=0"]))}

    def test_idle_keep_alive_connections_give_back_their_largest_response(self):
        # 200 keep-alive connections, each given a 64 KiB response in turn, then left
        # idle. OpenSSL's memory BIOs never shrink, and the encrypted output buffer kept
        # its capacity: about 150 KB per idle connection. Given back between requests,
        # the 200 together cost the server a few MB.
        def rss_kib():
            with open("/proc/%d/status" % self.server.proc.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
            raise AssertionError("no VmRSS")

        warm = tls_connect(self.port)
        self.addCleanup(warm.close)
        self.assertEqual(get(warm, "/big?n=65536")[0], 200)
        before = rss_kib()
        conns = []
        try:
            for _ in range(200):
                s = tls_connect(self.port)
                conns.append(s)
                status, _, body = get(s, "/big?n=65536")
                self.assertEqual((status, len(body)), (200, 65536))
            grown = rss_kib() - before
        finally:
            for s in conns:
                s.close()
        self.assertLess(grown, 200 * 40, "%d KiB more for 200 idle TLS connections" % grown)


class BadCertificates(unittest.TestCase):
    def run_server(self, args):
        e = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
        return subprocess.run([harness.BINARIES["server"], "--port", "0", "--workers", "0", *args], env=e,
                              capture_output=True, text=True, timeout=20)

    def test_a_missing_or_mismatched_certificate_stops_the_start(self):
        d = tempfile.mkdtemp(prefix="kiln-tls-bad-")
        self.addCleanup(shutil.rmtree, d, True)
        p = self.run_server(["--tls-cert", os.path.join(d, "nope.pem")])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("nope.pem", p.stderr)
        a_cert, _, _ = make_cert(d, "a.test")
        _, b_key, _ = make_cert(d, "b.test")
        p = self.run_server(["--tls-cert", a_cert, "--tls-key", b_key])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(b_key + ": ", p.stderr)
        self.assertIn("mismatch", p.stderr)
        # An encrypted key: no passphrase prompt (on a terminal, each worker would wait
        # at one), a refusal that says what to do.
        locked = os.path.join(d, "locked.key")
        subprocess.run(["openssl", "pkey", "-in", b_key, "-out", locked, "-aes256", "-passout", "pass:secret"],
                       check=True, capture_output=True, timeout=30)
        b_cert = os.path.join(d, "b.test.crt")
        p = self.run_server(["--tls-cert", b_cert, "--tls-key", locked])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(locked + ": the private key is encrypted", p.stderr)
        p = self.run_server(["--listen", "127.0.0.1:1 tls proxy_protocol"])
        self.assertEqual(p.returncode, 2, p.stderr)
        # A listener marked tls and no certificate: not plain HTTP on the HTTPS port.
        p = self.run_server(["--listen", "127.0.0.1:0 tls"])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("is marked tls, but no certificate is configured", p.stderr)
        p = self.run_server(["--listen", "127.0.0.1:1 ssl"])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("unknown listener parameter 'ssl'", p.stderr)

    def test_a_key_the_user_cannot_read_stops_the_start(self):
        # Checked as root before the privileges are dropped, a key only root may read
        # (certbot's) passed, and every worker (nobody) exited at its start, again and
        # again, the port bound and nothing served.
        if os.geteuid() != 0:
            self.fail("this test needs root (kiln started as root with --user nobody); run `make test` as root")
        d = tempfile.mkdtemp(prefix="kiln-tls-key-")
        self.addCleanup(shutil.rmtree, d, True)
        os.chmod(d, 0o755)
        cert, key, _ = make_cert(d, "a.test")
        os.chmod(cert, 0o644)
        os.chmod(key, 0o600)
        e = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
        p = subprocess.run([harness.BINARIES["server"], "--port", "0", "--workers", "1", "--user", "nobody",
                            "--tls-cert", cert, "--tls-key", key], env=e, capture_output=True, text=True, timeout=20)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(key + ": ", p.stderr)
        self.assertIn("as the user nobody", p.stderr)
        os.chmod(key, 0o644)  # readable by nobody: the same start serves
        srv = harness.ServerProcess(harness.BINARIES["server"], ["--workers", "1", "--user", "nobody",
                                                                 "--tls-cert", cert, "--tls-key", key])
        self.addCleanup(harness.check_clean_stop, srv)
        srv.start()
        with tls_connect(srv.port) as s:
            self.assertEqual(get(s, "/plaintext")[0], 200)


if __name__ == "__main__":
    harness.main()
