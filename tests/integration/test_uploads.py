"""Request bodies, end to end: multipart/form-data parsed while it arrives (fields,
small files in memory, large files on disk), urlencoded forms and JSON, and their
error paths: a boundary split across reads, a missing final boundary, too many
parts, malformed encodings. A 100 MiB upload must leave the server's memory within
16 MiB of what it was idle."""

import hashlib
import os
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
        dest = os.path.join(tempfile.mkdtemp(), "saved.bin")
        self.addCleanup(lambda: os.path.exists(dest) and os.unlink(dest))
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


if __name__ == "__main__":
    harness.main()
