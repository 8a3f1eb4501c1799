"""Pipelining: many requests written before any response is read are answered
completely and in order, however the bytes are split across TCP sends."""

import random
import time

import harness
from harness import build_request, chunked

SEED = 20240611


def pipeline_batch(rng, n=16):
    """n mixed requests and the (method, expected status, expected body) of each."""
    requests, expected = [], []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            requests.append(build_request("GET", "/plaintext"))
            expected.append(("GET", 200, b"Hello, World!"))
        elif kind == 1:
            uid = rng.randrange(1, 10**6)
            requests.append(build_request("GET", "/users/%d" % uid))
            expected.append(("GET", 200, b"user %d" % uid))
        elif kind == 2:
            body = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 3000)))
            requests.append(build_request("POST", "/echo", [("Content-Type", "application/x")], body))
            expected.append(("POST", 200, body))
        else:
            body = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 2000)))
            requests.append(build_request("POST", "/echo", [("Transfer-Encoding", "chunked")],
                                          chunked(body, (rng.randrange(1, 700),))))
            expected.append(("POST", 200, body))
    return requests, expected


class Pipelining(harness.ServerTestCase):

    def check_responses(self, conn, expected, label):
        for i, (method, status, body) in enumerate(expected):
            r = conn.read_response(method)
            self.assertEqual(r.status, status, "%s: response %d" % (label, i))
            self.assertEqual(r.body, body, "%s: response %d body (out of order?)" % (label, i))
            if method == "POST":
                self.assertEqual(r.header("X-Body-Length"), str(len(body)), "%s: %d" % (label, i))
        conn.assert_open(self, msg="after the pipelined batch (%s)" % label)

    def test_16_requests_in_one_send(self):
        requests, expected = pipeline_batch(random.Random(SEED))
        with self.connect() as c:
            c.send(b"".join(requests))
            self.check_responses(c, expected, "one send")

    def test_16_requests_split_at_random_positions(self):
        for round_no in range(10):
            rng = random.Random(SEED + round_no)
            requests, expected = pipeline_batch(rng)
            data = b"".join(requests)
            cuts = [rng.randrange(1, len(data)) for _ in range(rng.randrange(2, 40))]
            with self.subTest(seed=SEED + round_no):
                with self.connect(nodelay=True) as c:
                    c.send_in_pieces(data, cuts, pause=0.002)
                    self.check_responses(c, expected, "seed %d cuts %s" % (SEED + round_no, sorted(cuts)))

    def test_pipelined_responses_larger_than_the_output_limit(self):
        # Regression: 100 pipelined 50 kB responses pass the connection's pending
        # output limit; the server pauses reading, and must resume the requests
        # already buffered once the client drains (edge-triggered: no new event
        # comes for bytes that were already read).
        n, size = 100, 50000
        with self.connect() as c:
            c.send(b"".join(build_request("GET", "/big?n=%d" % size) for _ in range(n)))
            for i in range(n):
                r = c.read_response(timeout=10)
                self.assertEqual((r.status, len(r.body)), (200, size), "response %d" % i)
            c.assert_open(self)

    def test_pipelined_flood_read_late(self):
        n, size = 300, 50000
        with self.connect() as c:
            c.send(b"".join(build_request("GET", "/big?n=%d" % size) for _ in range(n)))
            time.sleep(1.0)
            for i in range(n):
                r = c.read_response(timeout=10)
                self.assertEqual((r.status, len(r.body)), (200, size), "response %d" % i)

    def test_pipelined_head_then_get(self):
        # A HEAD response has no body: the GET after it must start right at its end.
        with self.connect() as c:
            c.send(build_request("HEAD", "/plaintext") + build_request("GET", "/users/5"))
            r1 = c.read_response("HEAD")
            r2 = c.read_response()
            self.assertEqual((r1.status, r1.body), (200, b""))
            self.assertEqual((r2.status, r2.body), (200, b"user 5"))

    def test_pipelined_stream_and_error_keep_order(self):
        with self.connect() as c:
            c.send(build_request("GET", "/stream") + build_request("GET", "/nope")
                   + build_request("GET", "/http-error") + build_request("GET", "/plaintext"))
            r = [c.read_response() for _ in range(4)]
            self.assertEqual([x.status for x in r], [200, 404, 418, 200])
            self.assertEqual(r[0].body, b"one,two,three")
            self.assertEqual(r[3].body, b"Hello, World!")

    def test_pipelined_behind_a_slow_handler(self):
        # The second response must wait for the first, not overtake it.
        with self.connect() as c:
            c.send(build_request("GET", "/sleep?ms=200") + build_request("GET", "/plaintext"))
            r1 = c.read_response()
            r2 = c.read_response()
            self.assertEqual(r1.body, b"slept")
            self.assertEqual(r2.body, b"Hello, World!")


if __name__ == "__main__":
    harness.main()
