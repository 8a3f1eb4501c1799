"""Coroutine handlers over real sockets: while one waits, its loop serves others;
pipelined requests behind it wait and are answered in order; a client that leaves
while its handler waits cancels the wait and costs nothing; the handler deadline
answers 504; exceptions map as for plain handlers. In the event MPM with one loop
(where a blocking handler would stall everyone) and in the hybrid MPM (where
coroutine handlers stay on their loop instead of going to the pool)."""
import concurrent.futures
import http.client
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


class CoroutinesOneLoop(harness.ServerTestCase):
    server_args = ("--workers", "0", "--threads", "1", "--handler-timeout", "400")

    def stats(self):
        status, body, _ = get(self.port, "/async/stats")
        self.assertEqual(status, 200)
        m = re.match(rb"done=(\d+) cancelled=(\d+) blocking_ran=(\d+)", body)
        return int(m.group(1)), int(m.group(2))

    def blocking_ran(self):
        status, body, _ = get(self.port, "/async/stats")
        return int(re.search(rb"blocking_ran=(\d+)", body).group(1))

    def test_waiting_handlers_share_one_loop(self):
        with concurrent.futures.ThreadPoolExecutor(max_workers=10) as pool:
            t0 = time.monotonic()
            waits = [pool.submit(get, self.port, "/async/sleep?ms=300") for _ in range(10)]
            time.sleep(0.05)
            status, body, took = get(self.port, "/plaintext")  # the loop is free meanwhile
            self.assertEqual((status, body), (200, b"Hello, World!"))
            self.assertLess(took, 0.25)  # behind a blocked loop it would wait for the sleeps
            results = [f.result(timeout=10) for f in waits]
            elapsed = time.monotonic() - t0
        self.assertTrue(all(r[0] == 200 and r[1] == b"slept 300" for r in results), results)
        self.assertLess(elapsed, 1.5, "ten 300 ms waits on one loop took %.2f s" % elapsed)

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

    def test_blocking_work_runs_off_the_loop_and_the_handler_comes_back_to_it(self):
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            jobs = [pool.submit(get, self.port, "/async/blocking?ms=300") for _ in range(2)]
            time.sleep(0.05)
            status, body, took = get(self.port, "/plaintext")  # the one loop is free meanwhile
            self.assertEqual((status, body), (200, b"Hello, World!"))
            self.assertLess(took, 0.25)
            results = [f.result(timeout=10) for f in jobs]
        for status, body, took in results:
            self.assertEqual((status, body), (200, b"slept 300 elsewhere, back on the loop"))
        status, body, _ = get(self.port, "/async/blocking?ms=1&fail=1")  # its exception, mapped as usual
        self.assertEqual((status, body), (409, b"the job failed\n"))

    def test_a_client_that_leaves_during_blocking_work_cancels_after_it(self):
        done0, cancelled0 = self.stats()
        ran0 = self.blocking_ran()
        s = socket.create_connection(("127.0.0.1", self.port))
        s.sendall(b"GET /async/blocking?ms=300 HTTP/1.1\r\nHost: h\r\n\r\n")
        time.sleep(0.05)
        s.close()
        time.sleep(0.1)
        self.assertEqual(self.stats()[1], cancelled0, "cancelled before the job ended (its locals still in use)")
        deadline = time.monotonic() + 3
        while self.stats()[1] < cancelled0 + 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(self.stats(), (done0, cancelled0 + 1))
        self.assertEqual(self.blocking_ran(), ran0 + 1)
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
            s.sendall(b"GET /async/blocking?ms=500 HTTP/1.1\r\nHost: h\r\n\r\n")
            socks.append(s)
        time.sleep(0.1)
        for s in socks:
            s.close()
        time.sleep(1.5)  # the jobs that began have ended
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


class CoroutinesAtStop(unittest.TestCase):
    """A graceful stop waits for a handler that waits; past the drain timeout the
    handler is cancelled and the process still exits cleanly (no leak under ASan)."""

    def run_stop(self, sleep_ms, drain_ms):
        srv = harness.ServerProcess(harness.BINARIES["server"],
                                    ("--workers", "0", "--threads", "1", "--drain-timeout", str(drain_ms)))
        srv.start()
        try:
            with concurrent.futures.ThreadPoolExecutor(max_workers=1) as ex:
                f = ex.submit(get, srv.port, "/async/sleep?ms=%d" % sleep_ms)
                time.sleep(0.2)
                t0 = time.monotonic()
                srv.proc.terminate()
                try:
                    outcome = f.result(timeout=10)[:2]
                except (ConnectionError, http.client.HTTPException):
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
        """A server with `args` gets `target` from a client that leaves at once, then
        SIGTERM: (seconds the stop took, the server's output). It must exit 0."""
        srv = harness.ServerProcess(harness.BINARIES["server"], ("--workers", "0", "--threads", "1") + args)
        srv.start()
        try:
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: h\r\n\r\n")
            time.sleep(0.2)
            s.close()
            time.sleep(0.1)
            t0 = time.monotonic()
            srv.proc.terminate()
            self.assertEqual(srv.proc.wait(timeout=10), 0)
            return time.monotonic() - t0, srv.output()
        finally:
            srv.stop()

    def test_a_stop_waits_for_blocking_jobs_no_longer_than_the_drain(self):
        # A job of a client that left runs on after the connections are gone. The
        # server returned to main() at once and the process waited for the job in
        # its exit (static destructors, after main's objects the job may use were
        # destroyed); now it waits at most the drain timeout, then exits.
        took, output = self.stop_after_a_client_left(("--drain-timeout", "1000"), b"/async/blocking?ms=4000")
        self.assertLess(took, 2.5, "the stop took %.2f s" % took)
        self.assertIn("abandoning 1 blocking jobs still running", output)

    def test_a_stop_lets_a_pool_handler_whose_client_left_finish(self):
        # Hybrid: the client of a handler on the pool leaves before the stop. The
        # stop waits for the handler (its connection stays until the handler ends),
        # and abandons nothing.
        took, output = self.stop_after_a_client_left(("--mpm", "hybrid", "--drain-timeout", "5000"), b"/sleep?ms=1500")
        self.assertNotIn("abandoning", output)
        self.assertGreater(took, 0.8, "the stop did not wait for the handler")

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
