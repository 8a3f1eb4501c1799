"""The hybrid model: event loops do the I/O, handlers run on a bounded thread pool.
Blocking handlers do not delay others; a full queue answers 503 with Retry-After at
once; a client leaving while its handler runs costs nothing; streamed writes are
buffered into one response; a graceful stop waits for running handlers."""
import concurrent.futures
import socket
import time
import unittest

import harness


get = harness.timed_get


class Hybrid(harness.ServerTestCase):
    server_args = ("--mpm", "hybrid", "--workers", "1", "--threads", "1", "--pool-threads", "32")

    def test_blocking_handlers_do_not_delay_a_fast_route(self):
        with concurrent.futures.ThreadPoolExecutor(max_workers=20) as slow:
            sleepers = [slow.submit(get, self.port, "/sleep?ms=1000") for _ in range(20)]
            time.sleep(0.1)  # all 20 are in their handlers now
            latencies = []
            for _ in range(50):
                status, _, body, took = get(self.port, "/plaintext")
                self.assertEqual((status, body), (200, b"Hello, World!"))
                latencies.append(took)
            results = [f.result(timeout=10) for f in sleepers]
        self.assertTrue(all(r[0] == 200 and r[2] == b"slept" for r in results))
        latencies.sort()
        p99 = latencies[int(len(latencies) * 0.99) - 1]
        self.assertLess(p99, 0.050 * harness.TIME_SCALE, "fast route p99 %.1f ms while 20 handlers sleep" % (p99 * 1000))
        # The fast requests ran while the sleepers slept (one loop thread: event would serialize them).
        self.assertLess(sum(latencies), 1.0 * harness.TIME_SCALE)

    def test_streamed_writes_are_buffered_into_one_response(self):
        status, headers, body, _ = get(self.port, "/stream")
        self.assertEqual((status, body), (200, b"one,two,three"))
        self.assertEqual(headers.get("Content-Length"), "13")

    def test_a_handler_that_throws_mid_stream_gets_a_clean_500(self):
        status, _, body, _ = get(self.port, "/stream-throw")
        self.assertEqual(status, 500)
        self.assertNotIn(b"boom", body)

    def test_client_leaving_while_its_handler_runs(self):
        for _ in range(5):
            s = socket.create_connection(("127.0.0.1", self.port))
            s.sendall(b"GET /sleep?ms=300 HTTP/1.1\r\nHost: h\r\n\r\n")
            time.sleep(0.05)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            s.close()  # reset while the handler sleeps
        time.sleep(0.5)
        self.assert_server_alive()
        status, _, body, _ = get(self.port, "/users/3")
        self.assertEqual((status, body), (200, b"user 3"))

    def test_pipelined_requests_answer_in_order(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        s.sendall(b"GET /sleep?ms=200 HTTP/1.1\r\nHost: h\r\n\r\n"
                  b"GET /users/1 HTTP/1.1\r\nHost: h\r\n\r\n"
                  b"GET /users/2 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
        s.close()
        self.assertEqual(data.count(b"HTTP/1.1 200 OK"), 3)
        self.assertLess(data.index(b"slept"), data.index(b"user 1"))
        self.assertLess(data.index(b"user 1"), data.index(b"user 2"))


class FullQueue(harness.ServerTestCase):
    server_args = ("--mpm", "hybrid", "--workers", "1", "--threads", "1", "--pool-threads", "1", "--pool-queue", "1")

    def test_a_full_queue_answers_503_with_retry_after_at_once(self):
        with concurrent.futures.ThreadPoolExecutor(max_workers=3) as slow:
            running = slow.submit(get, self.port, "/sleep?ms=2000")
            self.assertIsNot(harness.wait_for_sleeping_threads(self.server.proc.pid), False,
                             "the first request never reached the pool thread")
            # The one thread is taken. Of two more requests sent together, the one the
            # loop reads first waits in the queue's one place and the other is refused:
            # which is which does not matter, so no sleep has to order them.
            pair = [slow.submit(get, self.port, "/plaintext") for _ in range(2)]
            answers = sorted((f.result(timeout=10) for f in pair), key=lambda a: a[0])
            self.assertEqual([a[0] for a in answers], [200, 503])
            status, headers, body, took = answers[1]
            self.assertEqual(headers.get("Retry-After"), "1")
            # A refusal that waited for the thread would come as the first request ends,
            # about 2 s on: the bound leaves a second each side.
            self.assertLess(took, 1.0, "a refusal must not wait for a thread")
            self.assertEqual(running.result(timeout=10)[0], 200)
        self.assertEqual(get(self.port, "/plaintext")[0], 200)


class GracefulStop(unittest.TestCase):
    def test_stop_waits_for_a_running_handler(self):
        srv = harness.ServerProcess(harness.BINARIES["server"], ("--mpm", "hybrid", "--workers", "1"), threads=1)
        srv.start()
        try:
            with concurrent.futures.ThreadPoolExecutor(max_workers=1) as ex:
                f = ex.submit(get, srv.port, "/sleep?ms=1500")
                harness.wait_for_sleeping_threads(srv.proc.pid)  # the handler runs
                srv.proc.terminate()
                status, headers, body, _ = f.result(timeout=10)
            self.assertEqual((status, body), (200, b"slept"))
            self.assertEqual(headers.get("Connection"), "close")
            self.assertEqual(srv.proc.wait(timeout=10), 0)
            harness.assert_no_sanitizer_report(srv.output(limit=20000))
        finally:
            srv.stop()


if __name__ == "__main__":
    harness.main()
