"""Static files (App::files) end to end: kiln_test_server serves a temporary tree
at /static (default options) and /raw (no cache, so every file goes through
sendfile; no index, no precompressed siblings, no Cache-Control, dotfiles allowed).
Checks Content-Type, validators and 304s, ranges, precompressed siblings, directory
handling, the in-memory cache noticing changes on disk, large files, and that no
request, however encoded, reads a file outside the root."""

import email.utils
import fcntl
import gzip
import hashlib
import os
import re
import shutil
import signal
import socket
import tempfile
import time

import harness
from harness import build_request

SECRET = b"TOP-SECRET-" + os.urandom(8).hex().encode()
SVG = b"<svg xmlns=\"http://www.w3.org/2000/svg\">" + b"<rect width=\"1\" height=\"1\"/>" * 200 + b"</svg>\n"
CSS = b"body { color: #c00; }\n" * 40
BIG_SIZE = 5 * 1024 * 1024
F_SETLEASE = getattr(fcntl, "F_SETLEASE", 1024)  # Linux: F_LINUX_SPECIFIC_BASE
ETAG = re.compile(r'^"[0-9a-f]+-[0-9a-f]+(-br|-gzip)?"$')

TYPES = {
    "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8",
    "js": "text/javascript; charset=utf-8", "mjs": "text/javascript; charset=utf-8",
    "json": "application/json", "svg": "image/svg+xml", "png": "image/png",
    "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
    "avif": "image/avif", "ico": "image/x-icon", "txt": "text/plain; charset=utf-8",
    "xml": "application/xml", "pdf": "application/pdf", "wasm": "application/wasm",
    "woff": "font/woff", "woff2": "font/woff2", "mp4": "video/mp4", "webm": "video/webm",
    "mp3": "audio/mpeg", "map": "application/json", "unknownext": "application/octet-stream",
}


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def http_date(t):
    return email.utils.formatdate(int(t), usegmt=True)


class StaticFiles(harness.ServerTestCase):

    @classmethod
    def setUpClass(cls):
        cls.base = tempfile.mkdtemp(prefix="kiln_static_")
        cls.root = os.path.join(cls.base, "root")
        cls.addClassCleanup(shutil.rmtree, cls.base, ignore_errors=True)
        r = cls.root
        write(os.path.join(cls.base, "secret.txt"), SECRET)
        write(os.path.join(r, "index.html"), b"<h1>home</h1>")
        write(os.path.join(r, "hello.txt"), b"hello, static\n")
        write(os.path.join(r, "style.css"), CSS)
        write(os.path.join(r, "style.css.gz"), gzip.compress(CSS))
        write(os.path.join(r, "style.css.br"), b"BR:" + CSS[:100])  # the server never decodes it
        write(os.path.join(r, "app.js"), b"console.log('identity');\n")
        write(os.path.join(r, "app.js.gz"), gzip.compress(b"console.log('identity');\n"))
        write(os.path.join(r, "map.svg"), SVG)  # with zstd and gzip siblings (the server never decodes them)
        write(os.path.join(r, "map.svg.zst"), b"ZSTD:" + SVG[:50])
        write(os.path.join(r, "map.svg.gz"), gzip.compress(SVG))
        write(os.path.join(r, "docs", "index.html"), b"<p>docs</p>")
        write(os.path.join(r, "my dir", "index.html"), b"spaced")
        write(os.path.join(r, "a b.txt"), b"space in name")
        os.makedirs(os.path.join(r, "emptydir"))
        write(os.path.join(r, ".env"), b"PASSWORD=" + SECRET)
        write(os.path.join(r, ".git", "config"), b"[core]")
        write(os.path.join(r, "empty.txt"), b"")
        write(os.path.join(r, "data.yaml"), b"a: 1\n")
        for ext in TYPES:
            write(os.path.join(r, "types", "f." + ext), b"x")
        cls.big = os.urandom(BIG_SIZE)
        write(os.path.join(r, "big.bin"), cls.big)
        os.symlink("hello.txt", os.path.join(r, "link_in"))
        os.symlink("../secret.txt", os.path.join(r, "link_out"))
        os.symlink("..", os.path.join(r, "dir_out"))
        os.symlink(os.path.join(cls.base, "secret.txt"), os.path.join(r, "abs_out"))
        os.mkfifo(os.path.join(r, "fifo.txt"))
        os.environ["KILNTEST_STATIC_DIR"] = r
        try:
            super().setUpClass()
        finally:
            del os.environ["KILNTEST_STATIC_DIR"]

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def head(self, target, headers=()):
        with self.connect() as c:
            return c.request("HEAD", target, headers)

    def assertNoSecret(self, r):
        self.assertNotIn(SECRET, r.body)
        self.assertNotIn(SECRET.decode(), r.raw_head.decode("latin-1"))

    # -------------------------------------------------------------- basics

    def test_a_file_under_a_lease_is_503_at_once(self):
        # Another process holds a write lease (Samba's oplocks, an NFS delegation): a
        # non-blocking open gets EAGAIN until the holder lets go, up to
        # /proc/sys/fs/lease-break-time (45 s). The loop must not retry all that while.
        path = self.path("leased.txt")
        write(path, b"leased")
        previous = signal.signal(signal.SIGIO, signal.SIG_IGN)  # the holder is told of the break
        self.addCleanup(signal.signal, signal.SIGIO, previous)
        fd = os.open(path, os.O_WRONLY)
        try:
            fcntl.fcntl(fd, F_SETLEASE, fcntl.F_WRLCK)
            t0 = time.monotonic()
            r = self.get("/static/leased.txt")
            self.assertLess(time.monotonic() - t0, 2.0, "the loop waited on the lease")
            self.assertEqual(r.status, 503, r)
            self.assertEqual(r.header("Retry-After"), "1")
            self.assertEqual(self.get("/static/hello.txt").status, 200)
            fcntl.fcntl(fd, F_SETLEASE, fcntl.F_UNLCK)
        finally:
            os.close(fd)
        self.assertEqual(self.get("/static/leased.txt").body, b"leased")

    def test_small_file_with_validators_and_default_headers(self):
        r = self.get("/static/hello.txt")
        self.assertEqual((r.status, r.body), (200, b"hello, static\n"))
        self.assertEqual(r.header("Content-Type"), "text/plain; charset=utf-8")
        self.assertEqual(r.header("Content-Length"), "14")
        self.assertRegex(r.header("ETag", ""), ETAG)
        self.assertEqual(r.header("Last-Modified"), http_date(os.stat(self.path("hello.txt")).st_mtime))
        self.assertEqual(r.header("Cache-Control"), "public, max-age=3600")
        self.assertEqual(r.header("Accept-Ranges"), "bytes")
        self.assertIsNone(r.header("Vary"))  # no sibling
        self.assertIsNone(r.header("Content-Encoding"))

    def test_same_file_from_cache_and_from_sendfile_is_identical(self):
        a = self.get("/static/hello.txt")
        b = self.get("/static/hello.txt")  # now from memory
        c = self.get("/raw/hello.txt")     # never cached: sendfile
        self.assertEqual(a.body, b.body)
        self.assertEqual(a.body, c.body)
        self.assertEqual(a.header("ETag"), c.header("ETag"))
        self.assertEqual(a.header("Last-Modified"), c.header("Last-Modified"))
        self.assertIsNone(c.header("Cache-Control"))  # /raw: cache_control = ""

    def test_head_has_the_get_headers_and_no_body(self):
        for target in ("/static/hello.txt", "/raw/hello.txt", "/static/big.bin"):
            g = self.get(target)
            with self.connect() as c:
                c.send(build_request("HEAD", target))
                h = c.read_response("HEAD")
                strip = lambda hs: [(n, v) for n, v in hs if n.lower() != "date"]
                self.assertEqual(h.status, 200, target)
                self.assertEqual(strip(h.headers), strip(g.headers), target)
                # A body sent after the HEAD head would be read as the next head.
                r = c.request("GET", "/static/hello.txt")
                self.assertEqual((r.status, r.body), (200, b"hello, static\n"), target)
                c.assert_open(self)

    def test_other_methods_get_405_with_allow(self):
        with self.connect() as c:
            for method in ("POST", "PUT", "DELETE", "PATCH"):
                r = c.request(method, "/static/hello.txt", body=b"x")
                self.assertEqual(r.status, 405, method)
                self.assertEqual(sorted(r.header_tokens("Allow")), ["get", "head"], method)

    def test_content_type_by_extension(self):
        for ext, want in TYPES.items():
            r = self.get("/static/types/f." + ext)
            self.assertEqual((r.status, r.header("Content-Type")), (200, want), ext)
        r = self.get("/static/TYPES/f.css")  # paths are case-sensitive: no such directory
        self.assertEqual(r.status, 404)

    def test_extra_mime_types_option(self):
        self.assertEqual(self.get("/raw/data.yaml").header("Content-Type"), "application/yaml")
        self.assertEqual(self.get("/static/data.yaml").header("Content-Type"), "application/octet-stream")

    def test_percent_encoded_names(self):
        r = self.get("/static/a%20b.txt")
        self.assertEqual((r.status, r.body), (200, b"space in name"))

    def test_empty_file(self):
        r = self.get("/static/empty.txt")
        self.assertEqual((r.status, r.body, r.header("Content-Length")), (200, b"", "0"))
        # An empty file has no byte a range could name: the whole (empty) file.
        r = self.get("/static/empty.txt", [("Range", "bytes=0-0")])
        self.assertEqual((r.status, r.body), (200, b""))

    # -------------------------------------------------------------- conditionals

    def test_if_none_match_gives_304_with_validators_and_no_body(self):
        tag = self.get("/static/hello.txt").header("ETag")
        for inm in (tag, "W/" + tag, '"nope", ' + tag, "*", '"a",W/"b" , ' + tag):
            with self.connect() as c:
                r = c.request("GET", "/static/hello.txt", [("If-None-Match", inm)])
                self.assertEqual(r.status, 304, inm)
                self.assertEqual(r.header("ETag"), tag)
                self.assertEqual(r.header("Cache-Control"), "public, max-age=3600")
                self.assertIsNone(r.header("Content-Length"))
                # No body bytes follow: the next response parses cleanly.
                r = c.request("GET", "/static/hello.txt")
                self.assertEqual((r.status, r.body), (200, b"hello, static\n"))
        r = self.get("/static/hello.txt", [("If-None-Match", '"other"')])
        self.assertEqual((r.status, r.body), (200, b"hello, static\n"))
        r = self.head("/static/hello.txt", [("If-None-Match", tag)])
        self.assertEqual(r.status, 304)
        r = self.get("/raw/big.bin", [("If-None-Match", self.head("/raw/big.bin").header("ETag"))])
        self.assertEqual((r.status, r.body), (304, b""))

    def test_if_modified_since(self):
        mtime = os.stat(self.path("hello.txt")).st_mtime
        r = self.get("/static/hello.txt", [("If-Modified-Since", http_date(mtime))])
        self.assertEqual((r.status, r.body), (304, b""))
        r = self.get("/static/hello.txt", [("If-Modified-Since", http_date(mtime + 3600))])
        self.assertEqual(r.status, 304)
        r = self.get("/static/hello.txt", [("If-Modified-Since", http_date(mtime - 3600))])
        self.assertEqual((r.status, r.body), (200, b"hello, static\n"))
        # The obsolete asctime form is accepted too (RFC 9110 §5.6.7).
        asctime = time.strftime("%a %b %e %H:%M:%S %Y", time.gmtime(mtime + 60))
        self.assertEqual(self.get("/static/hello.txt", [("If-Modified-Since", asctime)]).status, 304)

    def test_if_none_match_takes_precedence_over_if_modified_since(self):
        mtime = os.stat(self.path("hello.txt")).st_mtime
        tag = self.get("/static/hello.txt").header("ETag")
        r = self.get("/static/hello.txt", [("If-None-Match", '"other"'),
                                           ("If-Modified-Since", http_date(mtime + 3600))])
        self.assertEqual(r.status, 200)
        r = self.get("/static/hello.txt", [("If-None-Match", tag),
                                           ("If-Modified-Since", http_date(mtime - 3600))])
        self.assertEqual(r.status, 304)

    # -------------------------------------------------------------- ranges

    def check_range(self, target, full, header, first, last):
        r = self.get(target, [("Range", header)])
        self.assertEqual(r.status, 206, (target, header, r))
        self.assertEqual(r.header("Content-Range"), "bytes %d-%d/%d" % (first, last, len(full)))
        self.assertEqual(r.header("Content-Length"), str(last - first + 1))
        self.assertTrue(r.body == full[first:last + 1], (target, header))

    def test_single_ranges_from_memory_and_from_sendfile(self):
        full = b"hello, static\n"
        for target in ("/static/hello.txt", "/raw/hello.txt"):
            self.check_range(target, full, "bytes=0-4", 0, 4)
            self.check_range(target, full, "bytes=7-", 7, 13)
            self.check_range(target, full, "bytes=-7", 7, 13)
            self.check_range(target, full, "bytes=5-1000", 5, 13)
            self.check_range(target, full, "bytes=-1000", 0, 13)

    def test_range_on_the_large_file(self):
        self.check_range("/static/big.bin", self.big, "bytes=1048576-2097151", 1048576, 2097151)
        self.check_range("/static/big.bin", self.big, "bytes=-1000", BIG_SIZE - 1000, BIG_SIZE - 1)
        self.check_range("/static/big.bin", self.big, "bytes=%d-" % (BIG_SIZE - 5), BIG_SIZE - 5, BIG_SIZE - 1)

    def test_several_ranges_give_the_whole_file(self):
        r = self.get("/static/hello.txt", [("Range", "bytes=0-1,4-5")])
        self.assertEqual((r.status, r.body), (200, b"hello, static\n"))
        self.assertIsNone(r.header("Content-Range"))

    def test_if_range(self):
        g = self.get("/static/hello.txt")
        tag, lm = g.header("ETag"), g.header("Last-Modified")
        for if_range, status in ((tag, 206), (lm, 206), ('"other"', 200), ("W/" + tag, 200),
                                 (http_date(email.utils.parsedate_to_datetime(lm).timestamp() + 1), 200),
                                 ("garbage", 200)):
            r = self.get("/static/hello.txt", [("Range", "bytes=0-4"), ("If-Range", if_range)])
            self.assertEqual(r.status, status, if_range)
            self.assertEqual(r.body, b"hello" if status == 206 else b"hello, static\n")

    def test_if_match_and_if_unmodified_since(self):
        # A download resumed in parts must not splice another version: 412 (RFC 9110
        # §13.1.1, §13.1.4), evaluated before If-None-Match and Range.
        g = self.get("/raw/big.bin")
        tag, lm = g.header("ETag"), g.header("Last-Modified")
        earlier = http_date(email.utils.parsedate_to_datetime(lm).timestamp() - 10)
        for headers, status in (([("If-Match", tag)], 206), ([("If-Match", '"a", ' + tag)], 206),
                                ([("If-Match", "*")], 206), ([("If-Match", '"nope"')], 412),
                                ([("If-Match", "W/" + tag)], 412),  # weak: never for If-Match
                                ([("If-Unmodified-Since", lm)], 206), ([("If-Unmodified-Since", earlier)], 412),
                                ([("If-Unmodified-Since", "garbage")], 206),  # ignored
                                ([("If-Match", tag), ("If-Unmodified-Since", earlier)], 206),  # If-Match wins
                                ([("If-Match", '"nope"'), ("If-None-Match", tag)], 412)):
            r = self.get("/raw/big.bin", [("Range", "bytes=0-9")] + headers)
            self.assertEqual(r.status, status, headers)
            if status == 206:
                self.assertEqual(r.body, self.big[:10], headers)

    def test_pipelined_one_byte_ranges_hold_few_descriptors(self):
        # Each answer from a file keeps its descriptor until sent. Counted by their bytes
        # alone (about 300 each), one-byte ranges pipelined by a client that reads
        # nothing filled the socket's buffers, then 1 MiB of output (max_pending_output):
        # 3,557 descriptors for one connection (a few such: EMFILE for the whole
        # worker). Each range now weighs at least 16 KiB.
        workers = self.server.children()

        def open_fds():  # in every worker: the connection lands on one of them
            return sum(len(os.listdir("/proc/%d/fd" % w)) for w in workers)
        before = open_fds()
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # no growing window
            s.connect(("127.0.0.1", self.port))
            s.settimeout(3)
            try:  # until the server stops reading
                s.sendall(build_request("GET", "/raw/big.bin", [("Range", "bytes=0-0")]) * 40000)
            except socket.timeout:
                pass
            time.sleep(0.5)
            held = open_fds() - before
        self.assertLess(held, 200, "descriptors held for one connection's pipelined ranges")
        self.assertEqual(self.get("/raw/hello.txt").status, 200)

    def test_head_ignores_range(self):
        r = self.head("/static/hello.txt", [("Range", "bytes=0-4")])
        self.assertEqual((r.status, r.header("Content-Length")), (200, "14"))

    # -------------------------------------------------------------- precompressed siblings

    def test_brotli_preferred_then_gzip_with_vary(self):
        r = self.get("/static/style.css", [("Accept-Encoding", "gzip, deflate, br")])
        self.assertEqual((r.status, r.header("Content-Encoding")), (200, "br"))
        self.assertEqual(r.body, b"BR:" + CSS[:100])
        self.assertEqual(r.header("Content-Type"), "text/css; charset=utf-8")
        self.assertEqual(r.header_tokens("Vary"), ["accept-encoding"])
        self.assertTrue(r.header("ETag").endswith('-br"'), r.header("ETag"))
        r = self.get("/static/style.css", [("Accept-Encoding", "gzip")])
        self.assertEqual(r.header("Content-Encoding"), "gzip")
        self.assertEqual(gzip.decompress(r.body), CSS)
        self.assertTrue(r.header("ETag").endswith('-gzip"'))

    def test_q_values_choose_the_coding(self):
        cases = {"br;q=0, gzip": "gzip", "gzip;q=1, br;q=0.5": "gzip", "gzip;q=0.5, br;q=0.9": "br",
                 "*": "br", "*;q=0.5, br;q=0": "gzip", "gzip;q=0, br;q=0": None, "identity": None,
                 "x-gzip": "gzip"}
        for ae, want in cases.items():
            r = self.get("/static/style.css", [("Accept-Encoding", ae)])
            self.assertEqual(r.header("Content-Encoding"), want, ae)
            self.assertEqual(r.header_tokens("Vary"), ["accept-encoding"], ae)
            if want is None:
                self.assertEqual(r.body, CSS, ae)

    def test_identity_answer_carries_vary_when_a_sibling_exists(self):
        r = self.get("/static/style.css")
        self.assertEqual((r.body, r.header("Content-Encoding")), (CSS, None))
        self.assertEqual(r.header_tokens("Vary"), ["accept-encoding"])
        r = self.get("/static/app.js", [("Accept-Encoding", "br")])  # only a .gz exists
        self.assertEqual((r.header("Content-Encoding"), r.header_tokens("Vary")), (None, ["accept-encoding"]))
        r = self.get("/raw/style.css", [("Accept-Encoding", "br, gzip")])  # precompressed = false
        self.assertEqual((r.body, r.header("Content-Encoding"), r.header("Vary")), (CSS, None, None))

    def test_a_zstd_sibling(self):
        cases = {"gzip, deflate, br, zstd": "zstd", "gzip, zstd;q=0.5": "gzip", "zstd": "zstd", "br": None,
                 "*": "zstd"}
        for accept, coding in cases.items():
            r = self.get("/static/map.svg", [("Accept-Encoding", accept)])
            self.assertEqual((r.status, r.header("Content-Encoding")), (200, coding), accept)
            self.assertEqual(r.header_tokens("Vary"), ["accept-encoding"], accept)
            want = {"zstd": b"ZSTD:" + SVG[:50], "gzip": gzip.compress(SVG), None: SVG}[coding]
            if coding != "gzip":  # gzip's bytes carry a time stamp: compare decoded
                self.assertEqual(r.body, want, accept)
            else:
                self.assertEqual(gzip.decompress(r.body), SVG, accept)
        self.assertTrue(self.get("/static/map.svg", [("Accept-Encoding", "zstd")]).header("ETag").endswith('-zstd"'))

    def test_each_coding_has_its_own_etag_and_304(self):
        ident = self.get("/static/style.css").header("ETag")
        br = self.get("/static/style.css", [("Accept-Encoding", "br")]).header("ETag")
        self.assertNotEqual(ident, br)
        r = self.get("/static/style.css", [("Accept-Encoding", "br"), ("If-None-Match", br)])
        self.assertEqual(r.status, 304)
        self.assertEqual(r.header_tokens("Vary"), ["accept-encoding"])
        r = self.get("/static/style.css", [("If-None-Match", br)])  # identity wanted: a different tag
        self.assertEqual(r.status, 200)

    def test_a_sibling_older_than_its_file_is_stale_and_not_sent(self):
        # A deploy that changed the file and not its .gz: the old content must not be sent.
        write(self.path("fresh.css"), CSS)
        write(self.path("fresh.css.gz"), gzip.compress(b"old content"))
        now = time.time()
        os.utime(self.path("fresh.css.gz"), (now - 60, now - 60))
        os.utime(self.path("fresh.css"), (now, now))
        r = self.get("/static/fresh.css", [("Accept-Encoding", "gzip")])
        self.assertEqual((r.status, r.header("Content-Encoding"), r.body), (200, None, CSS))
        self.assertEqual(r.header_tokens("Vary"), ["accept-encoding"])
        os.utime(self.path("fresh.css.gz"), (now, now))  # remade (gzip -k keeps the mtime): the same age is fresh
        r = self.get("/static/fresh.css", [("Accept-Encoding", "gzip")])
        self.assertEqual((r.status, r.header("Content-Encoding")), (200, "gzip"))
        self.assertEqual(gzip.decompress(r.body), b"old content")

    def test_range_applies_to_the_encoded_bytes(self):
        enc = gzip.compress(CSS)
        with open(self.path("style.css.gz"), "rb") as f:
            enc = f.read()
        r = self.get("/static/style.css", [("Accept-Encoding", "gzip"), ("Range", "bytes=0-9")])
        self.assertEqual((r.status, r.header("Content-Encoding")), (206, "gzip"))
        self.assertEqual(r.header("Content-Range"), "bytes 0-9/%d" % len(enc))
        self.assertEqual(r.body, enc[:10])

    # -------------------------------------------------------------- directories

    def test_directory_with_slash_serves_the_index(self):
        self.assertEqual(self.get("/static/").body, b"<h1>home</h1>")
        r = self.get("/static/docs/")
        self.assertEqual((r.status, r.body), (200, b"<p>docs</p>"))
        self.assertEqual(r.header("Content-Type"), "text/html; charset=utf-8")

    def test_directory_without_slash_redirects(self):
        for target, location in (("/static/docs", "/static/docs/"), ("/static", "/static/"),
                                 ("/static/docs?x=1&y=2", "/static/docs/?x=1&y=2"),
                                 ("/static/my%20dir", "/static/my%20dir/")):
            r = self.get(target)
            self.assertEqual((r.status, r.header("Location")), (301, location), target)
        self.assertEqual(self.get("/static/my%20dir/").body, b"spaced")

    def test_directory_without_index_is_404(self):
        self.assertEqual(self.get("/static/emptydir/").status, 404)
        self.assertEqual(self.get("/raw/docs/").status, 404)  # /raw has index = ""
        self.assertEqual(self.get("/static/hello.txt/").status, 404)  # a file is not a directory

    # -------------------------------------------------------------- the cache follows the disk

    def test_a_file_changed_on_disk_is_served_fresh(self):
        p = self.path("changing.txt")
        write(p, b"version one")
        first = self.get("/static/changing.txt")
        self.assertEqual(first.body, b"version one")
        self.assertEqual(self.get("/static/changing.txt").body, b"version one")  # cached now
        write(p, b"version two, longer")
        r = self.get("/static/changing.txt")
        self.assertEqual(r.body, b"version two, longer")
        self.assertNotEqual(r.header("ETag"), first.header("ETag"))
        # Same size, new bytes, mtime moved: still noticed.
        write(p, b"VERSION TWO, LONGER")
        st = os.stat(p)
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 5 * 10**9))
        self.assertEqual(self.get("/static/changing.txt").body, b"VERSION TWO, LONGER")
        # Deleted: 404 at once, not the cached bytes.
        os.unlink(p)
        self.assertEqual(self.get("/static/changing.txt").status, 404)

    def test_a_cached_file_replaced_by_a_symlink_outside_is_not_served(self):
        p = self.path("swapped.txt")
        write(p, b"harmless")
        self.assertEqual(self.get("/static/swapped.txt").body, b"harmless")
        os.unlink(p)
        os.symlink("../secret.txt", p)
        r = self.get("/static/swapped.txt")
        self.assertEqual(r.status, 404)
        self.assertNoSecret(r)

    # -------------------------------------------------------------- large files

    def test_large_file_arrives_complete(self):
        want = hashlib.sha256(self.big).hexdigest()
        for target in ("/static/big.bin", "/raw/big.bin"):
            r = self.get(target)
            self.assertEqual(r.status, 200, target)
            self.assertEqual(r.header("Content-Length"), str(BIG_SIZE))
            self.assertEqual(len(r.body), BIG_SIZE, target)
            self.assertEqual(hashlib.sha256(r.body).hexdigest(), want, target)

    def test_pipelined_large_and_small_files_stay_in_order(self):
        with self.connect() as c:
            c.send(build_request("GET", "/static/big.bin") + build_request("GET", "/static/hello.txt")
                   + build_request("GET", "/raw/big.bin", [("Range", "bytes=10-19")]))
            a = c.read_response()
            b = c.read_response()
            d = c.read_response()
            self.assertEqual(hashlib.sha256(a.body).digest(), hashlib.sha256(self.big).digest())
            self.assertEqual(b.body, b"hello, static\n")
            self.assertEqual((d.status, d.body), (206, self.big[10:20]))
            c.assert_open(self)

    # -------------------------------------------------------------- error paths

    def test_symlink_inside_the_root_works(self):
        r = self.get("/static/link_in")
        self.assertEqual((r.status, r.body), (200, b"hello, static\n"))

    def test_traversal_attempts_never_leave_the_root(self):
        targets = [
            "/static/../secret.txt", "/static/%2e%2e/secret.txt", "/static/..%2fsecret.txt",
            "/static/%2e%2e%2fsecret.txt", "/static/%2E%2E%2Fsecret.txt", "/static/.%2e/secret.txt",
            "/static/docs/../../secret.txt", "/static/..%5csecret.txt", "/static/%5c..%5csecret.txt",
            "/static/..\\secret.txt", "/static/link_out", "/static/dir_out/secret.txt",
            "/static/abs_out", "/static//etc/passwd", "/static/%2fetc%2fpasswd",
            "/raw/link_out", "/raw/dir_out/secret.txt", "/raw/..%2fsecret.txt",
        ]
        for target in targets:
            with self.connect() as c:
                # Raw bytes: no client library gets to "fix" the path first.
                c.send(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % target).encode("latin-1"))
                r = c.read_response()
                # An encoded slash is refused before routing (400); the rest never match a file.
                self.assertEqual(r.status, 400 if "%2f" in target.lower() else 404, target)
                self.assertNoSecret(r)

    def test_nul_in_the_path_is_refused(self):
        # The server refuses a decoded NUL before routing (400, src/http/url.cpp);
        # the file handler would answer 404. Either way nothing is read.
        for target in ("/static/a%00b", "/static/hello.txt%00.png", "/static/%00/../secret.txt"):
            with self.connect() as c:
                c.send(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % target).encode())
                r = c.read_response()
                self.assertIn(r.status, (400, 404), target)
                self.assertNoSecret(r)

    def test_dotfiles_are_hidden_unless_allowed(self):
        for target in ("/static/.env", "/static/.git/config", "/static/.git/", "/static/%2eenv"):
            r = self.get(target)
            self.assertEqual(r.status, 404, target)
            self.assertNoSecret(r)
        r = self.get("/raw/.env")  # /raw has dotfiles = true
        self.assertEqual((r.status, r.body), (200, b"PASSWORD=" + SECRET))

    def test_missing_file_is_404(self):
        for target in ("/static/nope.txt", "/static/nope/", "/static/docs/nope.html", "/raw/nope"):
            r = self.get(target)
            self.assertEqual((r.status, r.body), (404, b"Not Found\n"), target)

    def test_fifo_is_404_and_does_not_block_the_server(self):
        start = time.monotonic()
        r = self.get("/static/fifo.txt")
        self.assertEqual(r.status, 404)
        self.assertLess(time.monotonic() - start, 2.0)
        self.assert_server_alive()

    def test_unsatisfiable_range_is_416(self):
        for target, size in (("/static/hello.txt", 14), ("/raw/big.bin", BIG_SIZE)):
            for rng in ("bytes=%d-" % size, "bytes=%d-%d" % (size + 10, size + 20), "bytes=-0"):
                r = self.get(target, [("Range", rng)])
                self.assertEqual(r.status, 416, (target, rng))
                self.assertEqual(r.header("Content-Range"), "bytes */%d" % size)
                self.assertIsNone(r.header("Cache-Control"))  # an error must not be cached

    def test_malformed_headers_are_ignored(self):
        for name, value in (("Range", "bytes=5-1"), ("Range", "items=0-1"), ("Range", "bytes=x-y"),
                            ("If-Modified-Since", "yesterday"), ("If-None-Match", "unquoted"),
                            ("Accept-Encoding", "br;q=7")):
            r = self.get("/static/hello.txt", [(name, value)])
            self.assertEqual((r.status, r.body), (200, b"hello, static\n"), (name, value))


class PermissionDenied(harness.ServerTestCase):
    """A file the server's user may not read is 403, not 404 or 500. Root reads
    anything, so as root the server is started with --user nobody (its workers run
    main(), and so open the root, as that user: the tree must be searchable)."""

    server_args = ("--user", "nobody") if os.geteuid() == 0 else ()

    @classmethod
    def setUpClass(cls):
        cls.base = tempfile.mkdtemp(prefix="kiln_static_perm_")
        cls.addClassCleanup(shutil.rmtree, cls.base, ignore_errors=True)
        root = os.path.join(cls.base, "root")
        write(os.path.join(root, "open.txt"), b"readable")
        write(os.path.join(root, "closed.txt"), b"unreadable")
        write(os.path.join(root, "locked", "inside.txt"), b"behind a locked directory")
        os.chmod(cls.base, 0o755)
        os.chmod(root, 0o755)
        os.chmod(os.path.join(root, "open.txt"), 0o644)
        os.chmod(os.path.join(root, "closed.txt"), 0)
        os.chmod(os.path.join(root, "locked"), 0o700)
        if os.geteuid() == 0:
            os.chown(os.path.join(root, "locked"), 0, 0)
        os.environ["KILNTEST_STATIC_DIR"] = root
        try:
            super().setUpClass()
        finally:
            del os.environ["KILNTEST_STATIC_DIR"]

    def test_unreadable_file_and_directory_are_403(self):
        self.assertEqual(self.get("/static/open.txt").body, b"readable")
        for target in ("/static/closed.txt", "/raw/closed.txt", "/static/locked/inside.txt"):
            r = self.get(target)
            self.assertEqual((r.status, r.body), (403, b"Forbidden\n"), target)


if __name__ == "__main__":
    harness.main()
