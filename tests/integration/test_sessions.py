"""Sessions and cookies, end to end, on the real server with two worker processes.

A session created through one worker is found by the other (the store is shared
memory the supervisor owns), after a worker is killed with SIGKILL, and after a
graceful reload (SIGHUP). Also: the cookie's attributes, idle expiry, regenerate
and destroy, unknown/malformed/forged cookies start a new session rather than
failing, a handler that throws keeps its changes out of the store, an oversized
session is a 500 and not a crash, and signed cookies reject tampering."""

import os
import re
import signal
import tempfile
import time
import unittest

import harness
from harness import build_request

WORKERS = 2
ID = re.compile(r"^[0-9a-f]{32}$")


def fetch(port, target, cookie=None, timeout=3.0):
    headers = [("Cookie", cookie)] if cookie else []
    with harness.RawConnection(port, timeout=timeout) as c:
        c.send(build_request("GET", target, headers))
        return c.read_response(timeout=timeout)


def session_cookie(r):
    """The kiln_sid value a response sets, or None."""
    for v in r.header_all("set-cookie"):
        if v.startswith("kiln_sid="):
            return v.split(";")[0][len("kiln_sid="):]
    return None


def visit(port, sid=None, note=None):
    """GET /session/visit; returns (id, visits, pid, note, response)."""
    target = "/session/visit" + ("?note=" + note if note else "")
    r = fetch(port, target, "kiln_sid=" + sid if sid else None)
    assert r.status == 200, r
    sid_text, n, pid, note_text = r.body.decode().split(" ")
    return sid_text, int(n), int(pid), note_text, r


class SessionCase(unittest.TestCase):
    """A server per test (some tests kill workers or reload); stopped cleanly."""

    config = ""

    def setUp(self):
        args = ["--workers", str(WORKERS)]
        if self.config:
            f = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
            f.write(self.config)
            f.close()
            self.addCleanup(os.unlink, f.name)
            args += ["--config", f.name]
        self.server = harness.ServerProcess(harness.BINARIES["server"], args, threads=1)
        self.addCleanup(harness.check_clean_stop, self.server)
        self.server.start()
        self.port = self.server.port

    def on_each_worker(self, sid, want=WORKERS, tries=200):
        """Visits with `sid` on fresh connections until every worker has answered
        (the kernel spreads connections over the workers' sockets). Returns the
        visits in order: [(pid, visits)]."""
        seen, out = set(), []
        for _ in range(tries):
            got, n, pid, _note, _r = visit(self.port, sid)
            self.assertEqual(got, sid, "session lost on worker %d" % pid)
            out.append((pid, n))
            seen.add(pid)
            if len(seen) >= want:
                return out
        self.fail("only workers %r answered in %d connections" % (seen, tries))

    def workers(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            kids = self.server.children()
            if len(kids) == WORKERS:
                return set(kids)
            time.sleep(0.05)
        self.fail("expected %d workers, have %r" % (WORKERS, self.server.children()))


class SharedAcrossWorkers(SessionCase):
    def test_new_session_sets_a_safe_cookie(self):
        sid, n, _pid, _note, r = visit(self.port)
        self.assertRegex(sid, ID)
        self.assertEqual(n, 1)
        cookie = [v for v in r.header_all("set-cookie") if v.startswith("kiln_sid=")]
        self.assertEqual(len(cookie), 1, r.header_all("set-cookie"))
        attrs = [a.strip().lower() for a in cookie[0].split(";")[1:]]
        self.assertIn("path=/", attrs)
        self.assertIn("httponly", attrs)
        self.assertIn("samesite=lax", attrs)
        self.assertNotIn("secure", attrs)  # plain HTTP: a Secure cookie would never come back
        self.assertEqual(session_cookie(r), sid)

    def test_found_again_on_every_worker_with_its_data(self):
        sid, _n, _pid, _note, _r = visit(self.port, note="kept")
        visits = self.on_each_worker(sid)
        # Every visit, whichever worker served it, saw the count the previous one left.
        self.assertEqual([n for _pid, n in visits], list(range(2, 2 + len(visits))))
        _sid, _n, _pid, note, r = visit(self.port, sid)
        self.assertEqual(note, "kept")
        self.assertIsNone(session_cookie(r), "a known session must not get a new cookie")

    def test_unknown_malformed_and_forged_ids_start_new_sessions(self):
        for bad in ["0" * 32, "zz" * 16, "abc", "", "A" * 32, "0" * 31 + "g", "1" * 64]:
            r = fetch(self.port, "/session/visit", "kiln_sid=" + bad)
            self.assertEqual(r.status, 200, "cookie %r: %r" % (bad, r))
            sid, n = r.body.decode().split(" ")[:2]
            self.assertNotEqual(sid, bad)  # a client never chooses its id (no fixation)
            self.assertRegex(sid, ID)
            self.assertEqual(n, "1")
            self.assertEqual(session_cookie(r), sid)

    def test_reading_a_flash_starts_no_session(self):
        r = fetch(self.port, "/session/peek")
        self.assertEqual((r.status, r.body), (200, b"[]"))
        self.assertEqual(r.header_all("set-cookie"), [])
        r = fetch(self.port, "/session/peek", "kiln_sid=" + "0" * 32)  # unknown id: still none
        self.assertEqual(r.header_all("set-cookie"), [])

    def test_ids_are_distinct(self):
        ids = {visit(self.port)[0] for _ in range(50)}
        self.assertEqual(len(ids), 50)


class SurvivesCrashAndReload(SessionCase):
    def test_survives_kill_9_of_a_worker(self):
        sid, _n, pid, _note, _r = visit(self.port)
        self.assertIn(pid, self.workers())
        os.kill(pid, signal.SIGKILL)  # a child of the server we started
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and pid in self.server.children():
            time.sleep(0.02)
        visits = self.on_each_worker(sid)
        self.assertTrue(all(p != pid for p, _ in visits))
        self.assertEqual(visits[0][1], 2)

    def test_survives_graceful_reload(self):
        sid, _n, _pid, _note, _r = visit(self.port, note="before-reload")
        old = self.workers()
        self.server.proc.send_signal(signal.SIGHUP)
        self.assertTrue(self.server.wait_for_output(r"reload complete", timeout=10), self.server.output())
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (set(self.server.children()) & old):
            time.sleep(0.05)
        self.assertFalse(set(self.server.children()) & old, "old workers still running")
        _sid, n, pid, note, _r = visit(self.port, sid)
        self.assertNotIn(pid, old)
        self.assertEqual((n, note), (2, "before-reload"))


class Lifecycle(SessionCase):
    config = "[session]\nidle_timeout_s = 1\n"

    def test_idle_session_expires(self):
        sid, _n, _pid, _note, _r = visit(self.port)
        self.assertEqual(visit(self.port, sid)[0], sid)  # in use: kept
        time.sleep(2.2)
        new, n, _pid, _note, r = visit(self.port, sid)
        self.assertNotEqual(new, sid)
        self.assertEqual(n, 1)
        self.assertEqual(session_cookie(r), new)

    def test_regenerate_moves_the_data_and_kills_the_old_id(self):
        sid, _n, _pid, _note, _r = visit(self.port, note="cart")
        r = fetch(self.port, "/session/login", "kiln_sid=" + sid)
        new = r.body.decode()
        self.assertRegex(new, ID)
        self.assertNotEqual(new, sid)
        self.assertEqual(session_cookie(r), new)
        _s, n, _pid, note, _r = visit(self.port, new)
        self.assertEqual((n, note), (2, "cart"))
        self.assertNotEqual(visit(self.port, sid)[0], sid, "the pre-login id still works")

    def test_destroy_expires_the_cookie_and_the_session(self):
        sid, _n, _pid, _note, _r = visit(self.port)
        r = fetch(self.port, "/session/logout", "kiln_sid=" + sid)
        self.assertEqual(r.status, 200)
        cleared = [v for v in r.header_all("set-cookie") if v.startswith("kiln_sid=")]
        self.assertEqual(len(cleared), 1)
        self.assertIn("max-age=0", cleared[0].lower())
        self.assertNotEqual(visit(self.port, sid)[0], sid)

    def test_a_failing_handler_keeps_its_changes_out(self):
        sid, _n, _pid, _note, _r = visit(self.port)
        r = fetch(self.port, "/session/fail", "kiln_sid=" + sid)
        self.assertEqual(r.status, 500)
        _s, n, _pid, _note, _r = visit(self.port, sid)
        self.assertEqual(n, 2)  # not 1001

    def test_oversized_session_is_a_500_and_the_server_goes_on(self):
        r = fetch(self.port, "/session/oversize")
        self.assertEqual(r.status, 500)
        self.assertIn("session.max_bytes", self.server.output())
        self.assertEqual(visit(self.port)[1], 1)


class StoreFull(SessionCase):
    # Security finding 2: 56 slots (the review's KILN_SESSION_MEMORY=65536). Every new
    # session was stored, even empty, nothing was evicted and a full store answered
    # 503, so anyone could lock out new visitors and make a log-in lose its session.
    config = '[session]\nmemory = 65536\n[metrics]\npath = "/metrics"\n'

    def evictions(self):
        text = fetch(self.port, "/metrics").body.decode()
        return int(re.search(r"^kiln_session_evictions_total (\d+)$", text, re.M).group(1))

    def test_requests_that_store_nothing_cost_no_slot_and_get_no_cookie(self):
        for _ in range(200):
            r = fetch(self.port, "/session/read")
            self.assertEqual((r.status, r.body), (200, b"-"))
            self.assertIsNone(session_cookie(r))
        self.assertEqual(self.evictions(), 0)

    def test_a_flood_of_new_visitors_costs_a_returning_user_nothing(self):
        sid, _n, _pid, _note, _r = visit(self.port, note="cart")
        self.assertEqual(visit(self.port, sid)[1], 2)  # came back: a returning user
        statuses = [fetch(self.port, "/session/visit").status for _ in range(300)]  # 5x the store, all stored
        self.assertEqual(set(statuses), {200})
        self.assertGreater(self.evictions(), 0)
        self.assertTrue(self.server.wait_for_output(r"session store full: evicting.*session\.memory", timeout=3),
                        self.server.output())
        same, n, _pid, note, _r = visit(self.port, sid)
        self.assertEqual((same, n, note), (sid, 3, "cart"))
        # Logging in while the store is full moves the session; nothing is lost.
        new = fetch(self.port, "/session/login", "kiln_sid=" + sid).body.decode()
        for _ in range(300):
            fetch(self.port, "/session/visit")
        self.assertEqual(visit(self.port, new)[1:4:2], (4, "cart"))
        self.assertNotEqual(visit(self.port, sid)[0], sid, "the pre-login id still works")


class DoubleLogIn(SessionCase):
    # Handlers on a pool (hybrid), so two log-ins on one session overlap.
    config = 'server.mpm = "hybrid"\n'

    def test_two_log_ins_at_once_on_one_session_each_get_a_session_that_works(self):
        # A double-clicked log-in: both requests load the session, both renew its id.
        # The first moves it; the second finds the old id gone. Each response names a
        # new id, and the browser keeps whichever came last: both must exist (before,
        # the second was never stored, and its user was logged out at the next page).
        import threading
        sid, _n, _pid, _note, _r = visit(self.port, note="cart")
        got = []
        threads = [threading.Thread(target=lambda: got.append(fetch(self.port, "/session/login?ms=400",
                                                                    "kiln_sid=" + sid)))
                   for _ in range(2)]
        for t in threads:
            t.start()
            time.sleep(0.05)
        for t in threads:
            t.join(timeout=10)
        self.assertEqual([r.status for r in got], [200, 200])
        ids = [r.body.decode() for r in got]
        self.assertEqual(len(set(ids) | {sid}), 3, ids)
        for new in ids:
            again, n, _pid, note, _r = visit(self.port, new)
            self.assertEqual((again, note), (new, "cart"), "the session named by a log-in's answer is missing")
        self.assertNotEqual(visit(self.port, sid)[0], sid, "the pre-login id still works")


class LoggedOutStaysLoggedOut(SessionCase):
    # Security finding 8: a request that loaded the session before another request's
    # destroy() and saved after it brought the logged-out session back. Handlers on a
    # pool (hybrid), so the two overlap whichever loop each connection lands on.
    config = 'server.mpm = "hybrid"\n'

    def test_a_save_after_a_concurrent_destroy_does_not_resurrect_the_session(self):
        import threading
        sid, _n, _pid, _note, _r = visit(self.port, note="secret")
        slow = []
        t = threading.Thread(target=lambda: slow.append(fetch(self.port, "/session/slow-visit?ms=600", "kiln_sid=" + sid)))
        t.start()
        time.sleep(0.2)
        self.assertEqual(fetch(self.port, "/session/logout", "kiln_sid=" + sid).status, 200)
        t.join(timeout=10)
        self.assertEqual(slow[0].status, 200)
        again, n, _pid, note, _r = visit(self.port, sid)
        self.assertNotEqual(again, sid)
        self.assertEqual((n, note), (1, "-"))


class WrittenAfterDestroy(SessionCase):
    def test_what_follows_a_destroy_starts_a_new_session_and_the_old_one_stays_gone(self):
        # A flash message set after destroy() at log-out: it reaches the next page, in a
        # new session with a new id; nothing of the old session comes with it, and the
        # old id names nothing.
        sid, _n, _pid, _note, _r = visit(self.port, note="secret")
        visit(self.port, sid)
        r = fetch(self.port, "/session/logout?note=bye", "kiln_sid=" + sid)
        self.assertEqual(r.status, 200)
        new = [c.split(";")[0].split("=", 1)[1] for c in r.header_all("set-cookie") if c.startswith("kiln_sid=")]
        self.assertEqual(len(new), 1, r.header_all("set-cookie"))
        self.assertNotIn(new[0], ("", sid))
        got, n, _pid, note, _r = visit(self.port, new[0])
        self.assertEqual((got, n, note), (new[0], 1, "bye"))
        again, n, _pid, note, _r = visit(self.port, sid)
        self.assertNotEqual(again, sid)
        self.assertEqual((n, note), (1, "-"))


def cookie_attrs(r, name="kiln_sid"):
    """The lower-cased attributes of the Set-Cookie for `name`, or None."""
    for v in r.header_all("set-cookie"):
        if v.startswith(name + "="):
            return [a.strip().lower() for a in v.split(";")[1:]]
    return None


def get_forwarded(port, target, proto):
    with harness.RawConnection(port) as c:
        c.send(build_request("GET", target, [("X-Forwarded-Proto", proto)] if proto else []))
        return c.read_response()


# Security finding 3: the session cookie could never be Secure, and __Host- names
# were refused.
class SecureCookie(SessionCase):
    def test_plain_http_gets_no_secure_and_a_forwarded_claim_from_anyone_is_ignored(self):
        self.assertNotIn("secure", cookie_attrs(fetch(self.port, "/session/visit")))
        self.assertNotIn("secure", cookie_attrs(get_forwarded(self.port, "/session/visit", "https")))
        self.assertEqual(get_forwarded(self.port, "/secure", "https").body, b"http")


class SecureCookieBehindTrustedProxy(SessionCase):
    config = '[proxy]\ntrusted = ["127.0.0.0/8"]\n'

    def test_https_at_the_proxy_makes_the_cookie_secure(self):
        self.assertEqual(get_forwarded(self.port, "/secure", "https").body, b"https")
        # The nearest proxy's word (the last item): one in front of it was there when the
        # request reached that proxy, perhaps the client's own.
        self.assertEqual(get_forwarded(self.port, "/secure", "HTTPS, http").body, b"http")
        self.assertEqual(get_forwarded(self.port, "/secure", "http, HTTPS").body, b"https")
        self.assertEqual(get_forwarded(self.port, "/secure", "http").body, b"http")
        self.assertIn("secure", cookie_attrs(get_forwarded(self.port, "/session/visit", "https")))
        self.assertNotIn("secure", cookie_attrs(get_forwarded(self.port, "/session/visit", None)))


class SecureCookieAlways(SessionCase):
    config = '[session]\nsecure = "always"\ncookie = "__Host-sid"\n'

    def test_host_prefixed_name_is_accepted_and_always_secure(self):
        attrs = cookie_attrs(fetch(self.port, "/session/visit"), "__Host-sid")
        self.assertIn("secure", attrs)
        self.assertIn("path=/", attrs)
        self.assertFalse([a for a in attrs if a.startswith("domain")])

    def test_a_prefixed_name_with_secure_never_is_refused_at_start(self):
        import subprocess
        for name in ("__Host-sid", "__Secure-sid"):
            env = dict(os.environ, KILN_SESSION_COOKIE=name, KILN_SESSION_SECURE="never")
            p = subprocess.run([harness.BINARIES["server"], "--port", str(harness.free_port())], env=env,
                               capture_output=True, text=True, timeout=10)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("session.cookie '%s' needs session.secure = \"always\"" % name, p.stderr)


class SignedCookies(SessionCase):
    config = 'secret = "0123456789abcdef0123456789abcdef"\n'

    def test_signed_cookie_round_trip_and_tamper(self):
        r = fetch(self.port, "/cookie/set?v=alice")
        cookies = {v.split("=", 1)[0]: v.split(";")[0].split("=", 1)[1] for v in r.header_all("set-cookie")}
        signed, plain = cookies["signed"], cookies["plain"]
        self.assertTrue(signed.startswith("alice."), signed)
        plain_attrs = [v for v in r.header_all("set-cookie") if v.startswith("plain=")][0].lower()
        self.assertIn("max-age=60", plain_attrs)
        self.assertIn("samesite=strict", plain_attrs)
        ok = fetch(self.port, "/cookie/get", "signed=%s; plain=%s" % (signed, plain))
        self.assertEqual(ok.body, b"alice alice")
        # Any change to the value or the signature, or moving it to another name, fails.
        for forged in [signed.replace("alice", "admin"), signed[:-1] + ("A" if signed[-1] != "A" else "B"),
                       "alice", "alice.", ""]:
            r = fetch(self.port, "/cookie/get", "signed=%s" % forged)
            self.assertEqual(r.body, b"(invalid) (none)", forged)
        # Both workers share the key (the supervisor passes it on): valid everywhere.
        for _ in range(20):
            self.assertEqual(fetch(self.port, "/cookie/get", "signed=" + signed).body, b"alice (none)")


class CsrfAndFlash(SessionCase):
    def post(self, target, body, cookie, extra=()):
        headers = [("Cookie", cookie), ("Content-Type", "application/x-www-form-urlencoded")] + list(extra)
        with harness.RawConnection(self.port) as c:
            c.send(build_request("POST", target, headers, body))
            return c.read_response()

    def test_post_needs_the_sessions_token(self):
        r = fetch(self.port, "/guarded/form")
        sid = session_cookie(r)
        token, flash = r.body.decode().split(" ")
        # Masked (BREACH): a one-time pad, then the session's token under it.
        self.assertRegex(token, r"^[0-9a-f]{128}$")
        self.assertEqual(flash, "")
        cookie = "kiln_sid=" + sid
        self.assertEqual(self.post("/guarded/submit", b"title=x", cookie).status, 403)
        self.assertEqual(self.post("/guarded/submit", b"title=x&_csrf=" + b"0" * 64, cookie).status, 403)
        self.assertEqual(self.post("/guarded/submit", b"title=x&_csrf=" + b"0" * 128, cookie).status, 403)
        forged = token[:64] + "%064x" % (int(token[64:], 16) ^ 1)  # one bit of the token changed
        self.assertEqual(self.post("/guarded/submit", b"title=x&_csrf=" + forged.encode(), cookie).status, 403)
        self.assertEqual(self.post("/guarded/submit", b"title=x&_csrf=" + token.encode(), "kiln_sid=" + "f" * 32).status, 403)
        ok = self.post("/guarded/submit", b"title=first&_csrf=" + token.encode(), cookie)
        self.assertEqual((ok.status, ok.header("location")), (303, "/guarded/form"))
        by_header = self.post("/guarded/submit", b"title=second", cookie, [("X-CSRF-Token", token)])
        self.assertEqual(by_header.status, 303)
        # The flash shows once (the last one set), then is gone. The token stays the
        # session's, under a new pad on every page: the first one still works.
        again, shown = fetch(self.port, "/guarded/form", cookie).body.decode().split(" ", 1)
        self.assertEqual(shown, "saved second")
        self.assertNotEqual(again, token)
        self.assertEqual(fetch(self.port, "/guarded/form", cookie).body.decode().split(" ", 1)[1], "")
        self.assertEqual(self.post("/guarded/submit", b"title=third&_csrf=" + again.encode(), cookie).status, 303)
        self.assertEqual(self.post("/guarded/submit", b"title=fourth&_csrf=" + token.encode(), cookie).status, 303)

    def test_logging_in_renews_the_token(self):
        # Security finding 7: the token survived regenerate(), so one seen before a
        # log-in (or planted with a fixed session) kept working after it.
        r = fetch(self.port, "/guarded/form")
        sid, token = session_cookie(r), r.body.decode().split(" ")[0]
        new = fetch(self.port, "/session/login", "kiln_sid=" + sid).body.decode()
        fresh = fetch(self.port, "/guarded/form", "kiln_sid=" + new).body.decode().split(" ")[0]
        self.assertRegex(fresh, r"^[0-9a-f]{128}$")
        self.assertNotEqual(fresh, token)
        self.assertEqual(self.post("/guarded/submit", b"title=x&_csrf=" + token.encode(), "kiln_sid=" + new).status, 403)
        self.assertEqual(self.post("/guarded/submit", b"title=x&_csrf=" + fresh.encode(), "kiln_sid=" + new).status, 303)

    def test_two_first_pages_at_once_give_forms_that_both_work(self):
        # Right after a log-in (the session has no token yet) two tabs load a form at
        # once: each request found no token and made one, and the later-stored refused
        # the other tab's form (403). The token is now the session's own, made from its
        # id, so both pages carry it. Each round overlaps the two requests (a pause
        # after the session is read; two workers).
        for round_ in range(6):
            sid = session_cookie(fetch(self.port, "/session/visit"))
            cookie = "kiln_sid=" + fetch(self.port, "/session/login", "kiln_sid=" + sid).body.decode()
            conns = [harness.RawConnection(self.port) for _ in range(2)]
            try:
                for c in conns:
                    c.send(build_request("GET", "/guarded/form?ms=300", [("Cookie", cookie)]))
                tokens = [c.read_response(timeout=5).body.decode().split(" ")[0] for c in conns]
            finally:
                for c in conns:
                    c.close()
            for i, token in enumerate(tokens):
                r = self.post("/guarded/submit", b"title=tab%d&_csrf=" % i + token.encode(), cookie)
                self.assertEqual(r.status, 303, "round %d, tab %d: %r" % (round_, i, r))


if __name__ == "__main__":
    harness.main()
