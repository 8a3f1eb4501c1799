"""A request that arrives one byte per TCP segment is parsed exactly like one that
arrives in a single send: the parser resumes correctly at every byte boundary."""

import harness
from harness import build_request, chunked

PAUSE = 0.001  # seconds between one-byte sends (with TCP_NODELAY: one segment each)


class ByteByByte(harness.ServerTestCase):

    def both_ways(self, data, method="GET", count=1):
        """Responses to `data` sent at once and sent one byte at a time."""
        with self.connect() as c:
            c.send(data)
            whole = [c.read_response(method) for _ in range(count)]
        with self.connect(nodelay=True) as c:
            c.send_in_pieces(data, range(1, len(data)), pause=PAUSE)
            split = [c.read_response(method) for _ in range(count)]
            c.assert_open(self, msg="after the byte-by-byte request")
        return whole, split

    def assert_same(self, whole, split):
        for a, b in zip(whole, split):
            self.assertEqual(a.status, b.status)
            self.assertEqual(a.body, b.body)
            strip = {"date"}  # the only header allowed to differ between the two
            self.assertEqual([h for h in a.headers if h[0].lower() not in strip],
                             [h for h in b.headers if h[0].lower() not in strip])

    def test_get_one_byte_at_a_time(self):
        data = build_request("GET", "/header?name=X-Test", [("X-Test", "some value"),
                                                            ("Accept", "*/*")])
        whole, split = self.both_ways(data)
        self.assertEqual(whole[0].body, b"some value")
        self.assert_same(whole, split)

    def test_chunked_post_one_byte_at_a_time(self):
        body = b"The quick brown fox jumps over the lazy dog"
        data = (b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                + b"4;ext=v\r\n" + body[:4] + b"\r\n"
                + chunked(body[4:], (5, 11))[:-5]
                + b"0\r\nX-Trailer: yes\r\n\r\n")
        whole, split = self.both_ways(data, "POST")
        self.assertEqual(whole[0].status, 200)
        self.assertEqual(whole[0].body, body)
        self.assert_same(whole, split)

    def test_content_length_post_one_byte_at_a_time(self):
        body = bytes(range(256))
        whole, split = self.both_ways(build_request("POST", "/echo", body=body), "POST")
        self.assertEqual(whole[0].body, body)
        self.assert_same(whole, split)

    def test_two_pipelined_requests_one_byte_at_a_time(self):
        data = build_request("GET", "/users/12") + build_request("GET", "/files/a/b")
        whole, split = self.both_ways(data, count=2)
        self.assertEqual([r.body for r in whole], [b"user 12", b"file a/b"])
        self.assert_same(whole, split)

    def test_bad_request_one_byte_at_a_time(self):
        data = b"GET /plaintext HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n"
        with self.connect(nodelay=True) as c:
            try:
                c.send_in_pieces(data, range(1, len(data)), pause=PAUSE)
            except (BrokenPipeError, ConnectionResetError):
                pass  # rejected as soon as the bare CR arrived: allowed
            r = c.read_response(timeout=5)
            self.assertEqual(r.status, 400)
            c.assert_closed(self)


if __name__ == "__main__":
    harness.main()
