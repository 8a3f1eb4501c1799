"""The hello example, end to end: its three routes answer exactly, the /hello page
(a kilnc template, examples/hello/views/hello.html) escapes the name, and its command line answers --help, unknown flags and bad values with
the documented exit statuses."""

import subprocess

import harness
from harness import IMF_FIXDATE

FLAG_TIMEOUT = 10  # seconds: a binary that starts serving on a bad flag is a failure


class Hello(harness.ServerTestCase):
    binary_key = "hello"

    def assert_common_headers(self, r):
        self.assertEqual(r.header("Server"), "kiln")
        self.assertRegex(r.header("Date", ""), IMF_FIXDATE)

    def test_plaintext(self):
        r = self.get("/plaintext")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.body, b"Hello, World!")
        self.assertEqual(r.header("Content-Length"), "13")
        self.assertEqual(r.header("Content-Type", "").split(";")[0].strip(), "text/plain")
        self.assert_common_headers(r)

    def test_json(self):
        r = self.get("/json")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.body, b'{"message":"Hello, World!"}')
        self.assertEqual(r.header("Content-Type", "").split(";")[0].strip(), "application/json")
        self.assert_common_headers(r)

    def heading(self, r):
        """The page's one <h1> line, after checking the page around it."""
        self.assertTrue(r.body.startswith(b"<!DOCTYPE html>\n<html>"), r.body)
        self.assertTrue(r.body.endswith(b"</body></html>\n"), r.body)
        lines = [line for line in r.body.split(b"\n") if line.startswith(b"<h1>")]
        self.assertEqual(len(lines), 1, r.body)
        return lines[0]

    def test_hello_with_name(self):
        r = self.get("/hello?name=John")
        self.assertEqual(r.status, 200)
        self.assertEqual(self.heading(r), b"<h1>hello John</h1>")
        self.assertIn(b"<title>hello</title>", r.body)
        self.assertEqual(r.header("Content-Type", ""), "text/html; charset=utf-8")
        self.assertEqual(r.header("Content-Length"), str(len(r.body)))

    def test_hello_escapes_html(self):
        r = self.get("/hello?name=%3Cscript%3Ealert(1)%3C/script%3E")
        self.assertEqual(r.status, 200)
        self.assertNotIn(b"<script>", r.body)
        self.assertIn(b"&lt;script&gt;", r.body)
        self.assertEqual(self.heading(r), b"<h1>hello &lt;script&gt;alert(1)&lt;/script&gt;</h1>")

    def test_hello_escapes_the_klone_name(self):
        # The issue's case: <script>"&' as the name, every special character escaped.
        r = self.get("/hello?name=%3Cscript%3E%22%26%27")
        self.assertEqual(r.status, 200)
        self.assertEqual(self.heading(r), b"<h1>hello &lt;script&gt;&quot;&amp;&#39;</h1>")

    def test_hello_name_with_plus_and_utf8(self):
        r = self.get("/hello?name=J%C3%BCrgen+M")
        self.assertEqual(self.heading(r), "<h1>hello Jürgen M</h1>".encode())

    def test_hello_escapes_quotes_and_ampersand(self):
        r = self.get("/hello?name=a%26b%22c%27d")
        self.assertNotIn(b'"c', r.body)
        self.assertIn(b"a&amp;b", r.body)

    def test_hello_without_name(self):
        r = self.get("/hello")
        self.assertEqual(r.status, 200)
        self.assertIn(b"no name given", r.body)

    def test_unknown_route_is_404(self):
        self.assertEqual(self.get("/nothing-here").status, 404)

    # -- command line -------------------------------------------------------------

    def run_flags(self, *flags):
        return subprocess.run([harness.BINARIES["hello"], *flags], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=FLAG_TIMEOUT)

    def test_help_exits_0_with_usage(self):
        p = self.run_flags("--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        text = (p.stdout + p.stderr).decode("utf-8", "replace")
        self.assertIn("usage", text.lower())
        self.assertIn("--port", text)

    def test_unknown_flag_exits_2_naming_it(self):
        p = self.run_flags("--bogus")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("--bogus", (p.stdout + p.stderr).decode("utf-8", "replace"))

    def test_non_numeric_port_exits_2(self):
        p = self.run_flags("--port", "notanumber")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("notanumber", (p.stdout + p.stderr).decode("utf-8", "replace"))

    def test_out_of_range_port_exits_2(self):
        p = self.run_flags("--port", "70000")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)

    def test_port_flag_without_value_exits_2(self):
        p = self.run_flags("--port")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)

    def test_sigterm_stops_gracefully_with_status_0(self):
        server = harness.ServerProcess(harness.BINARIES["hello"])
        try:
            server.start()
            with harness.RawConnection(server.port) as c:
                self.assertEqual(c.request("GET", "/plaintext").status, 200)
        finally:
            status = server.stop()
        self.assertEqual(status, 0, "exit status after SIGTERM; output:\n" + server.output())


if __name__ == "__main__":
    harness.main()
