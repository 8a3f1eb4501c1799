"""Coroutine handlers over real sockets: while one waits, its loop serves others;
pipelined requests behind it wait and are answered in order; a client that leaves
while its handler waits cancels the wait and costs nothing; the handler deadline
answers 504; exceptions map as for plain handlers. In the event MPM with one loop
(where a blocking handler would stall everyone) and in the hybrid MPM (where
coroutine handlers stay on their loop instead of going to the pool)."""
import concurrent.futures
import os
import re
import signal
import socket
import time
import unittest

import harness
from harness import build_request


def get(port, path, timeout=10):
    status, _, body, took = harness.timed_get(port, path, timeout)
    return status, body, took


class AsyncStats:
    """The server's counts of coroutine waits and kiln::blocking jobs."""

    def counts(self):
        """(waits done, waits cancelled, blocking jobs that ran), from one answer."""
        status, body, _ = get(self.port, "/async/stats")
        self.assertEqual(status, 200)
        m = re.match(rb"done=(\d+) cancelled=(\d+) blocking_ran=(\d+)", body)
        return int(m.group(1)), int(m.group(2)), int(m.group(3))

    def stats(self):
        return self.counts()[:2]

    def blocking_ran(self):
        return self.counts()[2]


class CoroutinesOneLoop(AsyncStats, harness.ServerTestCase):
    server_args = ("--workers", "0", "--threads", "1", "--handler-timeout", "400")

    def test_pipelined_requests_wait_for_it_and_stay_in_order(self):
        with self.connect() as c:
            c.send(build_request("GET", "/async/sleep?ms=80") + build_request("GET", "/plaintext") +
                   build_request("GET", "/async/sleep?ms=5") + build_request("GET", "/async/fail") +
                   build_request("GET", "/users/7"))
            answers = [c.read_response() for _ in range(5)]
        self.assertEqual([(r.status, r.body) for r in answers],
                         [(200, b"slept 80"), (200, b"Hello, World!"), (200, b"slept 5"),
                          (418, b"short and stout\n"), (200, b"user 7")])

    def test_a_client_that_leaves_cancels_the_wait(self):
        done0, cancelled0 = self.stats()
        for _ in range(5):
            s = socket.create_connection(("127.0.0.1", self.port))
            s.sendall(b"GET /async/sleep?ms=3000 HTTP/1.1\r\nHost: h\r\n\r\n")
            time.sleep(0.05)
            s.close()
        deadline = time.monotonic() + 2
        while self.stats()[1] < cancelled0 + 5 and time.monotonic() < deadline:
            time.sleep(0.02)
        done, cancelled = self.stats()
        self.assertEqual(cancelled, cancelled0 + 5, "the waits of the clients that left were not cancelled")
        self.assertEqual(done, done0)
        self.assert_server_alive()

    def test_blocking_jobs_of_clients_gone_before_they_began_do_not_run(self):
        # More requests than the blocking threads (max(2, cores)), each client gone at
        # once: the jobs that waited for a thread are skipped (before, every one ran).
        threads = max(2, os.cpu_count() or 1)
        n = threads + 4
        ran0 = self.blocking_ran()
        socks = []
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", self.port))
            s.sendall(b"GET /async/blocking?ms=1000 HTTP/1.1\r\nHost: h\r\n\r\n")
            socks.append(s)
        time.sleep(0.1)
        for s in socks:
            s.close()
        # A request the loop reads only together with its client's FIN (the loop held
        # up past the close) does not count as gone: its handler ends at the 400 ms
        # deadline instead, which must come before a thread frees for its job, hence
        # jobs of 1 s. Once the first job has ended, a job begun on the thread it freed
        # would end within 1.5 s.
        deadline = time.monotonic() + 10
        while self.blocking_ran() == ran0 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(1.5)
        ran = self.blocking_ran() - ran0
        self.assertGreaterEqual(ran, 1)
        self.assertLessEqual(ran, threads, "%d of %d jobs ran, with %d threads" % (ran, n, threads))
        self.assert_server_alive()

    def test_the_handler_deadline_answers_504(self):
        status, _, took = get(self.port, "/async/sleep?ms=3000")
        self.assertEqual(status, 504)
        self.assertLess(took, 1.5)
        status, body, _ = get(self.port, "/async/sleep?ms=10")  # within the deadline: fine
        self.assertEqual((status, body), (200, b"slept 10"))


class CoroutinesOneLoopLongWaits(AsyncStats, harness.ServerTestCase):
    """One loop without the short handler deadline, so the waits can last seconds: a
    check made while they run still holds on a machine that stalls a test for half a
    second, and a bound between side by side and one after another keeps its margin."""
    server_args = ("--workers", "0", "--threads", "1")

    def test_waiting_handlers_share_one_loop(self):
        with concurrent.futures.ThreadPoolExecutor(max_workers=10) as pool:
            t0 = time.monotonic()
            waits = [pool.submit(get, self.port, "/async/sleep?ms=1500") for _ in range(10)]
            time.sleep(0.05)
            status, body, took = get(self.port, "/plaintext")  # the loop is free meanwhile
            self.assertEqual((status, body), (200, b"Hello, World!"))
            # Behind a blocked loop it would wait for the sleep under way, 1.45 s or more.
            self.assertLess(took, 0.75)
            results = [f.result(timeout=20) for f in waits]
            elapsed = time.monotonic() - t0
        self.assertTrue(all(r[0] == 200 and r[1] == b"slept 1500" for r in results), results)
        # Side by side: 1.5 s; one after another: 15 s.
        self.assertLess(elapsed, 3.5, "ten 1500 ms waits on one loop took %.2f s" % elapsed)

    def test_blocking_work_runs_off_the_loop_and_the_handler_comes_back_to_it(self):
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            jobs = [pool.submit(get, self.port, "/async/blocking?ms=1500") for _ in range(2)]
            # Both jobs sleep at once, each on a thread of its own: not on the one loop.
            self.assertIsNot(harness.wait_for_sleeping_threads(self.server.proc.pid, count=2), False,
                             "the two jobs did not run side by side")
            status, body, took = get(self.port, "/plaintext")  # the one loop is free meanwhile
            self.assertEqual((status, body), (200, b"Hello, World!"))
            self.assertLess(took, 0.75)  # behind a job on the loop: 1.3 s or more
            results = [f.result(timeout=10) for f in jobs]
        for status, body, took in results:
            self.assertEqual((status, body), (200, b"slept 1500 elsewhere, back on the loop"))
        status, body, _ = get(self.port, "/async/blocking?ms=1&fail=1")  # its exception, mapped as usual
        self.assertEqual((status, body), (409, b"the job failed\n"))

    def test_a_client_that_leaves_during_blocking_work_cancels_after_it(self):
        done0, cancelled0, ran0 = self.counts()
        s = socket.create_connection(("127.0.0.1", self.port))
        s.sendall(b"GET /async/blocking?ms=1500 HTTP/1.1\r\nHost: h\r\n\r\n")
        # The job runs before the client leaves: a FIN read with the request would be
        # a half-close that still wants its answer, not a client gone.
        harness.wait_for_sleeping_threads(self.server.proc.pid)
        s.close()
        # Until the job has ended the cancellation waits (its locals are still in use):
        # no answer that says the job has not run may show the wait cancelled. (The job
        # counts itself before it returns; the cancellation is counted on the loop, as
        # the stats are.) Checked on every answer, not at a moment a sleep picked.
        deadline = time.monotonic() + 5 * harness.TIME_SCALE
        while True:
            done, cancelled, ran = self.counts()
            if ran == ran0:
                self.assertEqual(cancelled, cancelled0, "cancelled before the job ended (its locals still in use)")
            if cancelled > cancelled0 or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        self.assertEqual((done, cancelled, ran), (done0, cancelled0 + 1, ran0 + 1))
        self.assert_server_alive()


class CoroutinesAtStop(unittest.TestCase):
    """A graceful stop waits for a handler that waits; past the drain timeout the
    handler is cancelled and the process still exits cleanly (no leak under ASan)."""

    def run_stop(self, sleep_ms, drain_ms):
        srv = harness.ServerProcess(harness.BINARIES["server"],
                                    ("--workers", "0", "--threads", "1", "--drain-timeout", str(drain_ms)))
        srv.start()
        try:
            with harness.RawConnection(srv.port) as c:
                c.send(build_request("GET", "/async/sleep?ms=%d" % sleep_ms))
                # Answered on a later connection: the one loop has taken this one from the
                # listener (in order) before SIGTERM, which resets what it has not taken.
                self.assertEqual(get(srv.port, "/plaintext")[0], 200)
                t0 = time.monotonic()
                srv.proc.terminate()
                try:
                    r = c.read_response(timeout=10)
                    outcome = (r.status, r.body)
                except (harness.ConnectionClosed, ConnectionError):
                    outcome = "closed"
            self.assertEqual(srv.proc.wait(timeout=10), 0)
            stopped_after = time.monotonic() - t0
            harness.assert_no_sanitizer_report(srv.output(limit=20000))
            return outcome, stopped_after
        finally:
            srv.stop()

    def test_a_graceful_stop_lets_the_wait_finish(self):
        outcome, _ = self.run_stop(sleep_ms=600, drain_ms=5000)
        self.assertEqual(outcome, (200, b"slept 600"))

    def stop_after_a_client_left(self, args, target):
        """A server with `args` gets `target` (a handler or job that sleeps) from a client
        that leaves once it runs, then SIGTERM: (seconds the stop took, seconds from the
        request to the process's end, the server's output). It must exit 0."""
        srv = harness.ServerProcess(harness.BINARIES["server"], ("--workers", "0", "--threads", "1") + args)
        srv.start()
        try:
            sent = time.monotonic()
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: h\r\n\r\n")
            harness.wait_for_sleeping_threads(srv.proc.pid)  # it runs: taken before the stop
            s.close()
            time.sleep(0.1)
            t0 = time.monotonic()
            srv.proc.terminate()
            self.assertEqual(srv.proc.wait(timeout=10), 0)
            end = time.monotonic()
            return end - t0, end - sent, srv.output()
        finally:
            srv.stop()

    def test_a_stop_waits_for_blocking_jobs_no_longer_than_the_drain(self):
        # A job of a client that left runs on after the connections are gone. The
        # server returned to main() at once and the process waited for the job in
        # its exit (static destructors, after main's objects the job may use were
        # destroyed); now it waits at most the drain timeout, then exits.
        took, _, output = self.stop_after_a_client_left(("--drain-timeout", "1000"), b"/async/blocking?ms=4000")
        self.assertLess(took, 2.5, "the stop took %.2f s" % took)
        self.assertIn("abandoning 1 blocking jobs still running", output)

    def test_a_stop_lets_a_pool_handler_whose_client_left_finish(self):
        # Hybrid: the client of a handler on the pool leaves before the stop. The
        # stop waits for the handler (its connection stays until the handler ends),
        # and abandons nothing.
        _, since_request, output = self.stop_after_a_client_left(("--mpm", "hybrid", "--drain-timeout", "5000"),
                                                                 b"/sleep?ms=1500")
        self.assertNotIn("abandoning", output)
        # The handler began after the request was sent and sleeps 1.5 s: a stop that
        # waited for it ends no sooner, however late the test sent SIGTERM.
        self.assertGreaterEqual(since_request, 1.5, "the stop did not wait for the handler")

    def test_past_the_drain_timeout_the_wait_is_cancelled(self):
        outcome, stopped_after = self.run_stop(sleep_ms=4000, drain_ms=300)
        self.assertNotEqual(outcome, (200, b"slept 4000"))
        self.assertLess(stopped_after, 3.0)


class CoroutinesHybrid(harness.ServerTestCase):
    # One pool thread: coroutine handlers must not queue behind it.
    server_args = ("--mpm", "hybrid", "--workers", "1", "--threads", "1", "--pool-threads", "1")

    def test_coroutines_stay_on_the_loop(self):
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            t0 = time.monotonic()
            waits = [pool.submit(get, self.port, "/async/sleep?ms=250") for _ in range(8)]
            results = [f.result(timeout=10) for f in waits]
            elapsed = time.monotonic() - t0
        self.assertTrue(all(r[0] == 200 for r in results), results)
        self.assertLess(elapsed, 1.2, "eight 250 ms waits took %.2f s" % elapsed)


class CoroutinesPrefork(harness.ServerTestCase):
    # One connection at a time per process: a coroutine simply finishes before the next.
    server_args = ("--mpm", "prefork", "--workers", "2")

    def test_they_work_in_prefork_too(self):
        for ms in (5, 30):
            status, body, _ = get(self.port, "/async/sleep?ms=%d" % ms)
            self.assertEqual((status, body), (200, b"slept %d" % ms))
        self.assertEqual(get(self.port, "/async/fail")[0], 418)


if __name__ == "__main__":
    harness.main()
