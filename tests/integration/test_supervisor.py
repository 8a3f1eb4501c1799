"""The supervisor, end to end: a worker killed under load is replaced within a
second; SIGHUP swaps every worker under 50 busy keep-alive connections without one
failed request; SIGTERM lets an in-flight request finish and leaves no process
behind; a crash loop is slowed by a growing back-off and then recovers, and while a
slot waits for its next worker new connections go to the others; --workers 0
serves from a single process.

Each test (but the last class) starts its own server and stops it with the same
check as every class in the harness: exit status 0 after SIGTERM, no sanitizer
report. Worker PIDs are only ever signalled after reading them as children of the
server we started."""

import concurrent.futures
import os
import re
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

import harness
from harness import build_request

# /crash aborts a worker: no core files from the test (the workers inherit this).
resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))

WORKERS = 2
READY_TIMEOUT = 10.0   # seconds until every worker has answered /pid
REPLACE_WITHIN = 1.0 * harness.TIME_SCALE  # seconds from a kill until the replacement answers
DRAIN_WITHIN = 10.0    # seconds for old workers to exit after a reload (the default drain)


def accepted(conn):
    """One keep-alive exchange on `conn` first: a worker has accepted it, so a request
    sent next is that worker's to finish when a signal comes (one still in the listen
    queue at a stop is not any worker's, and the stop resets it)."""
    conn.send(build_request("GET", "/plaintext"))
    r = conn.read_response(timeout=5)
    assert r.status == 200, r
    return conn


def fetch(port, target, timeout=3.0):
    """One GET on a fresh connection. Returns (response or None, error text or None)."""
    try:
        with harness.RawConnection(port, timeout=timeout) as c:
            c.send(build_request("GET", target))
            return c.read_response(timeout=timeout), None
    except (AssertionError, OSError) as e:
        return None, "%s: %s" % (type(e).__name__, e)


class SupervisorCase(unittest.TestCase):
    """Per-test server; cleanup stops it (exit 0, no sanitizer report) and then makes
    sure no worker we saw outlived it."""

    def start_server(self, *args, threads=2, env=None):
        self.server = harness.ServerProcess(harness.BINARIES["server"], args, threads=threads, env=env)
        self.seen_workers = set()
        self.addCleanup(self._stop_and_check)
        self.server.start()
        self.port = self.server.port
        return self.server

    def _stop_and_check(self):
        if self.server.alive():
            self.seen_workers.update(self.server.children())
        try:
            harness.check_clean_stop(self.server)
        finally:
            left = self._leftover(self.seen_workers)
            for pid in left:  # ours: a child of our server, with our port on its command line
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            self.assertEqual(left, [], "workers still running after the supervisor stopped:\n"
                             + self.server.output())
        finally:
            if self.server.log is not None:
                self.server.log.close()

    def _leftover(self, pids):
        """Those of `pids` still running the server binary on our port."""
        left = []
        for pid in sorted(pids):
            if not harness.pid_running(pid):
                continue
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if str(self.port).encode() in argv:
                left.append(pid)
        return left

    def workers(self):
        pids = self.server.children()
        self.seen_workers.update(pids)
        return set(pids)

    def wait_ready(self, count):
        """Waits until `count` workers run and each has answered /pid on a fresh
        connection (connections spread over the workers' SO_REUSEPORT sockets)."""
        deadline = time.monotonic() + READY_TIMEOUT
        answered = set()
        while time.monotonic() < deadline:
            pids = self.workers()
            r, _ = fetch(self.port, "/pid")
            if r is not None and r.status == 200:
                answered.add(int(r.body))
            if len(pids) == count and pids <= answered:
                return pids
            time.sleep(0.01)
        self.fail("workers not ready within %.0f s: children %r, answered %r\n%s"
                  % (READY_TIMEOUT, sorted(self.workers()), sorted(answered), self.server.output()))

    def wait_gone(self, pids, timeout):
        """Waits until none of `pids` runs. Returns the seconds it took, or None."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if not any(harness.pid_running(p) for p in pids):
                return time.monotonic() - start
            time.sleep(0.02)
        return None


# --------------------------------------------------------------------------------------
# Load generators

    def refused_reload(self, config, reloaded):
        """Serves `config` (kiln.toml's text) with one worker, reloads with `reloaded`:
        the reload must fail and the old worker serve on. Returns the server's output."""
        cfg = os.path.join(tempfile.mkdtemp(prefix="kiln-reload-"), "kiln.toml")
        self.addCleanup(shutil.rmtree, os.path.dirname(cfg), True)
        with open(cfg, "w") as f:
            f.write(config)
        self.start_server("--workers", "1", "--config", cfg)
        old = self.wait_ready(1)
        with open(cfg, "w") as f:
            f.write(reloaded)
        self.server.proc.send_signal(signal.SIGHUP)
        failed = self.server.wait_for_output(r"reload failed: new worker \d+", timeout=10)
        out = self.server.output()
        self.assertTrue(failed, out)
        self.assertEqual(self.workers(), old)
        r, err = fetch(self.port, "/plaintext")
        self.assertIsNone(err)
        self.assertEqual(r.status, 200)
        return out


class RequestStream:
    """One thread sending GET /pid back to back, each on a new connection, and
    recording (start, end, pid or None, error or None) for each."""

    def __init__(self, port, pause=0.003, max_seconds=30.0):
        self.port = port
        self.pause = pause
        self.max_seconds = max_seconds
        self.records = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self):
        end = time.monotonic() + self.max_seconds
        while not self._stop.is_set() and time.monotonic() < end:
            t0 = time.monotonic()
            r, err = fetch(self.port, "/pid")
            t1 = time.monotonic()
            if r is not None and r.status != 200:
                r, err = None, "status %d" % r.status
            self.records.append((t0, t1, int(r.body) if r is not None else None, err))
            time.sleep(self.pause)


class KeepAliveLoad:
    """`n` keep-alive connections, each sending GET `target` again as soon as the
    previous response is in, driven by one selector thread. A response that says
    `Connection: close` makes that connection reconnect (not a failure); a
    connection error, a close without a response, a non-2xx or a request that waits
    longer than `request_timeout` is a failure. Records the time of every response."""

    def __init__(self, port, n=50, target="/plaintext", request_timeout=5.0, max_seconds=60.0):
        self.port = port
        self.n = n
        self.request = build_request("GET", target)
        self.request_timeout = request_timeout
        self.max_seconds = max_seconds
        self.done_times = []       # monotonic time of every 2xx response
        self.failures = []         # (time, connection index, reason)
        self.reconnects = 0        # after a Connection: close
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._sel = selectors.DefaultSelector()
        self._conns = [None] * n   # index -> dict(sock, buf, sent_at)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=15)

    def _fail(self, i, reason):
        self.failures.append((time.monotonic(), i, reason))
        self._close(i)

    def _close(self, i):
        c = self._conns[i]
        if c is None:
            return
        try:
            self._sel.unregister(c["sock"])
        except (KeyError, ValueError):
            pass
        c["sock"].close()
        self._conns[i] = None

    def _open(self, i):
        try:
            sock = socket.create_connection((harness.HOST, self.port), timeout=2.0)
        except OSError as e:
            self.failures.append((time.monotonic(), i, "connect: %s" % e))
            return
        sock.setblocking(False)
        self._conns[i] = {"sock": sock, "buf": b"", "sent_at": 0.0}
        self._sel.register(sock, selectors.EVENT_READ, i)
        self._send(i)

    def _send(self, i):
        c = self._conns[i]
        try:
            sent = c["sock"].send(self.request)
        except OSError as e:
            self._fail(i, "send: %s" % e)
            return
        if sent != len(self.request):  # a few dozen bytes into an empty socket buffer
            self._fail(i, "short send of %d bytes" % sent)
            return
        c["sent_at"] = time.monotonic()

    def _on_readable(self, i):
        c = self._conns[i]
        try:
            data = c["sock"].recv(65536)
        except BlockingIOError:
            return
        except OSError as e:
            self._fail(i, "recv: %s" % e)
            return
        if not data:
            self._fail(i, "closed by server with no response (have %r)" % c["buf"][:100])
            return
        c["buf"] += data
        while c is not None and b"\r\n\r\n" in c["buf"]:
            head, _, rest = c["buf"].partition(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            m = re.match(rb"HTTP/1\.1 (\d{3}) ", lines[0] + b" ")
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip().lower()
            length = headers.get(b"content-length", b"")
            if not m or not length.isdigit():
                self._fail(i, "unexpected response head %r" % head[:200])
                return
            if len(rest) < int(length):
                return  # body not complete yet
            c["buf"] = rest[int(length):]
            status = int(m.group(1))
            if not 200 <= status < 300:
                self._fail(i, "status %d" % status)
                return
            self.done_times.append(time.monotonic())
            if b"close" in [t.strip() for t in headers.get(b"connection", b"").split(b",")]:
                self.reconnects += 1
                self._close(i)
                self._open(i)
                return
            self._send(i)
            c = self._conns[i]

    def _run(self):
        end = time.monotonic() + self.max_seconds
        for i in range(self.n):
            self._open(i)
        while not self._stop.is_set() and time.monotonic() < end:
            for key, _ in self._sel.select(timeout=0.05):
                if self._conns[key.data] is not None:
                    self._on_readable(key.data)
            now = time.monotonic()
            for i in range(self.n):
                c = self._conns[i]
                if c is None:
                    if not self._stop.is_set():
                        self._open(i)  # after a failure: keep the load on
                elif now - c["sent_at"] > self.request_timeout:
                    self._fail(i, "no response within %.1f s" % self.request_timeout)
        for i in range(self.n):
            self._close(i)
        self._sel.close()

    def longest_gap(self, start, end):
        """Longest time in [start, end] with no response at all."""
        times = [start] + [t for t in self.done_times if start <= t <= end] + [end]
        return max(b - a for a, b in zip(times, times[1:]))


# --------------------------------------------------------------------------------------
# Tests


class WorkerDeath(SupervisorCase):

    def test_killed_worker_is_replaced_within_a_second_under_load(self):
        self.start_server("--workers", str(WORKERS))
        old = self.wait_ready(WORKERS)
        victim = min(old)
        with RequestStream(self.port) as stream:
            time.sleep(0.5)
            t_kill = time.monotonic()
            os.kill(victim, signal.SIGKILL)
            replacement = None
            while replacement is None and time.monotonic() < t_kill + 5:
                new = self.workers() - old
                replacement = min(new) if new else None
                time.sleep(0.005)
            t_seen = time.monotonic()
            time.sleep(1.5 + REPLACE_WITHIN)  # load past REPLACE_WITHIN: the "after" requests
        out = self.server.output()
        self.assertIsNotNone(replacement, "no new worker within 5 s of the kill:\n" + out)
        self.assertLess(t_seen - t_kill, REPLACE_WITHIN + 0.1, "new worker process late:\n" + out)
        self.assertIn(victim, [int(m.group(1)) for m in self.server.wait_for_output(
            r"worker (\d+) \(slot \d+\) was killed by signal 9\b", timeout=2)],
            "the supervisor must log the death and name the signal:\n" + out)

        recs = stream.records
        answered_new = [t1 - t_kill for (_t0, t1, pid, _e) in recs if pid == replacement]
        self.assertTrue(answered_new, "the replacement %d never answered /pid; %d requests:\n%s"
                        % (replacement, len(recs), out))
        self.assertLessEqual(min(answered_new), REPLACE_WITHIN,
                             "the replacement answered first %.3f s after the kill" % min(answered_new))
        before = [r for r in recs if r[1] < t_kill]
        after = [r for r in recs if r[0] > t_kill + REPLACE_WITHIN]
        self.assertGreater(len(before), 10, "too few requests before the kill")
        self.assertGreater(len(after), 50, "too few requests after the kill")
        for name, group in (("ended before the kill", before), ("started past REPLACE_WITHIN", after)):
            bad = [(round(t0 - t_kill, 3), err) for (t0, _t1, _pid, err) in group if err]
            self.assertEqual(bad, [], "requests %s failed (time rel. to kill, error)" % name)
        self.assertNotIn(victim, {pid for (t0, _t1, pid, _e) in after},
                         "a request after the kill was answered by the killed worker")
        self.assertEqual(len(self.workers()), WORKERS)


class Reload(SupervisorCase):

    def _reload(self, generation, old):
        t_hup = time.monotonic()
        self.server.proc.send_signal(signal.SIGHUP)
        done = self.server.wait_for_output(r"reload complete: generation (\d+) serving",
                                           timeout=10, count=generation)
        out = self.server.output()
        hint = ("\n(a reload execs the binary on disk: was it being relinked just then?)"
                if "exec failed" in out else "")
        self.assertTrue(done, "no 'reload complete' for generation %d:\n%s%s" % (generation, out, hint))
        self.assertEqual(int(done[-1].group(1)), generation)
        self.assertTrue(self.server.wait_for_output(
            r"SIGHUP: reloading, starting generation %d\b" % generation, timeout=1))
        took = self.wait_gone(old, DRAIN_WITHIN)
        self.assertIsNotNone(took, "old workers %r still running %.0f s after reload %d:\n%s"
                             % (sorted(p for p in old if harness.pid_running(p)), DRAIN_WITHIN,
                                generation, self.server.output()))
        new = self.workers()
        self.assertEqual(len(new), WORKERS, "workers after reload %d: %r" % (generation, new))
        self.assertFalse(new & old, "reload %d kept workers %r" % (generation, new & old))
        return t_hup, new

    def test_sighup_replaces_every_worker_without_a_failed_request(self):
        self.start_server("--workers", str(WORKERS))
        gen0 = self.wait_ready(WORKERS)
        with KeepAliveLoad(self.port, n=50) as load:
            t_start = time.monotonic()
            time.sleep(2.0)
            served_before = len(load.done_times)
            t_hup1, gen1 = self._reload(1, gen0)
            time.sleep(max(0.0, t_hup1 + 3.0 - time.monotonic()))
            t_hup2, gen2 = self._reload(2, gen1)
            time.sleep(max(0.0, t_hup2 + 3.0 - time.monotonic()))
            t_end = time.monotonic()
        self.assertFalse(load._thread.is_alive(), "load thread did not stop")
        out = self.server.output()
        summary = ("%d responses, %d reconnects after Connection: close, failures (time rel. to "
                   "first SIGHUP, conn, reason): %r\n%s"
                   % (len(load.done_times), load.reconnects,
                      [(round(t - t_hup1, 3), i, why) for t, i, why in load.failures[:20]], out))
        self.assertEqual(load.failures, [], summary)
        self.assertGreater(served_before, 100, "load too light before the reload: " + summary)
        self.assertGreater(load.reconnects, 0, "old workers never said Connection: close: " + summary)
        self.assertFalse(gen2 & gen0)
        gap = load.longest_gap(t_start + 0.5, t_end)
        self.assertLess(gap, 1.0 * harness.TIME_SCALE, "no response for %.3f s: %s" % (gap, summary))
        # The new generation is the one answering.
        r, err = fetch(self.port, "/pid")
        self.assertIsNone(err)
        self.assertIn(int(r.body), gen2)


class HookThreads(SupervisorCase):

    def test_a_thread_a_node_hook_started_does_not_take_the_supervisors_signals(self):
        # A node hook starts a thread of its own. SIGHUP must still reload and SIGTERM
        # stop gracefully: were they unblocked in that thread, the kernel would deliver
        # them there, and their default action would end the supervisor at once.
        d = tempfile.mkdtemp(prefix="kiln-hook-thread-")
        self.addCleanup(shutil.rmtree, d, True)
        env = dict(os.environ, KILNTEST_HOOK_DIR=d, KILNTEST_HOOK_THREAD="1")
        server = self.start_server("--workers", "2", env=env)
        old = self.wait_ready(2)
        # The worker hook starts one too: workers with such a thread must survive the
        # SIGUSR1s (log reopen) the supervisor passes on. (The race this guards, a
        # signal arriving while the main thread is outside sigwait and going to the
        # hook's thread, cannot be made on demand: this passed before the fix too.)
        for _ in range(20):
            server.proc.send_signal(signal.SIGUSR1)
        time.sleep(0.3)
        self.assertEqual(self.workers(), old, server.output())
        self.assertNotIn("killed by signal", server.output())
        server.proc.send_signal(signal.SIGHUP)
        done = server.wait_for_output(r"reload complete: generation 1 serving", timeout=15)
        self.assertTrue(done, server.output())
        self.assertIsNotNone(self.wait_gone(old, DRAIN_WITHIN), server.output())
        self.assertEqual(len(self.workers()), 2)
        r, err = fetch(self.port, "/plaintext")
        self.assertIsNone(err)
        server.proc.send_signal(signal.SIGTERM)
        self.assertEqual(server.proc.wait(timeout=20), 0, server.output())
        self.assertIn("supervisor stopped", server.output())


class ReadyTimeout(SupervisorCase):

    def test_new_workers_not_ready_within_the_ready_timeout_fail_the_reload(self):
        # The new workers' on_worker_start warms up for 2.5 s; with --ready-timeout
        # 1000 the reload fails at 1 s, naming the setting, and the old worker serves
        # on. (A fixed 30 s timeout would have let this reload through, and refused
        # an app whose warm-up takes longer.)
        d = tempfile.mkdtemp(prefix="kiln-ready-timeout-")
        self.addCleanup(shutil.rmtree, d, True)
        env = dict(os.environ, KILNTEST_HOOK_DIR=d)
        server = self.start_server("--workers", "1", "--ready-timeout", "1000", env=env)
        old = self.wait_ready(1)
        with open(os.path.join(d, "worker_start_ms"), "w") as f:
            f.write("2500\n")
        started = time.monotonic()
        server.proc.send_signal(signal.SIGHUP)
        failed = server.wait_for_output(r"reload failed: new workers not ready within 1000 ms \(timeouts.ready_ms\)",
                                        timeout=10)
        self.assertTrue(failed, server.output())
        self.assertLess(time.monotonic() - started, 2.4, "the reload waited for the warm-up")
        os.unlink(os.path.join(d, "worker_start_ms"))
        time.sleep(0.2)  # the abandoned worker is killed and reaped
        self.assertEqual(self.workers(), old, server.output())
        r, err = fetch(self.port, "/plaintext")
        self.assertIsNone(err)
        self.assertEqual(r.status, 200)
        # With the warm-up gone, the next reload goes through.
        server.proc.send_signal(signal.SIGHUP)
        self.assertTrue(server.wait_for_output(r"reload complete: generation 1 serving", timeout=15), server.output())


    def test_a_hangup_during_a_reload_reloads_again_after_it(self):
        # A second deploy right after the first: its SIGHUP was only logged, and the
        # files it brought were not served until the next one.
        d = tempfile.mkdtemp(prefix="kiln-ready-timeout-")
        self.addCleanup(shutil.rmtree, d, True)
        env = dict(os.environ, KILNTEST_HOOK_DIR=d)
        server = self.start_server("--workers", "1", "--ready-timeout", "5000", env=env)
        self.wait_ready(1)
        with open(os.path.join(d, "worker_start_ms"), "w") as f:
            f.write("800\n")
        server.proc.send_signal(signal.SIGHUP)
        # The second comes once the first is taken (two pending at once are one signal).
        self.assertTrue(server.wait_for_output(r"SIGHUP: reloading, starting generation 1", timeout=5),
                        server.output())
        server.proc.send_signal(signal.SIGHUP)
        self.assertTrue(server.wait_for_output(r"SIGHUP during a reload: another reload follows this one", timeout=5),
                        server.output())
        self.assertTrue(server.wait_for_output(r"reload complete: generation 2 serving", timeout=15), server.output())
        r, err = fetch(self.port, "/plaintext")
        self.assertEqual(r.status, 200)

    def test_a_replacement_that_never_gets_ready_is_killed_and_started_again(self):
        # A worker's share of the connections waits in its sockets until it serves:
        # a replacement stuck in its on_worker_start (a database that does not answer)
        # held them for ever, as no deadline but a reload's applied.
        d = tempfile.mkdtemp(prefix="kiln-ready-timeout-")
        self.addCleanup(shutil.rmtree, d, True)
        env = dict(os.environ, KILNTEST_HOOK_DIR=d)
        server = self.start_server("--workers", "1", "--ready-timeout", "1000", env=env)
        (old,) = self.wait_ready(1)  # it answered: the supervisor must count it as ready
        with open(os.path.join(d, "worker_start_ms"), "w") as f:
            f.write("600000\n")
        os.kill(old, signal.SIGKILL)
        self.assertTrue(server.wait_for_output(r"worker \d+ \(slot 0\) not ready within 1000 ms of its start "
                                               r"\(timeouts.ready_ms\); killing it", timeout=10), server.output())
        os.unlink(os.path.join(d, "worker_start_ms"))
        deadline = time.monotonic() + 15
        r = None
        while time.monotonic() < deadline:
            r, _ = fetch(self.port, "/plaintext", timeout=1)
            if r is not None and r.status == 200:
                break
            time.sleep(0.1)
        self.assertIsNotNone(r, server.output())
        self.assertEqual(r.status, 200)

    def test_a_failed_reload_lets_its_serving_workers_finish_what_they_took(self):
        # Slot 1's new worker never gets ready; slot 0's is ready and serving when the
        # reload fails. It was SIGKILLed with the stuck one, its requests cut.
        d = tempfile.mkdtemp(prefix="kiln-ready-timeout-")
        self.addCleanup(shutil.rmtree, d, True)
        env = dict(os.environ, KILNTEST_HOOK_DIR=d)
        server = self.start_server("--workers", "2", "--ready-timeout", "2000", threads=1, env=env)
        self.wait_ready(2)
        with open(os.path.join(d, "worker_start_ms.1"), "w") as f:
            f.write("600000\n")
        old = self.workers()
        server.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 1.5  # slot 0's new worker is ready and takes its share
        while time.monotonic() < deadline:
            r, _ = fetch(self.port, "/pid")
            if r is not None and r.status == 200 and int(r.body) not in old:
                break
            time.sleep(0.02)
        results = []

        def one():
            results.append(fetch(self.port, "/events?n=2&ms=1500", timeout=8))
        threads = [threading.Thread(target=one) for _ in range(30)]  # (it takes about 1 in 8)
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertTrue(server.wait_for_output(r"reload failed: new workers not ready within 2000 ms", timeout=5),
                        server.output())
        cut = [err for r, err in results if r is None or r.status != 200 or b"id: 1" not in r.body]
        self.assertEqual(cut, [], server.output())


class ReloadWithOtherListeners(SupervisorCase):

    def test_a_reload_that_changes_the_listeners_fails_and_the_old_workers_serve_on(self):
        # The sockets are bound once, by the supervisor. A reload whose configuration
        # drops a listener must not hand the remaining sockets to the wrong entries
        # (the public port taking PROXY headers meant for a balancer's): the new
        # workers refuse, naming why, and the old ones keep serving.
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            extra = probe.getsockname()[1]
        out = self.refused_reload('listen = ["127.0.0.1:0", "127.0.0.1:%d proxy_protocol"]\n' % extra,
                                  'listen = ["127.0.0.1:0"]\n')
        self.assertRegex(out, r"lists 1 listener\(s\) \(listen\), the node bound 2: the listening sockets are bound once")


class ReloadWithoutTheSessionStore(SupervisorCase):

    def test_a_reload_to_the_memory_store_fails_and_the_old_workers_serve_on(self):
        # The shared-memory store is made by the supervisor at its start. Workers
        # reloaded without one served anyway: every session use a 500, every form 403.
        # (No Redis at that URL: the workers start without one.)
        out = self.refused_reload('listen = ["127.0.0.1:0"]\n[session]\nstore = "redis"\n'
                                  '[redis]\nurl = "redis://127.0.0.1:1"\n',
                                  'listen = ["127.0.0.1:0"]\n[session]\nstore = "memory"\n')
        self.assertIn("no session store came from the supervisor", out)


class ReloadTurningOnTheRateLimit(SupervisorCase):

    def test_a_reload_that_turns_on_limits_rate_fails_and_says_to_restart(self):
        # The rate table is made by the supervisor at its start, when limits.rate is
        # on. Workers reloaded with it on and no table served unlimited, and the
        # reload said it had succeeded.
        out = self.refused_reload('listen = ["127.0.0.1:0"]\n', 'listen = ["127.0.0.1:0"]\n[limits]\nrate = 10\n')
        self.assertIn("no rate table came from the supervisor", out)
        self.assertIn("restart the node to turn it on", out)


class ReloadThatLosesItsCertificate(SupervisorCase):

    def test_a_tls_listener_without_a_certificate_fails_the_reload(self):
        # A reload whose configuration lost tls.* (a unit file without its
        # certificate's variable) kept the listener's tls mark: its workers served
        # plain HTTP on the HTTPS port, and the reload said it had succeeded.
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            extra = probe.getsockname()[1]
        listen = 'listen = ["127.0.0.1:0", "127.0.0.1:%d tls"]\n' % extra
        out = self.refused_reload(listen + '[tls]\nself_signed = true\n', listen)
        self.assertIn("listener '127.0.0.1:%d' is marked tls, but no certificate is configured" % extra, out)


class SecretsStayOutOfCoreDumps(SupervisorCase):

    def test_the_session_and_ticket_segments_are_not_dumped(self):
        # Every session's data and the node's TLS ticket keys live in shared memory
        # that a crashing worker's core dump would hold (memfd mappings are dumped
        # by default): the supervisor and every worker mark them "do not dump".
        self.start_server("--workers", "2", "--tls-self-signed")
        pids = [self.server.proc.pid] + sorted(self.wait_ready_tls(2))
        for pid in pids:
            with open("/proc/%d/smaps" % pid) as f:
                text = f.read()
            for name in ("kiln-sessions", "kiln-tickets"):
                with self.subTest(pid=pid, segment=name):
                    m = re.search(r"memfd:%s.*?\nVmFlags:([^\n]*)" % name, text, re.S)
                    self.assertIsNotNone(m, "no %s mapping in %d" % (name, pid))
                    self.assertIn(" dd", m.group(1))

    def wait_ready_tls(self, count):
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if len(self.workers()) == count and self.server.wait_for_output(r"ready: every worker serves", timeout=0.1):
                return self.workers()
        self.fail("workers not ready:\n" + self.server.output())


class GracefulStop(SupervisorCase):

    # Regression: `pkill` reaches the workers as well as the supervisor; the
    # supervisor's forwarded SIGTERM was a "second signal" to them and cut the
    # in-flight request short.
    def test_sigterm_to_every_process_still_drains(self):
        # Hybrid: a worker that stopped early would abandon the handler on its pool
        # (in the event model a blocking handler finishes before any stop is seen).
        self.start_server("--workers", "2", "--mpm", "hybrid", threads=1)
        workers = self.wait_ready(2)
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as ex:
            f = ex.submit(fetch, self.port, "/sleep?ms=1500", 10)
            time.sleep(0.3)
            for pid in workers:  # the workers first, as pkill may reach them...
                os.kill(pid, signal.SIGTERM)
            time.sleep(0.2)      # ...then the supervisor, which forwards its own SIGTERM
            os.kill(self.server.proc.pid, signal.SIGTERM)
            r, err = f.result(timeout=10)
        self.assertIsNotNone(r, err)
        self.assertEqual((r.status, r.body), (200, b"slept"))
        self.assertEqual(self.server.proc.wait(timeout=15), 0)
        self.assertNotIn("second signal", self.server.output())

    def test_sigterm_finishes_in_flight_request_and_leaves_no_worker(self):
        server = self.start_server("--workers", str(WORKERS))
        workers = self.wait_ready(WORKERS)
        with self.connect() as busy:
            accepted(busy).send(build_request("GET", "/sleep?ms=2000"))
            time.sleep(0.3)  # the handler is running
            server.proc.send_signal(signal.SIGTERM)
            r = busy.read_response(timeout=10)
            self.assertEqual((r.status, r.body), (200, b"slept"))
            busy.assert_closed(self, timeout=5, msg="in-flight connection after stop")
        try:
            status = server.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001
            status = None
        self.assertEqual(status, 0, "supervisor exit status after SIGTERM:\n" + server.output())
        self.assertEqual(self._leftover(workers), [], "workers outlived the supervisor")
        self.assertTrue(server.wait_for_output(r"supervisor stopped", timeout=1), server.output())
        with self.assertRaises(OSError):
            harness.RawConnection(self.port, timeout=1).close()

    # Regression: the head of a response finished after the stop began lacked it.
    def test_response_finished_during_drain_says_connection_close(self):
        server = self.start_server("--workers", "1")
        self.wait_ready(1)
        with self.connect() as busy:
            accepted(busy).send(build_request("GET", "/sleep?ms=1000"))
            time.sleep(0.3)  # the handler is running
            server.proc.send_signal(signal.SIGTERM)
            r = busy.read_response(timeout=10)
            self.assertEqual((r.status, r.body), (200, b"slept"))
            self.assertIn("close", r.header_tokens("Connection"),
                          "a response sent while draining must announce the close: %r" % r)

    def connect(self, **kw):
        return harness.RawConnection(self.port, **kw)


class CrashLoop(SupervisorCase):

    def test_crash_loop_backs_off_then_serves_again(self):
        self.start_server("--workers", "1")
        self.wait_ready(1)
        crashes = 5
        for i in range(crashes):
            with harness.RawConnection(self.port) as c:
                c.send(build_request("GET", "/crash"))
                # Queued until the (backed-off) replacement accepts it, then it dies.
                closed, extra, _ = c.wait_closed(timeout=15)
                self.assertTrue(closed, "/crash #%d: connection not closed\n%s" % (i, self.server.output()))
                self.assertEqual(extra, b"", "/crash #%d answered" % i)
        backoffs = self.server.wait_for_output(
            r"was killed by signal 6 \(Abort[^)]*\); it died (\d+) times in a row within \d+ ms "
            r"of starting: replacing it in (\d+) ms", timeout=5, count=crashes - 1)
        out = self.server.output()
        self.assertTrue(backoffs, "no back-off message for %d crashes in a row:\n%s" % (crashes, out))
        counts = [int(m.group(1)) for m in backoffs]
        delays = [int(m.group(2)) for m in backoffs]
        self.assertEqual(counts, list(range(2, crashes + 1)), out)
        self.assertTrue(all(a < b for a, b in zip(delays, delays[1:])),
                        "back-off must grow: %r\n%s" % (delays, out))
        deadline = time.monotonic() + 15
        r = err = None
        while time.monotonic() < deadline:
            r, err = fetch(self.port, "/plaintext", timeout=2)
            if r is not None and r.status == 200:
                break
            time.sleep(0.1)
        self.assertIsNotNone(r, "not serving 15 s after the crash loop (%s):\n%s" % (err, out))
        self.assertEqual((r.status, r.body), (200, b"Hello, World!"))
        self.assertEqual(len(self.workers()), 1)


def crash_loop_the_other_slot(case, crashes, backoff_ms):
    """With two workers serving, crashes the one that is not the first (the keeper)
    `crashes` times in a row, until its slot waits `backoff_ms` for its next worker.
    Returns the keeper's pid."""
    case.wait_ready(2)
    keeper = min(case.workers())
    crashed = 0
    deadline = time.monotonic() + 60
    while crashed < crashes and time.monotonic() < deadline:
        with harness.RawConnection(case.port) as c:  # until one lands on the other slot
            c.send(build_request("GET", "/pid"))
            r = c.read_response(timeout=10)
            if int(r.body) == keeper:
                continue
            c.send(build_request("GET", "/crash"))
            closed, _extra, _ = c.wait_closed(timeout=15)
            case.assertTrue(closed, "/crash #%d: connection not closed\n%s" % (crashed, case.server.output()))
            crashed += 1
    case.assertEqual(crashed, crashes, case.server.output())
    case.assertTrue(case.server.wait_for_output(r"replacing it in %d ms" % backoff_ms, timeout=5),
                    case.server.output())
    case.assertEqual(case.workers(), {keeper}, "the crashing slot runs a worker already: no back-off")
    return keeper


class SteeringDuringBackOff(SupervisorCase):

    def test_new_connections_go_to_the_worker_that_serves(self):
        # One slot crash-loops and waits 3.2 s for its next worker. Before, the kernel
        # still hashed half the new connections to that slot's socket, where they
        # waited for the successor; now every one is answered by the other worker.
        self.start_server("--workers", "2")
        keeper = crash_loop_the_other_slot(self, crashes=7, backoff_ms=3200)
        steered = self.server.wait_for_output(r"new connections go to the workers that serve \(slot \d\)", count=7)
        self.assertEqual(len(steered), 7, self.server.output())  # once for each crash
        # Sampled while the slot backs off (3.2 s): each connection is answered by the
        # keeper, well before the successor could take it. At least 10 samples.
        answered = []
        while len(answered) < 20 and self.workers() == {keeper}:
            started = time.monotonic()
            r, err = fetch(self.port, "/pid", timeout=2)
            took = time.monotonic() - started
            if self.workers() != {keeper}:
                break  # the successor came: this sample proves nothing
            self.assertIsNotNone(r, "connection #%d not answered within 2 s (%s):\n%s"
                                 % (len(answered), err, self.server.output()))
            self.assertLess(took, 1, "connection #%d answered in %.2f s" % (len(answered), took))
            answered.append(int(r.body))
        self.assertGreaterEqual(len(answered), 10, "too few samples within the back-off")
        self.assertEqual(set(answered), {keeper})
        # And once the slot serves again, it takes its share again.
        self.assertTrue(self.server.wait_for_output(r"every slot serves again:", timeout=10, count=7),
                        self.server.output())
        pids = set()
        for _ in range(40):
            r, _err = fetch(self.port, "/pid", timeout=5)
            if r is not None:
                pids.add(int(r.body))
        self.assertEqual(len(pids), 2, "40 connections all went to %r:\n%s" % (pids, self.server.output()))


class StopDuringBackOff(SupervisorCase):

    def test_a_stop_while_a_slot_waits_to_respawn_does_not_spin(self):
        # One slot crash-loops and backs off (100, 200, 400, 800, 1,600 ms) while the other
        # serves on; a stop with a lame duck comes while the first slot waits for its
        # next worker. The supervisor waits out the lame duck asleep: before, that
        # slot's due respawn (skipped while stopping) made its poll timeout 0 until the
        # lame duck ended, a core at 100%.
        env = dict(os.environ, KILN_TIMEOUTS_LAME_DUCK_MS="3500")
        server = self.start_server("--workers", "2", env=env)
        keeper = crash_loop_the_other_slot(self, crashes=6, backoff_ms=1600)
        before = cpu_seconds(server.proc.pid)
        server.proc.send_signal(signal.SIGTERM)
        time.sleep(2.8)  # within the lame duck, past the respawn that is not going to happen
        used = cpu_seconds(server.proc.pid) - before
        self.assertLess(used, 0.3, "the supervisor used %.2f s of CPU in 2.8 s of lame duck" % used)
        self.assertEqual(server.proc.wait(timeout=10), 0)


class WorkerSignals(SupervisorCase):

    def test_a_hangup_sent_to_a_worker_cuts_nothing(self):
        # `pkill -HUP app` reaches the workers too: a reload is the supervisor's, so a
        # worker ignores it and finishes what it serves.
        self.start_server("--workers", "1")
        self.wait_ready(1)
        (worker,) = self.workers()
        with harness.RawConnection(self.port) as c:
            c.send(build_request("GET", "/sleep?ms=500"))
            time.sleep(0.2)
            os.kill(worker, signal.SIGHUP)
            r = c.read_response(timeout=10)
        self.assertEqual((r.status, r.body), (200, b"slept"))
        self.assertEqual(self.workers(), {worker})


def cpu_seconds(pid):
    """utime + stime of a process, in seconds (/proc/pid/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Watchdog(SupervisorCase):

    def test_a_stuck_event_loop_is_killed_and_replaced(self):
        self.start_server("--workers", "1", "--watchdog-timeout", "1000", threads=1)
        self.wait_ready(1)
        old = self.workers()
        started = time.monotonic()
        r, err = fetch(self.port, "/sleep?ms=4000", timeout=6)  # blocks the worker's only loop
        elapsed = time.monotonic() - started
        self.assertIsNone(r, "a request stuck past the watchdog must not complete")
        self.assertLess(elapsed, 3.5, "the watchdog should cut the 4 s handler after about 1 s")
        self.assertTrue(self.server.wait_for_output(r"an event loop has not run for \d+ ms \(watchdog timeout 1000 ms\); killing it",
                                                    timeout=3), self.server.output())
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            r, err = fetch(self.port, "/plaintext", timeout=2)
            if r is not None and r.status == 200:
                break
            time.sleep(0.05)
        self.assertEqual((r.status, r.body), (200, b"Hello, World!"))
        self.assertNotEqual(self.workers(), old)

    def test_a_slow_but_moving_handler_is_left_alone(self):
        self.start_server("--workers", "1", "--watchdog-timeout", "1000", threads=1)
        self.wait_ready(1)
        old = self.workers()
        r, err = fetch(self.port, "/sleep?ms=500", timeout=5)
        self.assertEqual((r.status, r.body), (200, b"slept"))
        self.assertEqual(self.workers(), old)
        self.assertNotIn("watchdog", self.server.output())


class DrainWithWatchdog(SupervisorCase):

    def test_a_draining_worker_is_not_taken_for_a_stuck_one(self):
        # Two loops: one drains at once and stops beating, the other finishes a stream.
        # The watchdog read the first one's last beat and killed the worker mid-drain.
        self.start_server("--workers", "1", "--watchdog-timeout", "1500", "--drain-timeout", "15000", threads=2)
        self.wait_ready(1)
        with harness.RawConnection(self.port, timeout=12) as c:
            accepted(c).send(build_request("GET", "/events?n=3&ms=2000"))  # 4 s: past the watchdog's time
            time.sleep(0.3)
            self.server.proc.send_signal(signal.SIGHUP)
            r = c.read_response(timeout=12)
        self.assertEqual(r.status, 200)
        self.assertIn(b"id: 2", r.body, self.server.output())
        self.assertNotIn("watchdog", self.server.output())


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Prefork(SupervisorCase):

    def test_a_segfault_costs_only_its_own_request(self):
        # The crash is the point: under AddressSanitizer (make asan) let it be a real
        # SIGSEGV rather than ASan's report and exit.
        saved = os.environ.get("ASAN_OPTIONS")
        os.environ["ASAN_OPTIONS"] = ((saved + ":") if saved else "") + "handle_segv=0"
        try:
            self.start_server("--mpm", "prefork", "--workers", "3", threads=1)
        finally:
            if saved is None:
                del os.environ["ASAN_OPTIONS"]
            else:
                os.environ["ASAN_OPTIONS"] = saved
        self.wait_ready(3)
        with RequestStream(self.port) as stream:
            time.sleep(0.3)
            for _ in range(5):
                with harness.RawConnection(self.port) as c:
                    c.send(build_request("GET", "/segv"))
                    closed, extra, _ = c.wait_closed(timeout=10)
                    self.assertTrue(closed)
                    self.assertEqual(extra, b"", "a crashed request must get no response")
            time.sleep(0.5)
        self.assertGreater(len(stream.records), 20)
        failed = [r for r in stream.records if r[2] is None]
        self.assertEqual(failed, [], "requests to other workers failed while one crashed")
        self.assertTrue(self.server.wait_for_output(r"was killed by signal 11 \(Segmentation fault\)", timeout=3, count=5),
                        self.server.output())

    def test_recycling_bounds_a_leaking_handler(self):
        self.start_server("--mpm", "prefork", "--workers", "2", "--max-requests", "20", threads=1)
        self.wait_ready(2)
        # Relative to a fresh worker: sanitizer builds start far larger than plain ones.
        base = max(rss_kib(p) for p in self.workers())
        peak = base
        for i in range(200):  # 200 MiB leaked in all
            r, err = fetch(self.port, "/leak", timeout=5)
            self.assertIsNotNone(r, err)
            self.assertEqual(r.status, 200)
            if i % 5 == 0:
                peak = max([peak] + [rss_kib(p) for p in self.workers()])
        # 20 requests x 1 MiB above a fresh worker; without recycling it would pass 100 MiB.
        self.assertLess(peak - base, 30 * 1024, "worker RSS went from %d KiB to %d KiB" % (base, peak))
        recycled = self.server.wait_for_output(r"served its 20 requests; replacing it", timeout=3, count=8)
        self.assertTrue(recycled, self.server.output())
        # Recycling is not a failure: no back-off.
        self.assertNotIn("times in a row", self.server.output())

    def test_a_handler_past_request_timeout_is_killed(self):
        self.start_server("--mpm", "prefork", "--workers", "2", "--request-timeout", "1000", threads=1)
        self.wait_ready(2)
        started = time.monotonic()
        r, err = fetch(self.port, "/sleep?ms=4000", timeout=6)
        self.assertIsNone(r)
        self.assertLess(time.monotonic() - started, 3.5)
        self.assertTrue(self.server.wait_for_output(r"watchdog timeout 1000 ms\); killing it", timeout=3),
                        self.server.output())
        r, err = fetch(self.port, "/plaintext", timeout=5)
        self.assertEqual((r.status, r.body), (200, b"Hello, World!"))

    def test_one_connection_at_a_time_per_worker(self):
        self.start_server("--mpm", "prefork", "--workers", "1", threads=1)
        self.wait_ready(1)
        first = socket.create_connection(("127.0.0.1", self.port), timeout=3)
        first.sendall(build_request("GET", "/plaintext"))
        self.assertIn(b"Hello, World!", first.recv(4096))
        # The only worker holds `first` open: a second connection waits in the backlog.
        second = socket.create_connection(("127.0.0.1", self.port), timeout=3)
        second.sendall(build_request("GET", "/plaintext"))
        second.settimeout(0.5)
        with self.assertRaises(socket.timeout):
            second.recv(4096)
        first.close()
        second.settimeout(3)
        self.assertIn(b"Hello, World!", second.recv(4096))
        second.close()


def uid_of(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Uid:"):
                return [int(x) for x in line.split()[1:]]
    return None


@unittest.skipUnless(os.geteuid() == 0, "dropping privileges needs root")
class Privileges(SupervisorCase):

    def test_supervisor_and_workers_run_as_the_configured_user(self):
        import pwd
        nobody = pwd.getpwnam("nobody").pw_uid
        self.start_server("--workers", "2", "--user", "nobody", threads=1)
        self.wait_ready(2)
        self.assertEqual(uid_of(self.server.proc.pid), [nobody] * 4)
        for pid in self.workers():
            self.assertEqual(uid_of(pid), [nobody] * 4)
        r, err = fetch(self.port, "/plaintext", timeout=5)
        self.assertEqual((r.status, r.body), (200, b"Hello, World!"))
        # A reload needs no privilege: the new workers inherit the sockets.
        old = set(self.workers())
        os.kill(self.server.proc.pid, signal.SIGHUP)
        self.assertTrue(self.server.wait_for_output(r"reload complete", timeout=10), self.server.output())
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and set(self.workers()) & old:
            time.sleep(0.05)
        self.assertFalse(set(self.workers()) & old)
        r, err = fetch(self.port, "/plaintext", timeout=5)
        self.assertEqual(r.status, 200)

    def test_unknown_user_is_refused_before_starting(self):
        p = subprocess.run([harness.BINARIES["server"], "--port", str(harness.free_port()), "--user", "no-such-user-kiln"],
                           capture_output=True, text=True, timeout=10)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no such user 'no-such-user-kiln'", p.stderr)

    def test_started_as_root_without_a_user_it_warns(self):
        self.start_server("--workers", "1", threads=1)
        self.wait_ready(1)
        self.assertIn("started as root without `user`", self.server.output())

    def test_started_as_root_with_a_user_it_does_not_warn(self):
        self.start_server("--workers", "1", "--user", "nobody", threads=1)
        self.wait_ready(1)
        self.assertNotIn("without `user`", self.server.output())


def open_file_limits(pid):
    """(soft, hard) "Max open files" of a process, from /proc (RLIM_INFINITY for "unlimited")."""
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max open files"):
                return tuple(resource.RLIM_INFINITY if v == "unlimited" else int(v) for v in line.split()[3:5])
    return None


class OpenFileLimit(SupervisorCase):
    """A shell's or systemd's soft limit of 1024 descriptors would refuse connections
    past about a thousand per worker: the server raises it to the hard limit."""

    def start_with_soft_limit(self, soft, *args):
        was = resource.getrlimit(resource.RLIMIT_NOFILE)
        if was[1] != resource.RLIM_INFINITY and was[1] <= soft:
            self.fail("the hard open-file limit (%d) must be above %d for this test" % (was[1], soft))
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, was[1]))  # inherited by the server
        try:
            self.start_server("--workers", "1", *args, threads=1)
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, was)
        return was[1]

    def test_the_soft_limit_is_raised_to_the_hard_one(self):
        hard = self.start_with_soft_limit(256)
        (worker,) = self.wait_ready(1)
        self.assertEqual(open_file_limits(worker), (hard, hard))
        self.assertEqual(open_file_limits(self.server.proc.pid), (hard, hard))
        self.assertIn("open-file limit %d" % hard, self.server.output())

    def test_max_connections_above_the_hard_limit_is_warned_of(self):
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        if hard == resource.RLIM_INFINITY or hard >= 1 << 24:
            self.fail("the hard open-file limit (%d) must be below 2^24 for this test" % hard)
        cfg = os.path.join(tempfile.mkdtemp(prefix="kiln-nofile-"), "kiln.toml")
        self.addCleanup(shutil.rmtree, os.path.dirname(cfg), True)
        with open(cfg, "w") as f:
            f.write("[limits]\nmax_connections = %d\n" % hard)
        self.start_with_soft_limit(256, "--config", cfg)
        self.wait_ready(1)
        self.assertRegex(self.server.output(), r"open-file limit \(RLIMIT_NOFILE\) is %d, too low for "
                         r"limits.max_connections \(%d\)" % (hard, hard))


class HandlerChildren(SupervisorCase):
    """Security finding 5: a process a handler starts (system(), popen) inherited the
    session store's memfd (read-write), the statistics memfd and the listening
    sockets, and KILN_SECRET sat in every worker's environment. Now every descriptor
    kiln owns is close-on-exec and the secret reaches workers through a sealed memfd
    read once, so a child sees none of them, while signed cookies still verify on
    every worker. KILN_DATABASE_URL and KILN_REDIS_URL, which carry passwords, go the
    same way: every worker has them, no child and no /proc/PID/environ shows them."""

    SECRET = "a-secret-that-no-child-may-see-0123456789"
    # Connection URLs carry passwords: they reach the workers like the secret. Nothing
    # listens on port 1; the server starts anyway, and only the URLs are looked at.
    URLS = {"KILN_DATABASE_URL": "postgresql://app:db-password-no-child-may-see@127.0.0.1:1/app",
            "KILN_REDIS_URL": "redis://:redis-password-no-child-may-see@127.0.0.1:1/2"}

    def child_view(self):
        r, err = fetch(self.port, "/child-process", timeout=10)
        self.assertIsNotNone(r, err)
        self.assertEqual(r.status, 200, r.body)
        return r.body.decode()

    def assert_child_sees_nothing_of_ours(self, secret=None):
        for _ in range(4):  # connections spread over the workers
            view = self.child_view()
            fds = [l for l in view.splitlines() if l.startswith("fd ")]
            self.assertTrue(fds, view)
            for line in fds:
                self.assertNotIn("memfd:", line, view)
                self.assertNotIn("socket:", line, view)
            self.assertNotIn("KILN_SECRET", view)
            self.assertNotIn("KILN_SESSION_FD", view)
            if secret:
                self.assertNotIn(secret, view)

    def assert_signed_cookies_verify_on_every_worker(self):
        r, _ = fetch(self.port, "/cookie/set?v=kept")
        cookie = [c.split(";")[0] for c in r.header_all("Set-Cookie") if c.startswith("signed=")][0]
        pids = set()
        for _ in range(40):
            with harness.RawConnection(self.port) as c:
                c.send(build_request("GET", "/cookie/get", [("Cookie", cookie)]))
                self.assertEqual(c.read_response().body, b"kept (none)")
            pids.add(int(fetch(self.port, "/pid")[0].body))
        self.assertEqual(len(pids), WORKERS, "both workers answered")

    def test_a_child_process_inherits_no_descriptor_and_no_secret(self):
        os.environ["KILN_SECRET"] = self.SECRET
        os.environ.update(self.URLS)
        try:
            self.start_server("--workers", str(WORKERS), threads=1)
        finally:
            for name in ["KILN_SECRET", *self.URLS]:
                del os.environ[name]
        self.wait_ready(WORKERS)
        self.assert_child_sees_nothing_of_ours(self.SECRET)
        for _ in range(4):  # connections spread over the workers
            view = self.child_view()
            for name in self.URLS:
                self.assertNotIn(name, view)
            self.assertNotIn("password-no-child-may-see", view)
        for pid in [self.server.proc.pid] + sorted(self.workers()):
            with open("/proc/%d/environ" % pid, "rb") as f:
                environ = f.read()
            self.assertNotIn(self.SECRET.encode(), environ)
            self.assertNotIn(b"password-no-child-may-see", environ)
            if pid != self.server.proc.pid:  # the supervisor's start-up block keeps the (wiped) names
                for name in ["KILN_SECRET", *self.URLS]:
                    self.assertNotIn(name.encode() + b"=", environ)
        pids = set()
        for _ in range(40):  # and every worker has them, whole
            r, err = fetch(self.port, "/configured-urls")
            self.assertIsNotNone(r, err)
            pid, database_url, redis_url = r.body.decode().split("\n")
            self.assertEqual((database_url, redis_url), (self.URLS["KILN_DATABASE_URL"], self.URLS["KILN_REDIS_URL"]))
            pids.add(int(pid))
        self.assertEqual(len(pids), WORKERS, "both workers answered")
        self.assert_signed_cookies_verify_on_every_worker()

    def test_a_generated_secret_is_shared_by_the_workers_without_the_environment(self):
        self.start_server("--workers", str(WORKERS), threads=1)
        self.wait_ready(WORKERS)
        self.assert_child_sees_nothing_of_ours()
        self.assert_signed_cookies_verify_on_every_worker()


class WorkersZero(harness.ServerTestCase):
    """--workers 0: one process serves, no supervisor; the class-level check still
    demands exit 0 on SIGTERM."""

    server_args = ("--workers", "0")

    def test_serves_from_a_single_process(self):
        r = self.get("/plaintext")
        self.assertEqual((r.status, r.body), (200, b"Hello, World!"))
        for _ in range(5):
            self.assertEqual(self.get("/pid").body, str(self.server.proc.pid).encode())
        self.assertEqual(self.server.children(), [])
        self.assertNotIn("supervisor", self.server.output())


class LoneServerHangup(unittest.TestCase):

    def test_a_hangup_stops_a_lone_server_gracefully(self):
        # SIGHUP's default action ended a lone server on the spot (a certbot hook
        # sending it cut every request in flight). It cannot reload: it drains, and
        # exits with the status the signal gave (kiln run --watch starts it again).
        server = harness.ServerProcess(harness.BINARIES["server"], ["--workers", "0"])
        server.start()
        self.addCleanup(lambda: server.alive() and server.stop())
        with harness.RawConnection(server.port, timeout=5) as c:
            accepted(c).send(build_request("GET", "/events?n=2&ms=500"))
            time.sleep(0.2)
            server.proc.send_signal(signal.SIGHUP)
            r = c.read_response(timeout=5)
        self.assertEqual(r.status, 200)
        self.assertIn(b"id: 1", r.body, server.output())
        self.assertEqual(server.proc.wait(timeout=10), 129, server.output())
        self.assertIn("SIGHUP: a lone server (workers = 0) cannot reload: stopping gracefully", server.output())
        harness.assert_no_sanitizer_report(server.output())


class SystemdReadiness(unittest.TestCase):
    """With NOTIFY_SOCKET (systemd's Type=notify), the node says READY=1 once every
    worker serves, RELOADING=1 then READY=1 around a reload, STOPPING=1 at SIGTERM;
    a lone server says READY=1 and STOPPING=1 itself."""

    def notified_server(self, args, hooks=False):
        """A server told to notify a socket of ours: (server, socket, its temp dir,
        which is also KILNTEST_HOOK_DIR if `hooks`)."""
        d = tempfile.mkdtemp(prefix="kiln-notify-")
        self.addCleanup(shutil.rmtree, d, True)
        path = os.path.join(d, "notify.sock")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        sock.settimeout(10)
        self.addCleanup(sock.close)
        env = {"NOTIFY_SOCKET": path, **({"KILNTEST_HOOK_DIR": d} if hooks else {})}
        server = harness.ServerProcess(harness.BINARIES["server"], args, env=env)
        self.addCleanup(harness.check_clean_stop, server)
        server.start()
        return server, sock, d

    def messages(self, workers, reload=False):
        server, sock, _ = self.notified_server(["--workers", str(workers)])
        got = [sock.recv(256).decode()]
        self.assertEqual(got, ["READY=1"])
        self.assertTrue(fetch(server.port, "/pid")[0] is not None, "READY=1 came before the node served")
        if reload:
            server.proc.send_signal(signal.SIGHUP)
            got += [sock.recv(256).decode(), sock.recv(256).decode()]
        server.proc.send_signal(signal.SIGTERM)
        got.append(sock.recv(256).decode())
        return got

    def test_supervisor(self):
        self.assertEqual(self.messages(2, reload=True), ["READY=1", "RELOADING=1", "READY=1", "STOPPING=1"])

    def test_lone_server(self):
        self.assertEqual(self.messages(0), ["READY=1", "STOPPING=1"])

    def test_a_failed_reload_says_ready_again(self):
        # After RELOADING=1 systemd waits for READY=1: a failed reload never said it,
        # so `systemctl reload` hung to its timeout while the old workers served.
        server, sock, d = self.notified_server(["--workers", "1", "--ready-timeout", "500"], hooks=True)
        self.assertEqual(sock.recv(256).decode(), "READY=1")
        with open(os.path.join(d, "worker_start_ms"), "w") as f:
            f.write("3000\n")
        server.proc.send_signal(signal.SIGHUP)
        self.assertEqual(sock.recv(256).decode(), "RELOADING=1")
        self.assertEqual(sock.recv(256).decode(), "READY=1")
        self.assertIn("reload failed", server.output())
        os.unlink(os.path.join(d, "worker_start_ms"))
        server.proc.send_signal(signal.SIGTERM)
        self.assertEqual(sock.recv(256).decode(), "STOPPING=1")


if __name__ == "__main__":
    harness.main()
