"""Sessions in Redis (session.store = "redis"), end to end, on the real server.

Run through redis_server.py (KILN_TEST_REDIS_URL, KILN_TEST_REDIS_CTL). Besides the
shared-memory suite run again on Redis (tests.cmake), this checks what only a shared
store can do or must not do: a session written by one node is read by another and
destroyed for both; its key carries the idle timeout as its TTL; a forged or oversized
cookie never reaches Redis as a key; while Redis is down a request that uses its
session gets 503 (never a fresh session that logs its user out) and a request that
does not is served; when Redis is back, the same session goes on with its data."""

import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from redis_resp import Redis  # noqa: E402
from test_sessions import fetch, session_cookie  # noqa: E402
from test_sessions import visit as sessions_visit  # noqa: E402

URL = os.environ.get("KILN_TEST_REDIS_URL", "")
CTL = os.environ.get("KILN_TEST_REDIS_CTL", "")


def visit(port, sid=None, note=None):
    """test_sessions.visit without the worker's pid: (id, visits, note)."""
    sid_text, n, _pid, note_text, _r = sessions_visit(port, sid, note)
    return sid_text, n, note_text


class RedisSessions(unittest.TestCase):
    runs = 0

    def setUp(self):
        RedisSessions.runs += 1
        if not URL or not CTL:
            self.fail("KILN_TEST_REDIS_URL / KILN_TEST_REDIS_CTL not set: run through tests/redis/redis_server.py")
        self.redis = Redis(URL)
        self.addCleanup(self.redis.close)
        env = {"KILN_SESSION_STORE": "redis", "KILN_REDIS_URL": URL, "KILN_REDIS_PREFIX": "t%d-%d:" % (os.getpid(), self.runs)}
        self.prefix = env["KILN_REDIS_PREFIX"]
        self.nodes = []
        for _ in range(2):  # two nodes: separate servers, nothing shared but Redis
            node = harness.ServerProcess(harness.BINARIES["server"], ["--workers", "2"], threads=1, env=env)
            self.addCleanup(harness.check_clean_stop, node)
            node.start()
            self.nodes.append(node)

    def key(self, sid):
        return self.prefix + "session:" + sid

    def test_without_a_shared_secret_a_node_warns_and_the_other_refuses_its_signed_cookies(self):
        for node in self.nodes:
            self.assertTrue(node.wait_for_output(r"warn.*other nodes will refuse this node's", timeout=3),
                            node.output())
        r = fetch(self.nodes[0].port, "/cookie/set?v=kept")
        cookie = [c.split(";")[0] for c in r.header_all("Set-Cookie") if c.startswith("signed=")][0]
        self.assertTrue(fetch(self.nodes[0].port, "/cookie/get", cookie).body.startswith(b"kept "))
        self.assertTrue(fetch(self.nodes[1].port, "/cookie/get", cookie).body.startswith(b"(invalid) "))

    def test_a_session_made_on_one_node_is_read_and_destroyed_on_the_other(self):
        a, b = self.nodes[0].port, self.nodes[1].port
        sid, n, _ = visit(a, note="cart")
        self.assertEqual(n, 1)
        self.assertEqual(visit(b, sid), (sid, 2, "cart"))
        self.assertEqual(visit(a, sid), (sid, 3, "cart"))
        ttl = self.redis.command("TTL", self.key(sid))
        self.assertGreater(ttl, 1700)  # session.idle_timeout_s, 1800 by default
        self.assertLessEqual(ttl, 1800)
        # Log-in on one node: the new id works on the other, the old one nowhere.
        r = fetch(b, "/session/login", "kiln_sid=" + sid)
        new = r.body.decode()
        self.assertNotEqual(new, sid)
        self.assertEqual(visit(a, new), (new, 4, "cart"))
        self.assertEqual(self.redis.command("EXISTS", self.key(sid)), 0)
        other, n, _ = visit(a, sid)
        self.assertNotEqual(other, sid)
        self.assertEqual(n, 1)
        # Log-out on one node: gone for the other.
        self.assertEqual(fetch(a, "/session/logout", "kiln_sid=" + new).status, 200)
        self.assertEqual(self.redis.command("EXISTS", self.key(new)), 0)
        fresh, n, _ = visit(b, new)
        self.assertNotEqual(fresh, new)
        self.assertEqual(n, 1)
        # A flash message after destroy() at log-out: a new session holds it, on either
        # node; the destroyed one stays gone.
        r = fetch(b, "/session/logout?note=bye", "kiln_sid=" + fresh)
        flash = [c.split(";")[0].split("=", 1)[1] for c in r.header_all("set-cookie") if c.startswith("kiln_sid=")]
        self.assertEqual(len(flash), 1, r.header_all("set-cookie"))
        self.assertNotIn(flash[0], ("", fresh))
        self.assertEqual(self.redis.command("EXISTS", self.key(fresh)), 0)
        self.assertEqual(visit(a, flash[0]), (flash[0], 1, "bye"))

    def test_forged_and_oversized_cookies_never_reach_redis(self):
        before = self.redis.calls("getex")
        port = self.nodes[0].port
        for bad in ["../../etc/passwd", "*", "a" * 31, "A" * 32, "g" * 32, "0" * 5000, "kiln:session:x", "\\r\\nFLUSHALL"]:
            r = fetch(port, "/session/read", "kiln_sid=" + bad)
            self.assertEqual(r.status, 200, bad)
        self.assertEqual(self.redis.calls("getex"), before)
        good = "0" * 32  # well formed, unknown: looked up, not found
        self.assertEqual(fetch(port, "/session/read", "kiln_sid=" + good).status, 200)
        self.assertEqual(self.redis.calls("getex"), before + 1)
        keys = self.redis.command("KEYS", self.prefix + "*")
        self.assertEqual(keys, [])

    def test_a_failing_handler_and_an_oversized_session_keep_redis_unchanged(self):
        port = self.nodes[0].port
        sid, _, _ = visit(port)
        self.assertEqual(fetch(port, "/session/fail", "kiln_sid=" + sid).status, 500)
        self.assertEqual(fetch(port, "/session/oversize", "kiln_sid=" + sid).status, 500)
        self.assertEqual(visit(port, sid)[1], 2)

    def test_redis_down_is_503_never_a_logout_and_the_session_comes_back(self):
        a, b = self.nodes[0].port, self.nodes[1].port
        sid, _, _ = visit(a, note="kept")
        self.assertEqual(subprocess.call(CTL + " stop", shell=True), 0)
        try:
            for port in (a, b):
                r = fetch(port, "/session/visit", "kiln_sid=" + sid)
                self.assertEqual(r.status, 503, r.body)
                self.assertIsNone(session_cookie(r), "a new session was handed out while Redis was down")
                r = fetch(port, "/session/visit")  # a new visitor: its session cannot be stored either
                self.assertEqual(r.status, 503, r.body)
                self.assertIsNone(session_cookie(r))
                r = fetch(port, "/plaintext")  # no session used: served
                self.assertEqual(r.status, 200)
        finally:
            self.assertEqual(subprocess.call(CTL + " start", shell=True), 0)
        self.redis.close()
        self.redis = Redis(URL)
        deadline = time.monotonic() + 10
        while True:  # each worker reconnects by itself, with back-off
            r = fetch(a, "/session/visit", "kiln_sid=" + sid)
            if r.status == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual(r.status, 200)
        got, n, note = r.body.decode().split(" ")[0], int(r.body.decode().split(" ")[1]), r.body.decode().split(" ")[3]
        self.assertEqual((got, note), (sid, "kept"))
        self.assertEqual(n, 2)  # the visits refused meanwhile changed nothing


if __name__ == "__main__":
    harness.main()
