"""/metrics and the health endpoint: opt-in paths; counts summed over every worker
process and kept across a worker's crash; gauges that follow reality."""
import http.client
import os
import re
import signal
import subprocess
import time
import unittest

import harness


def get(port, path, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        return r.status, r.getheader("Content-Type"), r.read().decode()
    finally:
        c.close()


def samples(text):
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def worker_pids(pid):
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return sorted(int(p) for p in out)


class Metrics(harness.ServerTestCase):
    server_args = ("--workers", "2", "--threads", "1", "--metrics-path", "/metrics", "--health-path", "/health")

    def test_prometheus_text_format(self):
        status, ctype, body = get(self.port, "/metrics")
        self.assertEqual(status, 200)
        self.assertTrue(ctype.startswith("text/plain; version=0.0.4"))
        for line in body.splitlines():
            self.assertRegex(line, r'^(# (HELP|TYPE) \w+ .+|\w+(\{\w+="[^"]*"\})? -?[0-9.e+]+)$')
        for name in ("kiln_responses_total", "kiln_request_duration_seconds", "kiln_open_connections",
                     "kiln_workers", "kiln_worker_restarts_total", "kiln_uptime_seconds"):
            self.assertIn("# TYPE " + name + " ", body)

    def test_counts_are_summed_over_workers_and_survive_a_crash(self):
        before = samples(get(self.port, "/metrics")[2])
        pids = set()
        for _ in range(60):  # new connections: the kernel spreads them over both workers
            status, _, body = get(self.port, "/pid")
            self.assertEqual(status, 200)
            pids.add(body)
        get(self.port, "/no-such-route")
        after = samples(get(self.port, "/metrics")[2])
        self.assertEqual(len(pids), 2, "both workers should have answered")
        self.assertEqual(after['kiln_responses_total{class="2xx"}'] - before['kiln_responses_total{class="2xx"}'], 61)
        self.assertEqual(after['kiln_responses_total{class="4xx"}'] - before['kiln_responses_total{class="4xx"}'], 1)
        self.assertEqual(after["kiln_workers"], 2)
        # Histogram buckets are cumulative and end at the count.
        buckets = [v for k, v in after.items() if k.startswith("kiln_request_duration_seconds_bucket")]
        self.assertEqual(buckets, sorted(buckets))
        self.assertEqual(after['kiln_request_duration_seconds_bucket{le="+Inf"}'], after["kiln_request_duration_seconds_count"])

        os.kill(int(sorted(pids)[0]), signal.SIGKILL)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            m = samples(get(self.port, "/metrics")[2])
            if m["kiln_workers"] == 2 and m["kiln_worker_restarts_total"] >= before["kiln_worker_restarts_total"] + 1:
                break
            time.sleep(0.05)
        self.assertGreaterEqual(m["kiln_worker_restarts_total"], before["kiln_worker_restarts_total"] + 1)
        # The dead worker's counts were folded in, not lost.
        self.assertGreaterEqual(m['kiln_responses_total{class="2xx"}'], after['kiln_responses_total{class="2xx"}'])

    def test_open_connections_gauge_follows_clients(self):
        # Quiesce first: earlier tests' connections may still be closing. The only
        # connection left is the one asking for /metrics.
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            base = samples(get(self.port, "/metrics")[2])["kiln_open_connections"]
            if base == 1:
                break
            time.sleep(0.05)
        self.assertEqual(base, 1)
        socks = [harness.socket.create_connection(("127.0.0.1", self.port)) for _ in range(10)]
        try:
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                now = samples(get(self.port, "/metrics")[2])["kiln_open_connections"]
                if now >= base + 10:
                    break
                time.sleep(0.05)
            self.assertGreaterEqual(now, base + 10)
        finally:
            for s in socks:
                s.close()
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            now = samples(get(self.port, "/metrics")[2])["kiln_open_connections"]
            if now <= base:
                break
            time.sleep(0.05)
        self.assertLessEqual(now, base)

    def test_health(self):
        status, ctype, body = get(self.port, "/health")
        self.assertEqual(status, 200)
        self.assertEqual(ctype, "application/json")
        self.assertRegex(body, r'^\{"status":"ok","uptime_seconds":\d+\}$')


class HealthSaysWhichCheckFailsNotWhy(harness.ServerTestCase):
    server_args = ("--workers", "0", "--health-path", "/health")
    server_env = {"KILNTEST_HEALTH_FAIL": "1"}

    def test_the_reason_goes_to_the_log(self):
        # A check's exception (libpq's) names hosts, ports and users; the path
        # answers any client.
        status, _, body = get(self.port, "/health")
        self.assertEqual(status, 503)
        self.assertEqual(body, '{"status":"unavailable","failing":{"database":"failing"}}')
        self.assertTrue(self.server.wait_for_output(r"health: database failing: connection to 10\.0\.0\.5:5432",
                                                    timeout=5), self.server.output())
        for _ in range(3):  # said once, not on every probe (any client may probe)
            self.assertEqual(get(self.port, "/health")[0], 503)
        self.assertEqual(self.server.output().count("health: database failing"), 1, self.server.output())


class HealthFailsWhileTheNodeDrains(unittest.TestCase):
    """After SIGTERM, with timeouts.lame_duck_ms set, the node serves on for that long
    with /health answering 503 (a balancer's check takes it out), then stops. Both
    under a supervisor (which tells its workers through shared memory) and alone."""

    def run_node(self, workers):
        server = harness.ServerProcess(harness.BINARIES["server"],
                                       ["--workers", str(workers), "--health-path", "/health", "--lame-duck", "3000"])
        self.addCleanup(harness.check_clean_stop, server)  # no sanitizer report, exit 0
        server.start()
        self.assertEqual(get(server.port, "/health")[0], 200)
        t0 = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 2.5  # until the stop is seen (well inside the lame duck)
        while get(server.port, "/health")[0] != 503 and time.monotonic() < deadline:
            time.sleep(0.05)
        statuses = set()
        for _ in range(10):  # new connections: every worker answers the same
            status, ctype, body = get(server.port, "/health")
            statuses.add(status)
            self.assertEqual(body, '{"status":"draining"}')
        self.assertEqual(statuses, {503})
        self.assertEqual(get(server.port, "/plaintext")[0], 200)  # still serving
        self.assertEqual(server.proc.wait(timeout=15), 0)
        elapsed = time.monotonic() - t0
        self.assertGreaterEqual(elapsed, 2.9)
        self.assertLess(elapsed, 10)

    def test_under_a_supervisor(self):
        self.run_node(2)

    def test_alone(self):
        self.run_node(0)


class MetricsAreOptIn(harness.ServerTestCase):
    server_args = ("--workers", "1",)

    def test_paths_are_ordinary_routes_when_not_configured(self):
        self.assertEqual(get(self.port, "/metrics")[0], 404)
        self.assertEqual(get(self.port, "/health")[0], 404)


if __name__ == "__main__":
    harness.main()
