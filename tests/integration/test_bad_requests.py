"""Hostile and malformed requests: each gets its exact status, the connection is
closed after the error response, and the server goes on serving everyone else."""

import harness
from harness import build_request

H = b"Host: x\r\n"

# (name, request bytes, status). Bytes are written in full; the server may answer
# before reading all of them.
CASES = [
    ("content_length_and_transfer_encoding",
     b"POST /echo HTTP/1.1\r\n" + H + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
     b"0\r\n\r\n", 400),
    ("transfer_encoding_and_content_length",
     b"POST /echo HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
     b"0\r\n\r\n", 400),
    ("two_different_content_lengths",
     b"POST /echo HTTP/1.1\r\n" + H + b"Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400),
    ("content_length_list_of_different_values",
     b"POST /echo HTTP/1.1\r\n" + H + b"Content-Length: 5, 6\r\n\r\nhello!", 400),
    ("negative_content_length",
     b"POST /echo HTTP/1.1\r\n" + H + b"Content-Length: -1\r\n\r\n", 400),
    ("plus_signed_content_length",
     b"POST /echo HTTP/1.1\r\n" + H + b"Content-Length: +5\r\n\r\nhello", 400),
    ("non_numeric_content_length",
     b"POST /echo HTTP/1.1\r\n" + H + b"Content-Length: abc\r\n\r\n", 400),
    ("hex_content_length",
     b"POST /echo HTTP/1.1\r\n" + H + b"Content-Length: 0x10\r\n\r\n", 400),
    ("empty_content_length",
     b"POST /echo HTTP/1.1\r\n" + H + b"Content-Length: \r\n\r\n", 400),
    ("overflowing_content_length",
     b"POST /echo HTTP/1.1\r\n" + H + b"Content-Length: 99999999999999999999999\r\n\r\n", 400),
    ("transfer_encoding_gzip_only",
     b"POST /echo HTTP/1.1\r\n" + H + b"Transfer-Encoding: gzip\r\n\r\n", 400),
    ("transfer_encoding_gzip_then_chunked",
     b"POST /echo HTTP/1.1\r\n" + H + b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
    ("invalid_chunk_size",
     b"POST /echo HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", 400),
    ("chunk_size_with_sign",
     b"POST /echo HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n", 400),
    ("chunk_data_longer_than_size",
     b"POST /echo HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n", 400),
    ("space_in_header_name",
     b"GET /plaintext HTTP/1.1\r\n" + H + b"Bad Name: v\r\n\r\n", 400),
    ("space_before_colon",
     b"GET /plaintext HTTP/1.1\r\n" + H + b"X-Name : v\r\n\r\n", 400),
    ("control_char_in_header_name",
     b"GET /plaintext HTTP/1.1\r\n" + H + b"X-\x01Name: v\r\n\r\n", 400),
    ("empty_header_name",
     b"GET /plaintext HTTP/1.1\r\n" + H + b": v\r\n\r\n", 400),
    ("nul_in_header_value",
     b"GET /plaintext HTTP/1.1\r\n" + H + b"X-A: a\x00b\r\n\r\n", 400),
    ("obs_fold",
     b"GET /plaintext HTTP/1.1\r\n" + H + b"X-A: a\r\n  folded\r\n\r\n", 400),
    ("obs_fold_tab",
     b"GET /plaintext HTTP/1.1\r\n" + H + b"X-A: a\r\n\tfolded\r\n\r\n", 400),
    ("bare_cr_in_header",
     b"GET /plaintext HTTP/1.1\r\n" + H + b"X-A: a\rb\r\n\r\n", 400),
    ("bare_cr_line_end",
     b"GET /plaintext HTTP/1.1\r\n" + H + b"X-A: a\r\r\n\r\n", 400),
    ("bare_lf_line_end",
     b"GET /plaintext HTTP/1.1\r\n" + H + b"X-A: a\n\r\n", 400),
    ("unsupported_version_2_0",
     b"GET /plaintext HTTP/2.0\r\n" + H + b"\r\n", 505),
    ("garbage_version",
     b"GET /plaintext HTTP/x.y\r\n" + H + b"\r\n", 400),
    ("lowercase_protocol_name",
     b"GET /plaintext http/1.1\r\n" + H + b"\r\n", 400),
    ("missing_version",
     b"GET /plaintext\r\n" + H + b"\r\n", 400),
    ("missing_host_on_http11",
     b"GET /plaintext HTTP/1.1\r\n\r\n", 400),
    ("duplicate_host",
     b"GET /plaintext HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
    ("invalid_host_value_with_space",  # RFC 9112 3.2: invalid Host value -> 400
     b"GET /plaintext HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
    ("invalid_host_value_with_slash",
     b"GET /plaintext HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
    ("space_in_trailer_name",
     b"POST /echo HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n"
     b"X Y: v\r\n\r\n", 400),
    ("obs_fold_in_trailer",
     b"POST /echo HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n"
     b"X: a\r\n b\r\n\r\n", 400),
    ("chunk_lines_ended_by_bare_lf",
     b"POST /echo HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n3\nabc\n0\n\n", 400),
    ("request_line_too_long",
     b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n" + H + b"\r\n", 414),
    ("header_section_too_large",
     b"GET /plaintext HTTP/1.1\r\n" + H
     + b"".join(b"X-Big-%d: %s\r\n" % (i, b"v" * 1000) for i in range(70)) + b"\r\n", 431),
    ("too_many_header_fields",
     b"GET /plaintext HTTP/1.1\r\n" + H
     + b"".join(b"X-H%d: v\r\n" % i for i in range(120)) + b"\r\n", 431),
    ("non_ascii_byte_in_target",
     b"GET /caf\xc3\xa9 HTTP/1.1\r\n" + H + b"\r\n", 400),
    ("control_byte_in_target",
     b"GET /a\x01b HTTP/1.1\r\n" + H + b"\r\n", 400),
    ("two_spaces_in_request_line",
     b"GET  /plaintext HTTP/1.1\r\n" + H + b"\r\n", 400),
    ("non_token_method",
     b"G(T /plaintext HTTP/1.1\r\n" + H + b"\r\n", 400),
]


class BadRequests(harness.ServerTestCase):

    def check_rejected(self, name, data, status):
        with self.connect() as c:
            c.send(data, tolerate_close=True)
            r = c.read_response(timeout=5)
            self.assertEqual(r.status, status, "%s: %r" % (name, data[:120]))
            c.assert_closed(self, msg="after %s" % name)
            self.assertIn("close", r.header_tokens("Connection"),
                          "%s: an error response that closes should say Connection: close" % name)

    def test_each_bad_request_gets_its_status_and_close(self):
        for name, data, status in CASES:
            with self.subTest(name):
                self.check_rejected(name, data, status)
                # The server keeps serving everyone else.
                self.assert_server_alive()

    def test_malformed_request_after_a_good_one(self):
        with self.connect() as c:
            c.send(build_request("GET", "/users/1")
                   + b"GET /plaintext HTTP/1.1\r\n" + H + b"Bad Name: v\r\n\r\n")
            r1 = c.read_response()
            self.assertEqual((r1.status, r1.body), (200, b"user 1"))
            r2 = c.read_response()
            self.assertEqual(r2.status, 400)
            c.assert_closed(self, msg="after the malformed second request")
        self.assert_server_alive()

    def test_smuggling_attempt_is_not_answered_twice(self):
        # CL+TE is refused outright, so the hidden second request is never served.
        with self.connect() as c:
            c.send(b"POST /echo HTTP/1.1\r\n" + H + b"Content-Length: 44\r\n"
                   b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                   b"GET /users/666 HTTP/1.1\r\n" + H + b"\r\n")
            r = c.read_response()
            self.assertEqual(r.status, 400)
            c.assert_closed(self)

    def test_error_body_does_not_reflect_the_request(self):
        with self.connect() as c:
            c.send(b"GET /plaintext HTTP/1.1\r\n" + H + b"<script>x</script> : v\r\n\r\n")
            r = c.read_response()
            self.assertEqual(r.status, 400)
            self.assertNotIn(b"<script>", r.body)

    def test_leading_empty_lines_are_skipped(self):
        # RFC 9112 2.2: at least one empty line before a request line is ignored.
        with self.connect() as c:
            c.send(b"\r\n" + build_request("GET", "/plaintext"))
            r = c.read_response()
            self.assertEqual((r.status, r.body), (200, b"Hello, World!"))

    def test_http10_without_host_is_accepted(self):
        with self.connect() as c:
            c.send(b"GET /plaintext HTTP/1.0\r\n\r\n")
            r = c.read_response()
            self.assertEqual((r.status, r.body), (200, b"Hello, World!"))

    def test_many_bad_connections_do_not_hurt_the_server(self):
        for i in range(50):
            with self.connect() as c:
                c.send(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(64)),
                       tolerate_close=True)
                closed, _, _ = c.wait_closed(timeout=3)
                self.assertTrue(closed, "TLS-looking garbage %d: not closed" % i)
        self.assert_server_alive()


if __name__ == "__main__":
    harness.main()
