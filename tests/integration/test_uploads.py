"""Request bodies, end to end: multipart/form-data parsed while it arrives (fields,
small files in memory, large files on disk), urlencoded forms and JSON, and their
error paths: a boundary split across reads, a missing final boundary, too many
parts, malformed encodings. A 100 MiB upload must leave the server's memory within
16 MiB of what it was idle."""

import atexit
import hashlib
import os
import shutil
import socket
import struct
import tempfile
import time
import unittest

import harness
from harness import build_request

BOUNDARY = "----kilnTestBoundary7MA4YWxkTrZu0gW"


def multipart(parts, boundary=BOUNDARY, close=True):
    """parts: (name, value bytes, filename or None, content type or None)."""
    out = b""
    for name, value, filename, ctype in parts:
        out += b"--" + boundary.encode() + b"\r\n"
        disp = 'form-data; name="%s"' % name
        if filename is not None:
            disp += '; filename="%s"' % filename
        out += b"Content-Disposition: " + disp.encode() + b"\r\n"
        if ctype:
            out += b"Content-Type: " + ctype.encode() + b"\r\n"
        out += b"\r\n" + value + b"\r\n"
    if close:
        out += b"--" + boundary.encode() + b"--\r\n"
    return out


def byte_sum(data):
    return sum(data) & 0xFFFFFFFF


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for %d" % pid)


class Uploads(harness.ServerTestCase):
    server_args = ("--workers", "0")

    def post(self, target, body, ctype, pieces=None):
        with self.connect() as c:
            req = build_request("POST", target, [("Content-Type", ctype)], body)
            if pieces:
                c.send_in_pieces(req, pieces)
            else:
                c.send(req)
            return c.read_response()

    def test_fields_and_a_small_file(self):
        data = os.urandom(3000)
        body = multipart([("title", b"Hello & <world>", None, None),
                          ("tags", b"a", None, None), ("tags", b"b", None, None),
                          ("doc", data, "r\xe9sum\xe9.pdf".encode("latin-1").decode("latin-1"), "application/pdf")])
        r = self.post("/form", body, "multipart/form-data; boundary=" + BOUNDARY)
        self.assertEqual(r.status, 200, r)
        lines = r.body.decode("utf-8", "replace").splitlines()
        self.assertEqual(lines[:3], ["title=Hello & <world>", "tags=a", "tags=b"])
        self.assertRegex(lines[3], r"^file doc .+ application/pdf 3000 %d memory$" % byte_sum(data))

    def test_boundary_split_at_every_byte(self):
        data = b"x\r\n--" + BOUNDARY[:10].encode() + b"not a boundary\r\n" + os.urandom(200)
        body = multipart([("f", data, "a.bin", None), ("g", b"value", None, None)])
        req_len = len(build_request("POST", "/form", [("Content-Type", "multipart/form-data; boundary=" + BOUNDARY)], body))
        r = self.post("/form", body, "multipart/form-data; boundary=" + BOUNDARY, pieces=list(range(1, req_len)))
        self.assertEqual(r.status, 200, r)
        self.assertIn(b"g=value", r.body)
        self.assertIn(("file f a.bin text/plain %d %d memory" % (len(data), byte_sum(data))).encode(), r.body)

    def test_large_file_goes_to_disk_and_can_be_saved(self):
        data = os.urandom(3 * 1024 * 1024 + 17)
        d = tempfile.mkdtemp(prefix="kiln-saved-")
        self.addCleanup(shutil.rmtree, d, True)
        dest = os.path.join(d, "saved.bin")
        body = multipart([("up", data, "big.bin", "application/octet-stream")])
        r = self.post("/form?save=" + dest, body, "multipart/form-data; boundary=" + BOUNDARY)
        self.assertEqual(r.status, 200, r)
        self.assertIn(("file up big.bin application/octet-stream %d %d disk" % (len(data), byte_sum(data))).encode(), r.body)
        with open(dest, "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).digest(), hashlib.sha256(data).digest())

    def test_chunked_multipart(self):
        data = os.urandom(100000)
        body = multipart([("up", data, "c.bin", None)])
        with self.connect() as c:
            c.send(("POST /form HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                    "Content-Type: multipart/form-data; boundary=%s\r\n\r\n" % BOUNDARY).encode()
                   + harness.chunked(body, sizes=(1000, 7, 30000)))
            r = c.read_response()
        self.assertEqual(r.status, 200, r)
        self.assertIn(("%d %d disk" % (len(data), byte_sum(data))).encode(), r.body)

    def test_hundred_mib_upload_keeps_memory_bounded(self):
        pid = self.server.proc.pid  # --workers 0: the server process handles requests
        idle = rss_kib(pid)
        size = 100 * 1024 * 1024
        head = (b"--" + BOUNDARY.encode() + b'\r\nContent-Disposition: form-data; name="up"; filename="huge"\r\n\r\n')
        tail = b"\r\n--" + BOUNDARY.encode() + b"--\r\n"
        block = bytes(range(256)) * 256  # 64 KiB
        peak = idle
        with self.connect(timeout=60) as c:
            c.send(("POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=%s\r\n"
                    "Content-Length: %d\r\n\r\n" % (BOUNDARY, len(head) + size + len(tail))).encode() + head)
            sent = 0
            while sent < size:
                c.sock.sendall(block)
                sent += len(block)
                if sent % (8 * 1024 * 1024) == 0:
                    peak = max(peak, rss_kib(pid))
            c.send(tail)
            r = c.read_response(timeout=60)
            peak = max(peak, rss_kib(pid))
        self.assertEqual(r.status, 200, r)
        self.assertIn(("file up huge text/plain %d %d disk" % (size, byte_sum(block) * (size // len(block)) & 0xFFFFFFFF)).encode(), r.body)
        self.assertLess(peak - idle, 16 * 1024, "RSS grew from %d KiB to %d KiB" % (idle, peak))

    def test_urlencoded_form(self):
        r = self.post("/form", b"a=1&b=x+y&c=%41%42&a=2", "application/x-www-form-urlencoded")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.body, b"a=1\nb=x y\nc=AB\na=2\n")

    def test_json_round_trip(self):
        r = self.post("/json", b'{"name": "kiln", "n": [1, 2.5, null, true]}', "application/json; charset=utf-8")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.body, b'{"n":[1,2.5,null,true],"name":"kiln"}')

    # Error paths ---------------------------------------------------------------

    def test_missing_final_boundary_is_400(self):
        body = multipart([("a", b"1", None, None)], close=False)
        r = self.post("/form", body, "multipart/form-data; boundary=" + BOUNDARY)
        self.assertEqual(r.status, 400)
        self.assert_server_alive()

    def test_too_many_parts_is_413(self):
        body = multipart([("p%d" % i, b"", None, None) for i in range(1001)])
        r = self.post("/form", body, "multipart/form-data; boundary=" + BOUNDARY)
        self.assertEqual(r.status, 413)
        self.assert_server_alive()

    def test_no_boundary_parameter_is_not_parsed_as_multipart(self):
        r = self.post("/form", b"whatever", "multipart/form-data")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.body, b"")

    def test_bad_urlencoded_escape_is_400(self):
        r = self.post("/form", b"a=%zz", "application/x-www-form-urlencoded")
        self.assertEqual(r.status, 400)

    def test_json_errors(self):
        self.assertEqual(self.post("/json", b'{"a": ', "application/json").status, 400)
        self.assertEqual(self.post("/json", b'{"a": 1}', "text/plain").status, 415)
        self.assertEqual(self.post("/json", b"[" * 100000 + b"]" * 100000, "application/json").status, 400)
        self.assert_server_alive()

    def test_body_over_the_route_limit_is_413(self):
        r = self.post("/small", b"x" * 100000, "multipart/form-data; boundary=" + BOUNDARY)
        self.assertEqual(r.status, 413)


# ------------------------------------------------------------------------------------
# The server's TMPDIR on tmpfs, the saved files on the disk of the build tree: a link
# cannot cross file systems, so save_as copies. Files saved either way, large or small,
# get the same mode.
SHM_SPOOL = tempfile.mkdtemp(prefix="kiln-shm-spool-", dir="/dev/shm") if os.path.isdir("/dev/shm") else None
if SHM_SPOOL:
    atexit.register(shutil.rmtree, SHM_SPOOL, True)


class UploadsSavedOnAnotherFileSystem(harness.ServerTestCase):
    server_args = ("--workers", "0")
    server_env = {"TMPDIR": SHM_SPOOL or "/nonexistent"}

    def setUp(self):
        super().setUp()
        self.dest_dir = tempfile.mkdtemp(prefix="kiln-saved-", dir=os.getcwd())
        self.addCleanup(shutil.rmtree, self.dest_dir, True)
        if not SHM_SPOOL or os.stat(SHM_SPOOL).st_dev == os.stat(self.dest_dir).st_dev:
            self.fail("this test needs /dev/shm on a file system other than %s's" % os.getcwd())

    def save(self, data, name):
        dest = os.path.join(self.dest_dir, name)
        body = multipart([("up", data, name, "application/octet-stream")])
        with self.connect() as c:
            c.send(build_request("POST", "/form?save=" + dest,
                                 [("Content-Type", "multipart/form-data; boundary=" + BOUNDARY)], body))
            return c.read_response(), dest

    def test_a_large_upload_is_copied_and_a_small_one_written_with_the_same_mode(self):
        mask = os.umask(0)
        os.umask(mask)
        for size, where in ((3 * 1024 * 1024 + 5, "disk"), (1000, "memory")):
            data = os.urandom(size)
            r, dest = self.save(data, "%s.bin" % where)
            self.assertEqual(r.status, 200, r)
            self.assertIn(("%d %d %s" % (size, byte_sum(data), where)).encode(), r.body)
            with open(dest, "rb") as f:
                self.assertEqual(hashlib.sha256(f.read()).digest(), hashlib.sha256(data).digest(), where)
            self.assertEqual(os.stat(dest).st_mode & 0o777, 0o644 & ~mask, where)
        r, _ = self.save(b"again" * 20000, "disk.bin")  # the name is taken: an error, the file kept
        self.assertEqual(r.status, 500, r)
        self.assertEqual(os.path.getsize(os.path.join(self.dest_dir, "disk.bin")), 3 * 1024 * 1024 + 5)


# Security finding 6: multipart bodies were spooled to temp files on every route,
# before routing and CSRF: 40 x 70 KiB parts sent to GET / (or to no route at all)
# held 40 temp-file descriptors until the connection closed.

SPOOL = tempfile.mkdtemp(prefix="kiln-spool-")  # the servers' TMPDIR: their temp files show here
atexit.register(shutil.rmtree, SPOOL, True)


def spool_fds(server):
    """The /proc paths of the descriptors the server's processes hold on upload temp
    files (in SPOOL)."""
    out = []
    for pid in [server.proc.pid] + server.children():
        try:
            fds = os.listdir("/proc/%d/fd" % pid)
        except OSError:
            continue
        for fd in fds:
            path = "/proc/%d/fd/%s" % (pid, fd)
            try:
                if os.readlink(path).startswith(SPOOL + "/"):
                    out.append(path)
            except OSError:
                pass
    return out


def spooled_files(server):
    return len(spool_fds(server))


def spooled_bytes(server):
    """Bytes in the upload temp files the server holds open (though they have no name)."""
    n = 0
    for path in spool_fds(server):
        try:
            n += os.stat(path).st_size
        except OSError:
            pass
    return n


def upload_head(method, target, length, headers=()):
    lines = ["%s %s HTTP/1.1" % (method, target), "Host: x",
             "Content-Type: multipart/form-data; boundary=" + BOUNDARY, "Content-Length: %d" % length]
    lines += ["%s: %s" % h for h in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def files(count, size, first=()):
    return list(first) + [("f%d" % i, b"x" * size, "f%d.bin" % i, None) for i in range(count)]


class UploadsOnlyWhereTheRouteTakesThem(harness.ServerTestCase):
    server_args = ("--workers", "0")
    server_env = {"TMPDIR": SPOOL}

    def unfinished(self, method, target, parts, headers=()):
        """Sends a multipart body short of its end; returns the open connection."""
        body = multipart(parts, close=False)
        c = self.connect()
        c.send(upload_head(method, target, len(body) + 4096, headers) + body, tolerate_close=True)
        return c

    def test_a_route_that_takes_no_files_writes_none(self):
        for method, target in (("GET", "/plaintext"), ("POST", "/echo"), ("POST", "/no-such-route")):
            with self.unfinished(method, target, files(40, 70 * 1024)) as c:
                r = c.read_response()
                self.assertEqual(spooled_files(self.server), 0, target)
            self.assertEqual(r.status, 413, target)
            self.assertIn(b"accepts no file uploads", r.body)

    def test_a_client_that_dies_mid_upload_leaves_no_temp_file(self):
        body = multipart(files(1, 2 * 1024 * 1024), close=False)
        c = self.connect()
        c.send(upload_head("POST", "/form", len(body) + 4096) + body)  # on disk, never finished
        deadline = time.monotonic() + 5
        while spooled_files(self.server) == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(spooled_files(self.server), 1)
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.close()  # a reset, as a killed client's kernel sends
        deadline = time.monotonic() + 5
        while spooled_files(self.server) and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(spooled_files(self.server), 0, "the dead upload's temp file is still open")
        self.assertEqual(self.get("/plaintext").status, 200)

    def test_fields_still_work_on_such_a_route(self):
        body = multipart([("title", b"hi", None, None)])
        with self.connect() as c:
            c.send(upload_head("POST", "/echo", len(body)) + body)
            self.assertEqual(c.read_response().status, 200)

    def test_more_files_than_the_route_takes_is_a_413(self):
        body = multipart(files(9, 10))
        with self.connect() as c:
            c.send(upload_head("POST", "/form", len(body)) + body, tolerate_close=True)
            r = c.read_response()
        self.assertEqual(r.status, 413)
        self.assertIn(b"more than 8 files", r.body)
        body = multipart(files(8, 10))
        with self.connect() as c:
            c.send(upload_head("POST", "/form", len(body)) + body)
            self.assertEqual(c.read_response().status, 200)


class UploadTokenIsCheckedBeforeAnyFile(harness.ServerTestCase):
    server_args = ("--workers", "0")
    server_env = {"TMPDIR": SPOOL, "KILNTEST_CSRF_EVERYWHERE": "1"}

    def session(self):
        r = self.get("/guarded/form")
        sid = [v.split(";")[0] for v in r.header_all("set-cookie") if v.startswith("kiln_sid=")][0]
        return sid, r.body.decode().split(" ")[0]

    def post(self, parts, headers):
        body = multipart(parts)
        with self.connect() as c:
            c.send(upload_head("POST", "/form", len(body), headers) + body, tolerate_close=True)
            return c.read_response()

    def test_no_token_no_file_on_disk(self):
        cookie, _token = self.session()
        body = multipart(files(3, 200 * 1024), close=False)
        with self.connect() as c:
            c.send(upload_head("POST", "/form", len(body) + 4096, [("Cookie", cookie)]) + body, tolerate_close=True)
            r = c.read_response()
            self.assertEqual(spooled_files(self.server), 0)
        self.assertEqual(r.status, 403)
        self.assertIn(b"CSRF", r.body)

    def test_an_empty_header_is_the_token_sent_even_with_a_field(self):
        # csrf_protect() reads a header sent empty as the token, and refuses it; the
        # gate must not fall back to the field and spool the files first.
        cookie, token = self.session()
        body = multipart(files(3, 200 * 1024, first=[("_csrf", token.encode(), None, None)]), close=False)
        head = upload_head("POST", "/form", len(body) + 4096, [("Cookie", cookie), ("X-CSRF-Token", "")])
        with self.connect() as c:
            c.send(head + body, tolerate_close=True)
            r = c.read_response()
            self.assertEqual(spooled_files(self.server), 0)
        self.assertEqual(r.status, 403)
        self.assertIn(b"before the files", r.body)

    def test_token_in_a_field_before_the_files_or_in_the_header(self):
        cookie, token = self.session()
        ok = self.post(files(1, 100 * 1024, first=[("_csrf", token.encode(), None, None)]), [("Cookie", cookie)])
        self.assertEqual(ok.status, 200, ok)
        self.assertIn(b" disk\n", ok.body)
        by_header = self.post(files(1, 100 * 1024), [("Cookie", cookie), ("X-CSRF-Token", token)])
        self.assertEqual(by_header.status, 200, by_header)
        late = self.post(files(1, 10) + [("_csrf", token.encode(), None, None)], [("Cookie", cookie)])
        self.assertEqual(late.status, 403)
        wrong = self.post(files(1, 10, first=[("_csrf", b"0" * 64, None, None)]), [("Cookie", cookie)])
        self.assertEqual(wrong.status, 403)
        no_session = self.post(files(1, 10, first=[("_csrf", token.encode(), None, None)]), [])
        self.assertEqual(no_session.status, 403)


class SpoolLimitPerWorker(harness.ServerTestCase):
    server_args = ("--workers", "0")
    server_env = {"TMPDIR": SPOOL, "KILN_LIMITS_UPLOAD_SPOOL_BYTES": "300000"}

    def test_uploads_past_the_limit_get_507_until_room_is_made(self):
        first = multipart(files(1, 200000))
        a = self.connect()
        self.addCleanup(a.close)
        a.send(upload_head("POST", "/form", len(first)) + first[:-100])  # on disk, unfinished
        # b's 200,000 bytes cannot fit beside more than 100,000 of a's: wait until a's
        # file holds most of what was sent of it (the file appears at 64 KiB, and with
        # two loops b may be read while a's loop is still held up).
        deadline = time.monotonic() + 5 * harness.TIME_SCALE
        while spooled_bytes(self.server) < 150000 and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(spooled_files(self.server), 1)
        self.assertGreaterEqual(spooled_bytes(self.server), 150000)
        with self.connect() as b:
            b.send(upload_head("POST", "/form", len(first)) + first, tolerate_close=True)
            r = b.read_response()
        self.assertEqual(r.status, 507, r)
        self.assertEqual(r.header("retry-after"), "1")  # room comes back as uploads end
        self.assertIn("upload_spool_bytes", self.server.output())
        a.send(first[-100:])
        self.assertEqual(a.read_response().status, 200)
        with self.connect() as c:  # the first upload's file is gone with its request
            c.send(upload_head("POST", "/form", len(first)) + first)
            self.assertEqual(c.read_response().status, 200)


if __name__ == "__main__":
    harness.main()
