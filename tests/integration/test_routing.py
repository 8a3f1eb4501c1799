"""Routing and the handler room, end to end: parameters, wildcards, 404/405, HEAD,
exceptions mapped to statuses, streaming, middleware, query decoding, and path
normalization that never lets a path climb above "/"."""

import harness
from harness import build_request


class Routing(harness.ServerTestCase):

    def test_named_parameter(self):
        r = self.get("/users/42")
        self.assertEqual((r.status, r.body), (200, b"user 42"))

    def test_named_parameter_is_decoded(self):
        r = self.get("/users/a%20b")
        self.assertEqual((r.status, r.body), (200, b"user a b"))

    def test_rest_wildcard(self):
        r = self.get("/files/a/b/c")
        self.assertEqual((r.status, r.body), (200, b"file a/b/c"))

    def test_parameter_does_not_span_segments(self):
        r = self.get("/users/42/extra")
        self.assertEqual(r.status, 404)

    def test_unknown_path_is_404(self):
        r = self.get("/no/such/thing")
        self.assertEqual(r.status, 404)

    def test_wrong_method_is_405_with_allow(self):
        with self.connect() as c:
            r = c.request("POST", "/plaintext", body=b"x")
            self.assertEqual(r.status, 405)
            allow = r.header_tokens("Allow")
            self.assertIn("get", allow, r.headers)
            self.assertIn("head", allow, r.headers)
            self.assertNotIn("post", allow)
            # A 405 is not a protocol error: the connection stays usable.
            r = c.request("GET", "/plaintext")
            self.assertEqual(r.status, 200)

    def test_head_has_length_but_no_body(self):
        with self.connect() as c:
            c.send(build_request("HEAD", "/plaintext"))
            r = c.read_response("HEAD")
            self.assertEqual(r.status, 200)
            self.assertEqual(r.header("Content-Length"), "13")
            self.assertTrue(r.header("Content-Type", "").startswith("text/plain"), r.headers)
            # If the server had sent a body, it would be read as this response's head.
            r = c.request("GET", "/plaintext")
            self.assertEqual((r.status, r.body), (200, b"Hello, World!"))
            c.assert_open(self)

    def test_head_on_streamed_route_sends_no_chunks(self):
        with self.connect() as c:
            c.send(build_request("HEAD", "/stream"))
            r = c.read_response("HEAD")
            self.assertEqual(r.status, 200)
            r = c.request("GET", "/users/3")
            self.assertEqual((r.status, r.body), (200, b"user 3"))

    def test_exception_is_500_without_leaking_and_server_goes_on(self):
        with self.connect() as c:
            r = c.request("GET", "/throw")
            self.assertEqual(r.status, 500)
            self.assertNotIn(b"boom", r.body, "internal error text must not reach the client")
        self.assert_server_alive()

    def test_many_exceptions_do_not_hurt(self):
        c = self.connect()
        try:
            for i in range(50):
                r = c.request("GET", "/throw")
                self.assertEqual(r.status, 500, "request %d" % i)
                if "close" in r.header_tokens("Connection"):
                    c.assert_closed(self)
                    c.close()
                    c = self.connect()
        finally:
            c.close()
        self.assert_server_alive()

    def test_http_error_status_and_message(self):
        r = self.get("/http-error")
        self.assertEqual(r.status, 418)
        self.assertIn(b"teapot", r.body)

    def test_streamed_response_is_chunked(self):
        with self.connect() as c:
            r = c.request("GET", "/stream")
            self.assertEqual(r.status, 200)
            self.assertTrue(r.chunked, "expected Transfer-Encoding: chunked: %r" % r.headers)
            self.assertIsNone(r.header("Content-Length"))
            self.assertEqual(r.body, b"one,two,three")
            r = c.request("GET", "/plaintext")
            self.assertEqual(r.status, 200)

    def test_streamed_response_to_http10_is_close_delimited(self):
        # An HTTP/1.0 client cannot read chunked coding.
        with self.connect() as c:
            c.send(b"GET /stream HTTP/1.0\r\n\r\n")
            r = c.read_response()
            self.assertEqual(r.status, 200)
            self.assertFalse(r.chunked, "chunked sent to an HTTP/1.0 client: %r" % r.headers)
            self.assertEqual(r.body, b"one,two,three")

    def test_stream_that_throws_is_truncated_not_ended(self):
        # A clean last-chunk would tell the client a half-written body is complete.
        with self.connect() as c:
            c.send(build_request("GET", "/stream-throw"))
            version, status, _, headers, _ = c.read_head()
            self.assertEqual(status, 200)
            closed, rest, _ = c.wait_closed(timeout=3)
            self.assertTrue(closed, "connection left open after a failed stream")
            self.assertIn(b"partial,", rest)
            self.assertFalse(rest.endswith(b"0\r\n\r\n"),
                             "a failed stream was terminated like a complete one: %r" % rest)
        self.assert_server_alive()

    def test_header_injection_from_handler_is_refused(self):
        with self.connect() as c:
            r = c.request("GET", "/set-header?value=a%0D%0AX-Injected:%20yes")
            self.assertEqual(r.status, 500)
            self.assertIsNone(r.header("X-Injected"), r.headers)
            self.assertNotIn(b"X-Injected", r.raw_head)
        r = self.get("/set-header?value=plain%20value")
        self.assertEqual((r.status, r.header("X-Echo")), (200, "plain value"))

    def test_middleware_header_on_handled_response(self):
        r = self.get("/plaintext")
        self.assertEqual(r.header("X-Middleware"), "1")

    def test_middleware_runs_for_unmatched_paths(self):
        r = self.get("/no/such/thing")
        self.assertEqual(r.status, 404)
        self.assertEqual(r.header("X-Middleware"), "1")

    def test_middleware_can_answer_without_handler(self):
        r = self.get("/private/x")
        self.assertEqual(r.status, 401)
        self.assertEqual(r.body, b"unauthorized")
        self.assertIsNone(r.header("X-Middleware"))

    def test_a_throwing_handler_keeps_the_middleware_headers(self):
        # Errors are mapped inside the chain: the middleware's after-next() header
        # is on the 500 too (it used to be wiped with the handler's response).
        r = self.get("/throw")
        self.assertEqual(r.status, 500)
        self.assertEqual(r.header("X-Middleware"), "1")
        self.assertEqual(r.header("X-Error-Page"), "500")
        self.assertEqual(r.body, b"Internal Server Error\n")

    def test_query_decoding(self):
        self.assertEqual(self.get("/query?name=a%20b+c").body, b"a b c")
        self.assertEqual(self.get("/query?x=1&name=%C3%A9t%C3%A9&name=second").body,
                         "été".encode())
        self.assertEqual(self.get("/query?name=").body, b"")
        self.assertEqual(self.get("/query").body, b"(none)")
        self.assertEqual(self.get("/query?other=1").body, b"(none)")
        self.assertEqual(self.get("/query?name=a%26b%3Dc").body, b"a&b=c")

    def test_header_lookup_is_case_insensitive(self):
        r = self.get("/header?name=x-custom", [("X-CUSTOM", "  padded value  ")])
        self.assertEqual(r.body, b"padded value")
        self.assertEqual(self.get("/header?name=X-Absent").body, b"(none)")

    # -- path normalization: the printed path never climbs above "/" ----------------

    def assert_safe_path(self, target, expected):
        r = self.get(target)
        self.assertEqual(r.status, 200, "%s -> %r" % (target, r))
        path = r.body.decode("utf-8", "replace")
        self.assertTrue(path.startswith("/"), "%s -> %r" % (target, path))
        self.assertNotIn("/../", path + "/", "%s -> %r" % (target, path))
        self.assertNotIn("/./", path + "/", "%s -> %r" % (target, path))
        self.assertNotIn("//", path, "%s -> %r" % (target, path))
        self.assertEqual(path, expected, target)

    def test_path_is_printed_as_is_when_already_normal(self):
        self.assert_safe_path("/path", "/path")
        self.assert_safe_path("/path/a/b", "/path/a/b")

    def test_dot_dot_cannot_climb_above_root(self):
        self.assert_safe_path("/../../path/x", "/path/x")
        self.assert_safe_path("/path/../../../../path/y", "/path/y")
        self.assert_safe_path("/path/a/b/../../c", "/path/c")

    def test_traversal_to_etc_passwd_leaves_the_route(self):
        # "/path/../../etc/passwd" normalizes to "/etc/passwd": no such route.
        r = self.get("/path/../../etc/passwd")
        self.assertIn(r.status, (400, 404), r)
        self.assertNotIn(b"..", r.body)

    def test_encoded_dot_dot_is_resolved(self):
        self.assert_safe_path("/path/%2e%2e/%2e%2e/path/z", "/path/z")
        self.assert_safe_path("/path/%2E%2E/%2e./.%2E/path/w", "/path/w")
        r = self.get("/path/%2e%2e/%2e%2e/x")
        self.assertIn(r.status, (400, 404), r)

    def test_encoded_slash_is_refused(self):
        # A proxy matching raw paths sees one segment where we would see two.
        for target in ("/path/a%2fb", "/path/a%2F..%2f..%2f..%2fpath%2fq"):
            r = self.get(target)
            self.assertEqual(r.status, 400, target)
            self.assertIn(b"encoded slash", r.body)

    def test_double_slashes_are_merged(self):
        self.assert_safe_path("/path//a///b", "/path/a/b")
        self.assert_safe_path("//path/x", "/path/x")

    def test_single_dot_segments_are_removed(self):
        self.assert_safe_path("/path/./a/./b", "/path/a/b")

    def test_nul_in_path_is_400(self):
        with self.connect() as c:
            c.send(build_request("GET", "/path/a%00b"))
            r = c.read_response()
            self.assertEqual(r.status, 400)

    def test_bad_percent_escape_is_400(self):
        for target in ("/path/%zz", "/path/%4", "/path/%"):
            with self.subTest(target):
                r = self.get(target)
                self.assertEqual(r.status, 400, r)

    def test_fragment_is_not_part_of_the_path(self):
        # '#' cannot appear in a request-target (RFC 9112 3.2): refuse it or drop the
        # fragment, but never hand "1#frag" to the handler as the parameter.
        r = self.get("/users/1#frag")
        self.assertTrue(r.status == 400 or (r.status == 200 and r.body == b"user 1"), r)

    def test_absolute_form_target(self):
        with self.connect() as c:
            c.send(b"GET http://x/users/7 HTTP/1.1\r\nHost: x\r\n\r\n")
            r = c.read_response()
            self.assertEqual((r.status, r.body), (200, b"user 7"))
            c.send(b"GET http://x/query?name=abs HTTP/1.1\r\nHost: x\r\n\r\n")
            r = c.read_response()
            self.assertEqual((r.status, r.body), (200, b"abs"))

    def test_query_does_not_affect_routing(self):
        r = self.get("/users/9?x=1")
        self.assertEqual((r.status, r.body), (200, b"user 9"))



class Ergonomics(harness.ServerTestCase):
    """What a handler author expects from drogon, crow or Rails: typed parameters,
    JSON values both ways, controller methods and handler classes as routes,
    per-request values from middleware, an error page inside the chain."""

    def post_json(self, target, body):
        with self.connect() as c:
            return c.request("POST", target, [("Content-Type", "application/json")], body)

    def test_typed_route_parameter(self):
        self.assertEqual(self.get("/typed/42").body, b"42 - -")
        self.assertEqual(self.get("/typed/-7?page=3&draft=true").body, b"-7 3 draft")
        self.assertEqual(self.get("/typed/7?draft=0").body, b"7 - final")

    def test_a_parameter_that_does_not_convert_is_404(self):
        for bad in ("abc", "12x", "99999999999999999999999", "1.5", "%20"):
            r = self.get("/typed/" + bad)
            self.assertEqual(r.status, 404, bad)
            self.assertEqual(r.header("X-Error-Page"), "404")

    def test_a_query_value_that_does_not_convert_is_400(self):
        # (A blank value is no value: what a GET form's empty field sends.)
        self.assertEqual(self.get("/typed/7?page=&draft=on").body, b"7 - draft")
        for q in ("page=x", "page=1e3", "draft=yes"):
            r = self.get("/typed/1?" + q)
            self.assertEqual(r.status, 400, q)
            self.assertIn(b"query parameter", r.body)

    def test_json_values_in_and_out(self):
        r = self.post_json("/items", b'{"name": "pen", "qty": 2}')
        self.assertEqual(r.status, 201)
        self.assertEqual(r.header("Content-Type"), "application/json")
        self.assertEqual(r.body, b'{"name":"pen","qty":4}')
        # Invalid UTF-8 in a value is replaced, not a failed response.
        r = self.get("/json-value")
        self.assertEqual((r.status, r.body), (200, '{"bad_utf8":"a\ufffd","ok":true}'.encode()))

    def test_a_json_body_that_does_not_fit_is_400_saying_why(self):
        # kiln::json_field: a number that is not an integer, or does not fit an int,
        # is refused (nlohmann alone stored 3 and 1).
        for body, why in ((b'{"name": "pen"}', b"key 'qty' not found"),
                          (b'{"name": "pen", "qty": "two"}', b"'qty' must be an integer"),
                          (b'{"name": "pen", "qty": 3.9}', b"'qty' must be an integer"),
                          (b'{"name": "pen", "qty": 4294967297}', b"'qty' must be an integer from -2147483648"),
                          (b'{"name": "pen", "qty": -2147483649}', b"'qty' must be an integer")):
            r = self.post_json("/items", body)
            self.assertEqual(r.status, 400, body)
            self.assertIn(why, r.body)

    def test_a_json_body_too_large_to_parse_is_refused(self):
        # 3 bytes of "{}," become a value and a map of about 80: 200,000 values at most
        # (before, 8 MiB of them took about 200 MB, parsed on the event loop).
        r = self.post_json("/items", b"[" + b"{}," * 250000 + b"{}]")
        self.assertEqual(r.status, 413)
        self.assertIn(b"too many values", r.body)
        r = self.post_json("/items", b"[" * 300 + b"]" * 300)
        self.assertEqual(r.status, 400)
        self.assertIn(b"nested too deeply", r.body)
        self.assertEqual(self.post_json("/items", b'{"name": "pen", "qty": 2}').status, 201)

    def test_a_controller_is_made_for_each_request(self):
        with self.connect() as c:  # one connection: one process, one loop
            for _ in range(5):
                self.assertEqual(c.request("GET", "/items/5").body, b'{"name":"item5","qty":1}')

    def test_controller_factory_and_handler_class(self):
        self.assertEqual(self.get("/greet/ada").body, b"bonjour ada")
        self.assertEqual(self.get("/hello-class").body, b"hello from a handler class")

    def test_a_value_from_middleware_reaches_the_handler_and_not_the_next_request(self):
        with self.connect() as c:
            self.assertEqual(c.request("GET", "/whoami", [("X-User", "ada")]).body, b"ada")
            self.assertEqual(c.request("GET", "/whoami").body, b"(nobody)")

    def test_error_page_for_unknown_paths_and_a_failing_error_page(self):
        r = self.get("/no/such/page")
        self.assertEqual((r.status, r.header("X-Error-Page"), r.header("X-Middleware")), (404, "404", "1"))
        r = self.get("/error-page-throws")
        self.assertEqual((r.status, r.body), (409, b"conflict\n"))
        self.assertIsNone(r.header("X-Error-Page"))


if __name__ == "__main__":
    harness.main()
