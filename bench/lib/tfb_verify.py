#!/usr/bin/env python3
"""Checks a server against the TechEmpower Framework Benchmarks' rules (stdlib only).

    tfb_verify.py [--tests LIST] [--database-url URL] BASE_URL

BASE_URL is the server's root, e.g. http://127.0.0.1:8080. bench/techempower.sh runs this
on every server (kiln and the peers in bench/peers/tfb-*) before measuring it. In the
spirit of TFB's own verifier (toolset/test_types/*), every test's responses must have
status 200, Server and Date headers, the test's Content-Type, and a body framed by a
Content-Length or chunked encoding that matches exactly; then per test:

  plaintext       body exactly "Hello, World!", also 16 requests pipelined on one connection
  json            {"message":"Hello, World!"} (parsed), also keep-alive over 3 requests
  db              an object {"id": 1..10000, "randomNumber": 1..10000}, ids vary
  queries         ?queries=N: an array of N such objects, N clamped to 1..500 (missing,
                  empty, 0, negative or not a number: 1; 501: 500)
  cached-queries  ?count=N: the same
  fortunes        the table rows (html.parser) are the database's fortunes plus id 0
                  "Additional fortune added at request time.", sorted by message, HTML
                  escaped, UTF-8 intact
  updates         ?queries=N: like queries; and the new numbers are in the database

With a database URL (--database-url, else the DATABASE_URL environment variable) it also
compares rows with the database through `psql` (Debian's postgresql-client): /db and
/queries rows match the world table; /updates's numbers are stored and no other row
changed; the fortunes are read from the database (else TFB's standard 12 are expected).
And, as TFB's verifier does, it counts the statements run for /queries and /updates in
pg_stat_statements: 3 x queries=20 must run at least 60 SELECTs on world (one per row;
batching them into one `id = ANY(...)` query fails) and /updates must update about 60
rows. That needs PostgreSQL started with shared_preload_libraries=pg_stat_statements
(the verifier creates the extension if it is missing); otherwise that check is skipped
and says why, as are all database checks without a database URL.

Prints one line per check (PASS, FAIL or SKIP) and a summary; exits 0 when every check
passed, 1 when one failed, 2 on bad usage. Run it on an idle server: /updates changes
rows, and the database comparisons assume nobody else writes meanwhile.
"""

import argparse
import email.utils
import html.parser
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse

TIMEOUT = 15.0          # seconds per socket operation
TESTS = ("plaintext", "json", "db", "queries", "cached-queries", "fortunes", "updates")
EXTRA_FORTUNE = (0, "Additional fortune added at request time.")
STANDARD_FORTUNES = [
    (1, "fortune: No such file or directory"),
    (2, "A computer scientist is someone who fixes things that aren't broken."),
    (3, "After enough decimal places, nobody gives a damn."),
    (4, "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1"),
    (5, "A computer program does what you tell it to do, not what you want it to do."),
    (6, "Emacs is a nice operating system, but I prefer UNIX. \u2014 Tom Christaensen"),
    (7, "Any program that runs right is obsolete."),
    (8, "A list is only as strong as its weakest link. \u2014 Donald Knuth"),
    (9, "Feature: A bug with seniority."),
    (10, "Computers make very fast, very accurate mistakes."),
    (11, '<script>alert("This should not be displayed in a browser alert box.");</script>'),
    (12, "\u30d5\u30ec\u30fc\u30e0\u30ef\u30fc\u30af\u306e\u30d9\u30f3\u30c1\u30de\u30fc\u30af"),
]
QUOTE = r'(?:&quot;|&#0*34;|&#[xX]0*22;)'
ESCAPED_SCRIPT = re.compile(r'&lt;script&gt;alert\(' + QUOTE +
                            r'This should not be displayed in a browser alert box\.' + QUOTE +
                            r'\);&lt;/script&gt;')
# (query string, rows expected): TFB's own cases and the clamping rules.
COUNT_CASES = [(None, 1), ("", 1), ("0", 1), ("foo", 1), ("-1", 1), ("1", 1), ("20", 20),
               ("500", 500), ("501", 500)]


class Fail(Exception):
    """A check failed; the message says what is wrong."""


class Skip(Exception):
    """A check cannot run here; the message says why."""


# ---- a small HTTP/1.1 client that sees the framing ---------------------------------------
class Response:
    def __init__(self, status, reason, headers, body, framing):
        self.status, self.reason, self.headers, self.body, self.framing = status, reason, headers, body, framing

    def header(self, name):
        """The value of header NAME (None if absent; Fail if it is repeated)."""
        values = [v for n, v in self.headers if n.lower() == name.lower()]
        if len(values) > 1:
            raise Fail("header %s appears %d times" % (name, len(values)))
        return values[0] if values else None


class Connection:
    def __init__(self, host, port):
        try:
            self.sock = socket.create_connection((host, port), timeout=TIMEOUT)
        except OSError as e:
            raise Fail("cannot connect to %s:%d: %s" % (host, port, e))
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, data):
        try:
            self.sock.sendall(data)
        except OSError as e:
            raise Fail("sending the request failed: %s" % e)

    def _fill(self, what):
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout:
            raise Fail("no answer within %g s while reading %s" % (TIMEOUT, what))
        except OSError as e:
            raise Fail("reading %s failed: %s" % (what, e))
        if not chunk:
            raise Fail("the server closed the connection in the middle of %s" % what)
        self.buf += chunk

    def _until(self, sep, limit, what):
        while True:
            i = self.buf.find(sep)
            if i >= 0:
                out, self.buf = self.buf[:i], self.buf[i + len(sep):]
                return out
            if len(self.buf) > limit:
                raise Fail("%s longer than %d bytes" % (what, limit))
            self._fill(what)

    def _exact(self, n, what):
        while len(self.buf) < n:
            self._fill(what)
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_response(self):
        head = self._until(b"\r\n\r\n", 65536, "the response head")
        lines = head.split(b"\r\n")
        m = re.match(rb"HTTP/1\.[01] (\d{3})(?: (.*))?$", lines[0])
        if not m:
            raise Fail("bad status line %r" % lines[0][:80])
        headers = []
        for line in lines[1:]:
            if line[:1] in (b" ", b"\t") or b":" not in line:
                raise Fail("bad header line %r" % line[:80])
            name, _, value = line.partition(b":")
            headers.append((name.decode("latin-1").strip(), value.decode("latin-1").strip()))
        resp = Response(int(m.group(1)), (m.group(2) or b"").decode("latin-1"), headers, b"", "")
        te, cl = resp.header("Transfer-Encoding"), resp.header("Content-Length")
        if te is not None and cl is not None:
            raise Fail("both Transfer-Encoding and Content-Length are set")
        if te is not None:
            if te.lower() != "chunked":
                raise Fail("unexpected Transfer-Encoding %r" % te)
            parts = []
            while True:
                size_line = self._until(b"\r\n", 1024, "a chunk size").split(b";")[0].strip()
                if not re.fullmatch(rb"[0-9a-fA-F]+", size_line):
                    raise Fail("bad chunk size line %r" % size_line[:40])
                size = int(size_line, 16)
                if size == 0:
                    while self._until(b"\r\n", 8192, "the chunked trailer"):
                        pass
                    break
                parts.append(self._exact(size, "a chunk"))
                if self._exact(2, "a chunk's end") != b"\r\n":
                    raise Fail("a chunk is longer than its size line says")
            resp.body, resp.framing = b"".join(parts), "chunked"
        elif cl is not None:
            if not cl.isdigit():
                raise Fail("bad Content-Length %r" % cl)
            resp.body, resp.framing = self._exact(int(cl), "the body (Content-Length %s)" % cl), "length"
        else:
            raise Fail("neither Content-Length nor Transfer-Encoding: chunked is set")
        return resp

    def rest(self):
        """What the server sends after the response until it closes the connection."""
        extra, deadline = self.buf, time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                raise Fail("the server did not close the connection after Connection: close")
            except ConnectionResetError:
                break
            if not chunk:
                break
            extra += chunk
        return extra


class Verifier:
    def __init__(self, base, dburl):
        u = urllib.parse.urlsplit(base)
        if u.scheme != "http" or not u.hostname:
            raise SystemExit("tfb_verify: BASE_URL must look like http://127.0.0.1:8080, not %r" % base)
        self.base, self.host, self.port = base, u.hostname, u.port or 80
        self.prefix = u.path.rstrip("/")
        self.hostport = u.netloc
        self.dburl = dburl
        self.passed, self.failed, self.skipped = 0, [], 0

    # ---- reporting ----
    def check(self, name, fn):
        try:
            detail = fn()
        except Fail as e:
            self.failed.append(name)
            print("FAIL  %s: %s" % (name, e), flush=True)
            return False
        except Skip as e:
            self.skip(name, str(e))
            return False
        self.passed += 1
        print("PASS  %s%s" % (name, ": " + detail if detail else ""), flush=True)
        return True

    def skip(self, name, why):
        self.skipped += 1
        print("SKIP  %s: %s" % (name, why), flush=True)

    # ---- HTTP ----
    def request_bytes(self, path, close):
        return ("GET %s%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: tfb_verify\r\nAccept: */*\r\n%s\r\n" %
                (self.prefix, path, self.hostport, "Connection: close\r\n" if close else "")).encode()

    def get(self, path):
        """One request on its own connection (Connection: close); nothing may follow the body."""
        conn = Connection(self.host, self.port)
        try:
            conn.send(self.request_bytes(path, True))
            resp = conn.read_response()
            extra = conn.rest()
        finally:
            conn.close()
        if extra:
            raise Fail("%d bytes follow the body (%s framing): %r" % (len(extra), resp.framing, extra[:60]))
        return resp

    # ---- database ----
    def psql(self, sql):
        if not shutil.which("psql"):
            raise Fail("psql not found (apt-get install postgresql-client)")
        try:
            r = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-F", "\x1f", "-v", "ON_ERROR_STOP=1",
                                "-d", self.dburl, "-c", sql],
                               capture_output=True, timeout=60, env=dict(os.environ, PGCONNECT_TIMEOUT="10"))
        except subprocess.TimeoutExpired:
            raise Fail("psql did not answer within 60 s")
        if r.returncode != 0:
            raise Fail("psql failed: %s" % r.stderr.decode(errors="replace").strip()[:300])
        return [line.split("\x1f") for line in r.stdout.decode("utf-8").splitlines() if line]

    def world_table(self):
        return {int(i): int(n) for i, n in self.psql("SELECT id, randomnumber FROM world")}

    def statement_counts(self):
        """(SELECT calls, SELECT rows, UPDATE rows) on world so far, from pg_stat_statements,
        or a string saying why it cannot be used."""
        if getattr(self, "_pgss", None) is None:
            loaded = self.psql("SHOW shared_preload_libraries")
            if not loaded or "pg_stat_statements" not in loaded[0][0]:
                self._pgss = ("PostgreSQL was not started with shared_preload_libraries=pg_stat_statements "
                              "(with tests/pg/pg_server.py: KILN_PG_SETTINGS=shared_preload_libraries=pg_stat_statements)")
            else:
                try:
                    self.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                    self._pgss = True
                except Fail as e:
                    self._pgss = "cannot create the pg_stat_statements extension: %s" % e
        if self._pgss is not True:
            return self._pgss
        # The pattern is split so that this statement does not match itself.
        rows = self.psql(
            "SELECT coalesce(sum(calls) FILTER (WHERE NOT upd), 0), coalesce(sum(rows) FILTER (WHERE NOT upd), 0), "
            "coalesce(sum(rows) FILTER (WHERE upd), 0) FROM (SELECT calls, rows, query ~* '^\\s*update' AS upd "
            "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND query ~* ('\\mwor' || 'ld\\M')) AS s")
        return tuple(int(x) for x in rows[0])


# ---- per-response checks ----------------------------------------------------------------
def check_common(resp, kind):
    """Status, Server, Date and Content-Type of a response whose test serves KIND."""
    if resp.status != 200:
        raise Fail("status %d %s (body: %r)" % (resp.status, resp.reason, resp.body[:120]))
    if not resp.header("Server"):
        raise Fail("no Server header")
    date = resp.header("Date")
    if not date:
        raise Fail("no Date header")
    try:
        if email.utils.parsedate_to_datetime(date) is None:
            raise ValueError
    except (TypeError, ValueError, IndexError):
        raise Fail("Date header %r is not an HTTP date" % date)
    ctype = resp.header("Content-Type")
    if not ctype:
        raise Fail("no Content-Type header")
    media, *params = [p.strip() for p in ctype.split(";")]
    charset = None
    for p in params:
        key, _, value = p.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip('"').lower()
        elif p:
            raise Fail("Content-Type %r has an unexpected parameter %r" % (ctype, p))
    want = {"plain": "text/plain", "json": "application/json", "html": "text/html"}[kind]
    if media.lower() != want:
        raise Fail("Content-Type is %r, expected %s%s" % (ctype, want, "; charset=utf-8" if kind == "html" else ""))
    if kind == "html" and charset is None:
        raise Fail("Content-Type %r has no charset (expected text/html; charset=utf-8)" % ctype)
    if charset is not None and charset != "utf-8":
        raise Fail("Content-Type %r: charset must be utf-8" % ctype)


def parse_json(resp):
    try:
        return json.loads(resp.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise Fail("body is not JSON (%s): %r" % (e, resp.body[:120]))


def check_world(obj, where):
    if not isinstance(obj, dict):
        raise Fail("%s is %s, not a JSON object: %r" % (where, type(obj).__name__, obj))
    if set(obj) != {"id", "randomNumber"}:
        raise Fail("%s has keys %s, expected exactly id and randomNumber" % (where, sorted(obj)))
    for key in ("id", "randomNumber"):
        v = obj[key]
        if not isinstance(v, int) or isinstance(v, bool):
            raise Fail("%s: %s is %r, not an integer" % (where, key, v))
        if not 1 <= v <= 10000:
            raise Fail("%s: %s is %d, not in 1..10000" % (where, key, v))
    return obj["id"], obj["randomNumber"]


def check_world_list(data, n, path):
    if not isinstance(data, list):
        raise Fail("body is a JSON %s, expected an array" % type(data).__name__)
    if len(data) != n:
        raise Fail("%d rows, expected %d" % (len(data), n))
    return [check_world(o, "row %d" % i) for i, o in enumerate(data)]


def compare_with_table(rows, table):
    for i, (wid, num) in enumerate(rows):
        if table.get(wid) != num:
            raise Fail("row %d: id %d has randomNumber %d, the world table says %s" % (i, wid, num, table.get(wid)))


# ---- the tests -------------------------------------------------------------------------
def test_plaintext(v):
    def single():
        resp = v.get("/plaintext")
        check_common(resp, "plain")
        if resp.body != b"Hello, World!":
            raise Fail("body is %r, expected b'Hello, World!'" % resp.body[:80])
        return "200, headers, body (%s framing)" % resp.framing
    v.check("GET /plaintext", single)

    def pipelined():
        conn = Connection(v.host, v.port)
        try:
            conn.send(v.request_bytes("/plaintext", False) * 16)
            for i in range(16):
                try:
                    resp = conn.read_response()
                except Fail as e:
                    raise Fail("response %d of 16: %s" % (i + 1, e))
                check_common(resp, "plain")
                if resp.body != b"Hello, World!":
                    raise Fail("response %d of 16: body %r" % (i + 1, resp.body[:80]))
        finally:
            conn.close()
        return "16 responses in order"
    v.check("/plaintext, 16 requests pipelined on one connection", pipelined)


def test_json(v):
    def single():
        resp = v.get("/json")
        check_common(resp, "json")
        data = parse_json(resp)
        if data != {"message": "Hello, World!"}:
            raise Fail('body is %r, expected {"message":"Hello, World!"}' % resp.body[:120])
        return "200, headers, body (%s framing)" % resp.framing
    v.check("GET /json", single)

    def keepalive():
        conn = Connection(v.host, v.port)
        try:
            for i, path in enumerate(("/json", "/plaintext", "/json")):
                conn.send(v.request_bytes(path, False))
                try:
                    resp = conn.read_response()
                except Fail as e:
                    raise Fail("request %d (%s): %s" % (i + 1, path, e))
                check_common(resp, "json" if path == "/json" else "plain")
        finally:
            conn.close()
        return "3 requests on one connection"
    v.check("keep-alive (/json, /plaintext, /json)", keepalive)


def count_test(v, path, param, compare_db):
    """The clamping cases of /queries, /cached-queries or /updates; returns the 20-row answer."""
    answers = {}
    for value, n in COUNT_CASES:
        url = path if value is None else "%s?%s=%s" % (path, param, value)

        def one(url=url, n=n, value=value):
            resp = v.get(url)
            check_common(resp, "json")
            rows = check_world_list(parse_json(resp), n, url)
            answers[value] = rows
            return "%d row%s" % (n, "" if n == 1 else "s")
        v.check("GET " + url, one)
    if "500" in answers:
        def spread():
            distinct = len({wid for wid, _ in answers["500"]})
            if distinct < 400:
                raise Fail("only %d distinct ids in 500 rows (random ids in 1..10000 give about 488)" % distinct)
            return "%d distinct ids in 500 rows" % distinct
        v.check("%s?%s=500: ids are random" % (path, param), spread)
    if compare_db:
        name = "%s?%s=20: rows match the world table" % (path, param)
        if not v.dburl:
            v.skip(name, "no DATABASE_URL")
        else:
            def match():
                resp = v.get("%s?%s=20" % (path, param))
                check_common(resp, "json")
                rows = check_world_list(parse_json(resp), 20, path)
                compare_with_table(rows, v.world_table())
                return "20 rows"
            v.check(name, match)


def statement_probe(v, path):
    """Sends 3 x PATH?queries=20 and counts the statements the database ran for them."""
    name = "%s: one SELECT per row (pg_stat_statements)" % path
    if not v.dburl:
        v.skip(name, "no DATABASE_URL")
        return

    def probe():
        before = v.statement_counts()
        if isinstance(before, str):
            raise Skip(before)
        for _ in range(3):
            resp = v.get(path + "?queries=20")
            check_common(resp, "json")
            check_world_list(parse_json(resp), 20, path)
        after = v.statement_counts()
        selects, rows, updated = (a - b for a, b in zip(after, before))
        if selects < 60:
            raise Fail("3 x queries=20 ran %d SELECTs on world (%d rows), expected 60: each row needs its own "
                       "query (no id = ANY(...) or IN (...) batching)" % (selects, rows))
        detail = "3 x queries=20: %d SELECTs on world" % selects
        if path == "/updates":
            if updated < 54:
                raise Fail("3 x queries=20 updated %d rows of world, expected about 60" % updated)
            detail += ", %d rows updated" % updated
        return detail
    v.check(name, probe)


def test_queries(v):
    statement_probe(v, "/queries")
    count_test(v, "/queries", "queries", True)


def test_db(v):
    seen = []

    def single():
        resp = v.get("/db")
        check_common(resp, "json")
        data = parse_json(resp)
        if isinstance(data, list):
            raise Fail("body is a JSON array, expected one object")
        seen.append(check_world(data, "body"))
        return "200, headers, %s" % resp.body.decode()
    if not v.check("GET /db", single):
        return

    def varies():
        for _ in range(9):
            resp = v.get("/db")
            check_common(resp, "json")
            seen.append(check_world(parse_json(resp), "body"))
        ids = {wid for wid, _ in seen}
        if len(ids) < 2:
            raise Fail("10 requests all returned id %d" % seen[0][0])
        return "%d distinct ids in 10 requests" % len(ids)
    v.check("/db: ids are random", varies)
    name = "/db: rows match the world table"
    if not v.dburl:
        v.skip(name, "no DATABASE_URL")
    else:
        def match():
            compare_with_table(seen, v.world_table())
            return "%d rows" % len(seen)
        v.check(name, match)


def test_cached(v):
    count_test(v, "/cached-queries", "count", False)


class FortuneParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.doctype, self.title, self.rows = None, None, []
        self.in_title, self.cell, self.row = False, None, None

    def handle_decl(self, decl):
        self.doctype = decl

    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self.in_title, self.title = True, ""
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = [tag, ""]

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        elif tag in ("td", "th") and self.cell is not None:
            if self.row is not None:
                self.row.append((self.cell[0], self.cell[1].strip()))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.rows.append(self.row)
            self.row = None

    def handle_data(self, data):
        if self.in_title:
            self.title += data
        if self.cell is not None:
            self.cell[1] += data


def test_fortunes(v):
    got = {}

    def single():
        resp = v.get("/fortunes")
        check_common(resp, "html")
        got["resp"] = resp
        return "200, headers (%s framing, %d bytes)" % (resp.framing, len(resp.body))
    if not v.check("GET /fortunes", single):
        return
    body = got["resp"].body

    def escaping():
        if b"<script" in body.lower():
            raise Fail("the <script> fortune is not escaped")
        if not ESCAPED_SCRIPT.search(body.decode("utf-8", "replace")):
            raise Fail("the <script> fortune is not escaped as &lt;script&gt;alert(&quot;This should not be "
                       "displayed in a browser alert box.&quot;);&lt;/script&gt;")
        return "<script> row escaped"
    v.check("/fortunes: HTML escaping", escaping)

    def utf8():
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as e:
            raise Fail("body is not valid UTF-8: %s" % e)
        if STANDARD_FORTUNES[11][1].encode("utf-8") not in body:
            raise Fail("the Japanese fortune %s is not in the body as UTF-8" % STANDARD_FORTUNES[11][1])
        return "Japanese row intact"
    v.check("/fortunes: UTF-8", utf8)

    def rows():
        if v.dburl:
            fortunes = [(int(i), m) for i, m in v.psql("SELECT id, message FROM fortune")]
        else:
            fortunes = list(STANDARD_FORTUNES)
        expected = sorted(fortunes + [EXTRA_FORTUNE], key=lambda f: f[1])
        p = FortuneParser()
        p.feed(body.decode("utf-8", "replace"))
        p.close()
        if p.doctype is None or p.doctype.lower() != "doctype html":
            raise Fail("no <!DOCTYPE html> (found %r)" % p.doctype)
        if (p.title or "").strip() != "Fortunes":
            raise Fail("title is %r, expected Fortunes" % p.title)
        if not p.rows or p.rows[0] != [("th", "id"), ("th", "message")]:
            raise Fail("the first table row is %r, expected <th>id</th><th>message</th>" % (p.rows[:1],))
        data = p.rows[1:]
        for i, row in enumerate(data):
            if [t for t, _ in row] != ["td", "td"]:
                raise Fail("table row %d is %r, expected <td>id</td><td>message</td>" % (i + 1, row))
        got_rows = [(r[0][1], r[1][1]) for r in data]
        want_rows = [(str(i), m) for i, m in expected]
        for i, (g, w) in enumerate(zip(got_rows, want_rows)):
            if g != w:
                raise Fail("row %d is %r, expected %r (all fortunes plus id 0, sorted by message)" % (i + 1, g, w))
        if len(got_rows) != len(want_rows):
            raise Fail("%d rows, expected %d" % (len(got_rows), len(want_rows)))
        return "%d rows in order (fortunes from %s)" % (len(got_rows), "the database" if v.dburl else "TFB's list")
    v.check("/fortunes: rows, extra fortune, order", rows)


def test_updates(v):
    statement_probe(v, "/updates")
    count_test(v, "/updates", "queries", False)
    name = "/updates: new numbers stored in the world table"
    if not v.dburl:
        v.skip(name, "no DATABASE_URL")
        return

    def persisted():
        before = v.world_table()
        final = {}  # id -> the numbers the last response naming it gave it
        for _ in range(5):
            resp = v.get("/updates?queries=20")
            check_common(resp, "json")
            answer = {}
            for wid, num in check_world_list(parse_json(resp), 20, "/updates"):
                answer.setdefault(wid, set()).add(num)
            final.update(answer)
        after = v.world_table()
        for wid, nums in sorted(final.items()):
            if after.get(wid) not in nums:
                raise Fail("id %d: the response said randomNumber %s, the world table has %s (before: %s)" %
                           (wid, " or ".join(map(str, sorted(nums))), after.get(wid), before.get(wid)))
        changed = {wid for wid in after if after[wid] != before.get(wid)}
        stray = sorted(changed - set(final))
        if stray:
            raise Fail("%d rows changed that no response named, e.g. id %d" % (len(stray), stray[0]))
        if len(changed) < 0.9 * len(final):
            raise Fail("only %d of the %d rows updated changed in the table" % (len(changed), len(final)))
        return "5 x queries=20: %d rows changed, all as answered" % len(changed)
    v.check(name, persisted)


RUNNERS = {"plaintext": test_plaintext, "json": test_json, "queries": test_queries, "db": test_db,
           "cached-queries": test_cached, "fortunes": test_fortunes, "updates": test_updates}
ORDER = ("plaintext", "json", "queries", "db", "cached-queries", "fortunes", "updates")


def main():
    ap = argparse.ArgumentParser(description="Checks a server against TechEmpower's benchmark rules.")
    ap.add_argument("url", metavar="BASE_URL", help="e.g. http://127.0.0.1:8080")
    ap.add_argument("--tests", default=",".join(TESTS),
                    help="comma-separated subset of: " + ",".join(TESTS) + " (default: all)")
    ap.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""),
                    help="PostgreSQL URL for the database checks (default: $DATABASE_URL; empty: skip them)")
    args = ap.parse_args()
    chosen = [t.strip() for t in args.tests.split(",") if t.strip()]
    unknown = [t for t in chosen if t not in RUNNERS]
    if unknown or not chosen:
        ap.error("unknown test(s) %s; choose from %s" % (",".join(unknown), ",".join(TESTS)))
    v = Verifier(args.url.rstrip("/"), args.database_url)
    print("tfb_verify: %s (database checks: %s)" % (v.base, "on" if v.dburl else "off, no DATABASE_URL"), flush=True)
    try:
        Connection(v.host, v.port).close()
    except Fail as e:
        print("tfb_verify: %s: FAILED before any test: %s" % (v.base, e), flush=True)
        return 1
    for t in ORDER:
        if t in chosen:
            RUNNERS[t](v)
    total = v.passed + len(v.failed)
    if v.failed:
        names = "; ".join(v.failed[:8]) + ("; and %d more" % (len(v.failed) - 8) if len(v.failed) > 8 else "")
        print("tfb_verify: %s: %d of %d checks FAILED: %s" % (v.base, len(v.failed), total, names), flush=True)
        return 1
    print("tfb_verify: %s: all %d checks passed%s" %
          (v.base, total, ", %d skipped" % v.skipped if v.skipped else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
