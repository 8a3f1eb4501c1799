"""The blog example (examples/blog), end to end over HTTP: a client with a cookie jar
signs up, creates, lists, shows, edits and deletes posts through the same forms a
browser gets, scraping the CSRF token from them. Accounts: writing needs a log-in,
only a post's author may change it (403), wrong passwords are throttled (429), a
password change logs out the account's other sessions. Validation errors keep the user's input
(422), a form without its token is refused (403), a missing post gets the 404 page,
the index pages by 10 newest first, and hostile titles are stored verbatim and shown
escaped. Each server runs on its own temporary database (BLOG_DB)."""

import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from urllib.parse import urlencode

import harness
from harness import build_request

TOKEN = re.compile(rb'name="_csrf" value="([0-9a-f]+)"')
START_TIMEOUT = 15  # seconds, for the runs that are expected to fail at start


ON_POSTGRES = os.environ.get("KILN_BLOG_POSTGRES") == "1"


def blog_binary():
    return harness.BINARIES["blog"]


class Client:
    """A tiny browser: keeps the cookies the server sets, sends forms urlencoded,
    one fresh connection per request (so requests spread over worker processes)."""

    def __init__(self, port, headers=()):
        self.port = port
        self.cookies = {}
        self.headers = list(headers)  # sent with every request

    def request(self, method, target, fields=None, headers=()):
        hdrs = self.headers + list(headers)
        if self.cookies:
            hdrs.append(("Cookie", "; ".join("%s=%s" % kv for kv in self.cookies.items())))
        body = None
        if fields is not None:
            body = urlencode(fields).encode()
            hdrs.append(("Content-Type", "application/x-www-form-urlencoded"))
        with harness.RawConnection(self.port) as c:
            c.send(build_request(method, target, hdrs, body))
            r = c.read_response(method)
        for v in r.header_all("set-cookie"):
            name, _, value = v.split(";")[0].partition("=")
            if "max-age=0" in v.lower():
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value
        return r

    def get(self, target):
        return self.request("GET", target)

    def post(self, target, fields):
        return self.request("POST", target, fields)

    def token(self, target="/posts/new"):
        """The CSRF token from the form at `target` (the session cookie comes with it)."""
        r = self.get(target)
        assert r.status == 200, r
        m = TOKEN.search(r.body)
        assert m, "no CSRF field in %s: %r" % (target, r.body[:400])
        return m.group(1).decode()

    def sign_up(self, email, name="Ada", password="correct horse battery"):
        r = self.post("/signup", [("_csrf", self.token("/signup")), ("email", email), ("name", name),
                                  ("password", password)])
        assert r.status == 303, r
        return r

    def log_in(self, email, password="correct horse battery", next_path=""):
        return self.post("/login", [("_csrf", self.token("/login")), ("email", email), ("password", password),
                                    ("next", next_path)])

    def log_out(self):
        r = self.post("/logout", [("_csrf", self.token("/posts"))])
        assert r.status == 303, r
        return r

    def create(self, title, body="Some text."):
        """Creates a post through the form; returns (response, path of the new post)."""
        r = self.post("/posts", [("_csrf", self.token()), ("title", title), ("body", body)])
        return r, r.header("Location")


class BlogCase(unittest.TestCase):
    """One blog server per class, on a fresh database in a temporary folder."""

    workers = 0
    extra_args = ()

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="kiln-blog-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.db_path = os.path.join(cls.tmp, "blog.sqlite")
        os.environ["BLOG_DB"] = cls.db_path  # inherited by the server started next
        args = ["--workers", str(cls.workers), "--health-path", "/health", "--metrics-path", "/metrics"]
        args += list(cls.extra_args)
        if ON_POSTGRES:  # the same tests, the data in a fresh PostgreSQL database
            cls.pg_url = harness.fresh_pg_database("blog_" + cls.__name__.lower())
            args += ["--database-url", cls.pg_url]
        try:
            cls.server = harness.ServerProcess(blog_binary(), args)
            cls.addClassCleanup(harness.check_clean_stop, cls.server)
            cls.server.start()
        finally:
            del os.environ["BLOG_DB"]
        cls.port = cls.server.port

    users = 0

    def setUp(self):
        self.client = Client(self.port)
        self.email = self.new_email()
        self.client.sign_up(self.email)

    @classmethod
    def new_email(cls):
        BlogCase.users += 1
        return "writer%d-%d@example.org" % (os.getpid(), BlogCase.users)

    def stored_post(self, post_id):
        """[(title, body)] of the post with this id, read from the database itself."""
        if ON_POSTGRES:
            out = harness.psql(self.pg_url, "SELECT json_build_array(title, body) FROM posts WHERE id = %d" % post_id)
            return [tuple(json.loads(out))] if out else []
        import sqlite3
        with sqlite3.connect(self.db_path) as db:
            return db.execute("SELECT title, body FROM posts WHERE id = ?", (post_id,)).fetchall()

    def tearDown(self):
        if not self.server.alive():
            self.fail("blog exited (status %s):\n%s" % (self.server.proc.returncode, self.server.output()))

    def assert_page(self, r, status=200):
        """An HTML page rendered through the layout, with `status`."""
        self.assertEqual(r.status, status, r)
        self.assertTrue(r.header("Content-Type", "").startswith("text/html"), r)
        self.assertIn(b'<link rel="stylesheet" href="/app.css">', r.body)
        self.assertIn(b"</html>", r.body)

    def assert_not_found_page(self, r):
        self.assert_page(r, 404)
        self.assertIn(b"<h1>Not found</h1>", r.body)


class Crud(BlogCase):
    def test_root_redirects_to_the_posts(self):
        r = self.client.get("/")
        self.assertEqual(r.status, 303)
        self.assertEqual(r.header("Location"), "/posts")

    def test_create_show_edit_delete_with_flash_messages(self):
        c = self.client
        r, path = c.create("First post", "Hello from the blog.\nSecond line.")
        self.assertEqual(r.status, 303, r)
        self.assertRegex(path, r"^/posts/[1-9][0-9]*$")

        r = c.get(path)
        self.assert_page(r)
        self.assertIn(b"<h1>First post</h1>", r.body)
        self.assertIn(b"Hello from the blog.\nSecond line.", r.body)
        self.assertIn(b'<p class="notice" role="status">Post created</p>', r.body)
        self.assertNotIn(b"Post created", c.get(path).body, "a flash is shown once")

        self.assertIn(b'<a href="%s">First post</a>' % path.encode(), c.get("/posts").body)

        r = c.get(path + "/edit")
        self.assert_page(r)
        self.assertIn(b'value="First post"', r.body)
        self.assertIn(b'<input type="hidden" name="_method" value="PATCH">', r.body)
        token = TOKEN.search(r.body).group(1).decode()
        r = c.post(path, [("_csrf", token), ("_method", "PATCH"), ("title", "  Edited title  "),
                          ("body", "New body")])
        self.assertEqual(r.status, 303, r)
        self.assertEqual(r.header("Location"), path)
        r = c.get(path)
        self.assertIn(b"<h1>Edited title</h1>", r.body, "title stored trimmed")
        self.assertIn(b"New body", r.body)
        self.assertIn(b"Post updated", r.body)

        r = c.post(path, [("_csrf", token), ("_method", "DELETE")])
        self.assertEqual(r.status, 303, r)
        self.assertEqual(r.header("Location"), "/posts")
        r = c.get("/posts")
        self.assertIn(b"Post deleted", r.body)
        self.assertNotIn(b"Edited title", r.body)
        self.assert_not_found_page(c.get(path))

    def test_put_updates_like_patch(self):
        c = self.client
        _, path = c.create("Put me")
        r = c.post(path, [("_csrf", c.token()), ("_method", "PUT"), ("title", "Was put"), ("body", "b")])
        self.assertEqual(r.status, 303, r)
        self.assertIn(b"<h1>Was put</h1>", c.get(path).body)

    def test_show_has_a_delete_form_with_token(self):
        c = self.client
        _, path = c.create("Deletable")
        body = c.get(path).body
        self.assertIn(b'<form action="%s" method="post">' % path.encode(), body)
        self.assertIn(b'<input type="hidden" name="_method" value="DELETE">', body)
        self.assertRegex(body, TOKEN)

    def test_hostile_text_is_stored_verbatim_and_shown_escaped(self):
        c = self.client
        title = "<script>alert(1)</script>"
        body = "'); DROP TABLE posts; -- \"quoted\" & <b>bold</b>"
        r, path = c.create(title, body)
        self.assertEqual(r.status, 303, r)
        page = c.get(path).body
        self.assertNotIn(b"<script>", page)
        self.assertNotIn(b"<b>bold", page)
        self.assertIn(b"<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>", page)
        self.assertIn(b"<title>&lt;script&gt;alert(1)&lt;/script&gt;", page)
        self.assertIn(b"&#39;); DROP TABLE posts; -- &quot;quoted&quot; &amp; &lt;b&gt;bold&lt;/b&gt;", page)
        edit = c.get(path + "/edit").body
        self.assertIn(b'value="&lt;script&gt;alert(1)&lt;/script&gt;"', edit)
        self.assertNotIn(b"<script>", c.get("/posts").body)
        # Stored exactly as typed, and the table survived.
        self.assertEqual(self.stored_post(int(path.split("/")[-1])), [(title, body)])

    def test_unicode_title_of_200_characters_is_accepted(self):
        r, _ = self.client.create("é" * 200)
        self.assertEqual(r.status, 303, r)

    def test_server_endpoints_answer_beside_coroutine_middleware(self):
        # The blog's middleware is a coroutine, so every request waits; the server's
        # own endpoints must answer all the same (they were 404 once).
        r = self.client.get("/health")
        self.assertEqual(r.status, 200, r)
        self.assertIn(b'"status":"ok"', r.body)
        r = self.client.get("/metrics")
        self.assertEqual(r.status, 200, r)
        self.assertIn(b"kiln_responses_total", r.body)

    def test_stylesheet_is_served(self):
        r = self.client.get("/app.css")
        self.assertEqual(r.status, 200)
        self.assertTrue(r.header("Content-Type", "").startswith("text/css"), r)
        self.assertIn(b".notice", r.body)

    def test_pages_carry_the_security_headers(self):
        # The blog is the app people copy: its pages (the forms, the 404 page) go out
        # with a CSP that keeps scripts and frames out, as a `kiln new` app's do.
        for target in ("/posts", "/signup", "/nothing/here"):
            with self.subTest(target=target):
                r = self.client.get(target)
                self.assertIn("default-src 'self'", r.header("Content-Security-Policy", ""), r)
                self.assertEqual(r.header("X-Content-Type-Options"), "nosniff")
                self.assertEqual(r.header("X-Frame-Options"), "SAMEORIGIN")

    # -- error paths ---------------------------------------------------------------

    def test_blank_title_is_422_with_the_input_kept(self):
        c = self.client
        r = c.post("/posts", [("_csrf", c.token()), ("title", "   "), ("body", "kept <body> text")])
        self.assert_page(r, 422)
        self.assertIn(b"Title can&#39;t be blank", r.body)
        self.assertIn(b">kept &lt;body&gt; text</textarea>", r.body)
        self.assertRegex(r.body, TOKEN)
        self.assertNotIn(b"kept &lt;body&gt; text", c.get("/posts").body)

    def test_too_long_title_is_422_with_the_input_kept(self):
        c = self.client
        title = "x" * 201
        r = c.post("/posts", [("_csrf", c.token()), ("title", title), ("body", "b")])
        self.assert_page(r, 422)
        self.assertIn(b"Title is too long (at most 200 characters)", r.body)
        self.assertIn(b'value="' + title.encode() + b'"', r.body)
        r, _ = c.create("y" * 200)
        self.assertEqual(r.status, 303, "200 characters are allowed")

    def test_blank_body_is_422(self):
        c = self.client
        r = c.post("/posts", [("_csrf", c.token()), ("title", "No body"), ("body", "\r\n ")])
        self.assert_page(r, 422)
        self.assertIn(b"Body can&#39;t be blank", r.body)
        self.assertIn(b'value="No body"', r.body)

    def test_invalid_edit_is_422_and_leaves_the_post(self):
        c = self.client
        _, path = c.create("Keep me", "original")
        r = c.post(path, [("_csrf", c.token()), ("_method", "PATCH"), ("title", ""), ("body", "changed")])
        self.assert_page(r, 422)
        self.assertIn(b">changed</textarea>", r.body)
        self.assertIn(b'<form action="%s" method="post">' % path.encode(), r.body)
        page = c.get(path).body
        self.assertIn(b"<h1>Keep me</h1>", page)
        self.assertIn(b"original", page)

    def test_post_without_token_is_403_and_creates_nothing(self):
        c = self.client
        c.token()  # a session exists, but the form is sent without its token
        r = c.post("/posts", [("title", "Forged"), ("body", "by another site")])
        self.assertEqual(r.status, 403, r)
        r = c.post("/posts", [("_csrf", "0" * 64), ("title", "Forged"), ("body", "wrong token")])
        self.assertEqual(r.status, 403, r)
        other = Client(self.port)
        r = c.post("/posts", [("_csrf", other.token("/login")), ("title", "Forged"), ("body", "other session")])
        self.assertEqual(r.status, 403, r)
        self.assertNotIn(b"Forged", c.get("/posts").body)

    def test_delete_and_update_without_token_are_403(self):
        c = self.client
        _, path = c.create("Protected")
        self.assertEqual(c.post(path, [("_method", "DELETE")]).status, 403)
        self.assertEqual(c.request("DELETE", path).status, 403)
        self.assertEqual(c.post(path, [("_method", "PATCH"), ("title", "x"), ("body", "y")]).status, 403)
        self.assertIn(b"<h1>Protected</h1>", c.get(path).body)

    def test_missing_post_is_the_404_page(self):
        c = self.client
        for target in ("/posts/999999", "/posts/999999/edit", "/posts/abc", "/posts/0", "/posts/-1",
                       "/posts/1x", "/posts/99999999999999999999999"):
            with self.subTest(target=target):
                self.assert_not_found_page(c.get(target))
        token = c.token()
        self.assert_not_found_page(c.post("/posts/999999", [("_csrf", token), ("_method", "DELETE")]))
        self.assert_not_found_page(c.post("/posts/999999", [("_csrf", token), ("_method", "PATCH"),
                                                             ("title", "t"), ("body", "b")]))

    def test_unknown_paths_get_the_404_page(self):
        self.assert_not_found_page(self.client.get("/nothing/here"))
        self.assert_not_found_page(self.client.get("/posts/1/comments"))

    def test_unknown_method_override_is_400(self):
        c = self.client
        _, path = c.create("Override")
        self.assertEqual(c.post(path, [("_csrf", c.token()), ("_method", "TRACE")]).status, 400)


class Accounts(BlogCase):
    def test_links_follow_the_log_in(self):
        anon = Client(self.port)
        body = anon.get("/posts").body
        self.assertIn(b'<a href="/signup">Sign up</a>', body)
        self.assertIn(b'<a href="/login">Log in</a>', body)
        self.assertNotIn(b"Log out", body)
        self.assertNotIn(b'href="/posts/new"', body)
        self.assertNotIn(b"kiln_sid", b"".join(v.encode() for v in anon.get("/posts").header_all("set-cookie")),
                         "a visitor who only reads gets no session")
        body = self.client.get("/posts").body
        self.assertIn(b"Log out</button>", body)
        self.assertIn(b'<span class="who">Ada</span>', body)
        self.assertNotIn(b'href="/signup"', body)
        self.assert_not_found_page(self.client.get("/no/such/page"))
        self.assertIn(b"Log out</button>", self.client.get("/no/such/page").body, "the 404 page knows the user too")

    def test_writing_needs_a_log_in(self):
        anon = Client(self.port)
        r = anon.get("/posts/new")
        self.assertEqual(r.status, 303)
        self.assertEqual(r.header("Location"), "/login?next=%2Fposts%2Fnew")
        r = anon.get(r.header("Location"))
        self.assertIn(b"Please log in first.", r.body)
        self.assertIn(b'name="next" value="/posts/new"', r.body)
        for form in ("/posts/new/", "/posts/1/edit/"):  # routed as without the slash: gated the same
            r = Client(self.port).get(form)
            self.assertEqual(r.status, 303, form)
            self.assertTrue(r.header("Location").startswith("/login?next="), (form, r))
        r = Client(self.port).get("/posts/new?title=Draft")  # back to the same page, its query too
        self.assertEqual(r.header("Location"), "/login?next=%2Fposts%2Fnew%3Ftitle%3DDraft")
        r = anon.post("/posts", [("_csrf", anon.token("/login")), ("title", "Anonymous"), ("body", "b")])
        self.assertEqual(r.status, 303)
        self.assertTrue(r.header("Location").startswith("/login"), r)
        self.assertNotIn(b"Anonymous", anon.get("/posts").body)
        r = anon.log_in(self.email, next_path="/posts/new")
        self.assertEqual(r.status, 303, r)
        self.assertEqual(r.header("Location"), "/posts/new")
        self.assertEqual(anon.get("/posts/new").status, 200)
        # next= only leads inside the site
        for outside in ("//evil.example/", "/\\evil.example/", "/\t/evil.example/"):  # browsers drop the tab
            other = Client(self.port)
            r = other.log_in(self.email, next_path=outside)
            self.assertEqual(r.status, 303, (outside, r))
            self.assertEqual(r.header("Location"), "/posts", outside)

    def test_only_the_author_may_change_a_post(self):
        _, path = self.client.create("Mine", "by the first writer")
        page = self.client.get(path).body
        self.assertIn(b'<span class="author">Ada</span>', page)
        self.assertIn(b'href="%s/edit"' % path.encode(), page)
        other = Client(self.port)
        other.sign_up(self.new_email(), name="Bob")
        page = other.get(path).body
        self.assertNotIn(b'href="%s/edit"' % path.encode(), page, "no Edit link for someone else's post")
        self.assertEqual(other.get(path + "/edit").status, 403)
        token = other.token("/posts/new")
        r = other.post(path, [("_csrf", token), ("_method", "PATCH"), ("title", "Hijacked"), ("body", "x")])
        self.assertEqual(r.status, 403)
        self.assertIn(b"Only the author", r.body)
        self.assertEqual(other.post(path, [("_csrf", token), ("_method", "DELETE")]).status, 403)
        self.assertIn(b"<h1>Mine</h1>", self.client.get(path).body)

    def test_sign_up_refuses_bad_input_and_never_echoes_the_password(self):
        c = Client(self.port)
        for email, name, password, wanted in (("not-an-address", "N", "long enough pw", b"Email must be"),
                                              ("x@example.org", "", "long enough pw", b"Name must be"),
                                              ("x@example.org", "N", "short", b"at least 8 characters"),
                                              ("y@example.org", "Bo\x01b", "long enough pw", b"control characters"),
                                              ("z@example.org", "\x00Bob", "long enough pw", b"control characters"),
                                              # Text that hides or turns: a right-to-left override, a C1
                                              # control; an address with a no-break space after it.
                                              ("w@example.org", "Bob\u202egnp.exe", "long enough pw", b"invisible"),
                                              ("v@example.org", "A\u0085B", "long enough pw", b"invisible"),
                                              ("u@example.org\u00a0", "N", "long enough pw", b"Email must be"),
                                              (self.email.upper(), "N", "long enough pw", b"exists already")):
            with self.subTest(email=email, name=name):
                r = c.post("/signup", [("_csrf", c.token("/signup")), ("email", email), ("name", name),
                                       ("password", password)])
                self.assert_page(r, 422)
                self.assertIn(wanted, r.body)
                self.assertNotIn(password.encode(), r.body)

    def test_log_in_renews_the_session_and_log_out_ends_it(self):
        c = Client(self.port)
        c.token("/login")
        before = c.cookies["kiln_sid"]
        r = c.log_in(self.email.upper())  # addresses are matched without case
        self.assertEqual(r.status, 303, r)
        self.assertNotEqual(c.cookies["kiln_sid"], before, "the session id is renewed at log-in")
        self.assertEqual(c.get("/posts/new").status, 200)
        old = dict(c.cookies)
        c.log_out()
        self.assertEqual(c.get("/posts/new").status, 303)
        replay = Client(self.port)
        replay.cookies = old
        self.assertEqual(replay.get("/posts/new").status, 303, "the logged-out session is dead everywhere")

    def test_wrong_passwords_are_refused_then_throttled(self):
        email = self.new_email()
        Client(self.port).sign_up(email)
        c = Client(self.port)
        r = c.log_in(email, "wrong password 1")
        self.assert_page(r, 422)
        self.assertIn(b"Wrong email address or password", r.body)
        r2 = c.log_in("nobody-" + email, "wrong password 1")
        self.assertIn(b"Wrong email address or password", r2.body, "an unknown address reads the same")
        for i in range(2, 6):
            self.assertEqual(c.log_in(email, "wrong password %d" % i).status, 422)
        r = c.log_in(email)  # the right password, too late
        self.assertEqual(r.status, 429, r)
        self.assertGreater(int(r.header("Retry-After")), 0)
        self.assertIn(b"Too many failed log-ins", r.body)

    def test_password_change_logs_out_the_other_sessions(self):
        email = self.new_email()
        a = Client(self.port)
        a.sign_up(email, password="first password")
        b = Client(self.port)
        self.assertEqual(b.log_in(email, "first password").status, 303)
        r = a.post("/password", [("_csrf", a.token("/password")), ("current_password", "wrong one!"),
                                 ("password", "second password")])
        self.assert_page(r, 422)
        self.assertIn(b"current password is wrong", r.body)
        r = a.post("/password", [("_csrf", a.token("/password")), ("current_password", "first password"),
                                 ("password", "second password")])
        self.assertEqual(r.status, 303, r)
        self.assertEqual(a.get("/posts/new").status, 200, "this session stays logged in")
        self.assertEqual(b.get("/posts/new").status, 303, "the other session is logged out")
        self.assertEqual(Client(self.port).log_in(email, "first password").status, 422)
        self.assertEqual(Client(self.port).log_in(email, "second password").status, 303)

    def test_two_password_changes_at_once_leave_one_session(self):
        # Both read the account before either writes (each hashes twice first): were
        # the later write unconditional, it would put its password back and keep its
        # session, though the first change ended every other one.
        email = self.new_email()
        a = Client(self.port)
        a.sign_up(email, password="first password")
        b = Client(self.port)
        self.assertEqual(b.log_in(email, "first password").status, 303)
        forms = [(c, [("_csrf", c.token("/password")), ("current_password", "first password"),
                      ("password", new)]) for c, new in ((a, "password of a"), (b, "password of b"))]
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda cf: cf[0].post("/password", cf[1]), forms))
        locations = sorted(r.header("Location") for r in results)
        self.assertEqual([r.status for r in results], [303, 303], results)
        self.assertEqual(locations, ["/login?next=%2Fpassword", "/posts"], "both changes were taken")
        winner, loser = (a, b) if results[0].header("Location") == "/posts" else (b, a)
        self.assertEqual(winner.get("/posts/new").status, 200)
        self.assertEqual(loser.get("/posts/new").status, 303, "the later change kept its session")
        new = "password of a" if winner is a else "password of b"
        old = "password of b" if winner is a else "password of a"
        self.assertEqual(Client(self.port).log_in(email, old).status, 422)
        self.assertEqual(Client(self.port).log_in(email, new).status, 303)

    def test_a_new_accounts_first_session_epoch_is_random(self):
        # Not 1 for all: a session of a deleted account must not fit an account that
        # gets its id again (SQLite gives a new row the highest id + 1).
        sql = "SELECT epoch FROM users ORDER BY id DESC LIMIT 2"
        Client(self.port).sign_up(self.new_email())
        if ON_POSTGRES:
            epochs = [int(e) for e in harness.psql(self.pg_url, sql).split()]
        else:
            import sqlite3
            with sqlite3.connect(self.db_path) as db:
                epochs = [row[0] for row in db.execute(sql)]
        self.assertEqual(len(epochs), 2)
        self.assertNotEqual(epochs[0], epochs[1])
        self.assertNotIn(1, epochs)

    def test_passwords_are_stored_as_argon2id(self):
        if ON_POSTGRES:
            stored = harness.psql(self.pg_url, "SELECT password_hash FROM users WHERE email = '%s'" % self.email)
        else:
            import sqlite3
            with sqlite3.connect(self.db_path) as db:
                stored = db.execute("SELECT password_hash FROM users WHERE email = ?", (self.email,)).fetchone()[0]
        self.assertTrue(stored.startswith("$argon2id$"), stored)
        self.assertNotIn("correct horse", stored)


class DatabaseErrors(BlogCase):
    """A database error in the awaits a page's answer depends on first (who is logged
    in, the log-in and sign-up throttles: conditions, where GCC 12 miscompiles a
    co_await; tests/lint/co_await_conditions.py) is a 500 at once, and the same pages
    work again once the database does."""

    def sql(self, statement):
        if ON_POSTGRES:
            harness.psql(self.pg_url, statement)
            return
        import sqlite3
        with sqlite3.connect(self.db_path) as db:
            db.execute(statement)

    def while_renamed(self, table, fn):
        self.sql("ALTER TABLE %s RENAME TO %s_away" % (table, table))
        try:
            fn()
        finally:
            self.sql("ALTER TABLE %s_away RENAME TO %s" % (table, table))

    def answered(self, client, method, target, fields=None):
        try:
            return client.request(method, target, fields)
        except (AssertionError, OSError) as e:
            self.fail("%s %s not answered (%s):\n%s" % (method, target, e, self.server.output()[-3000:]))

    def test_a_failing_user_lookup_is_a_500(self):
        self.assertEqual(self.client.get("/login").status, 303)  # logged in: sent on

        def check():
            for target in ("/login", "/signup"):
                r = self.answered(self.client, "GET", target)
                self.assertEqual(r.status, 500, "%s: %r" % (target, r))
        self.while_renamed("users", check)
        self.assertEqual(self.client.get("/login").status, 303)
        self.assertEqual(self.client.get("/posts/new").status, 200)

    def test_a_failing_throttle_is_a_500(self):
        other = Client(self.port)
        # A first log-in and sign-up purge the throttle's old rows (once a window): the
        # ones below go straight to counting the attempt.
        self.assertEqual(other.log_in(self.email, "wrong password").status, 422)
        other.sign_up(self.new_email())
        other.log_out()
        login_token, signup_token = other.token("/login"), other.token("/signup")

        def check():
            r = self.answered(other, "POST", "/login", [("_csrf", login_token), ("email", self.email),
                                                       ("password", "correct horse battery"), ("next", "")])
            self.assertEqual(r.status, 500, r)
            r = self.answered(other, "POST", "/signup", [("_csrf", signup_token), ("email", self.new_email()),
                                                        ("name", "Bo"), ("password", "correct horse battery")])
            self.assertEqual(r.status, 500, r)
        self.while_renamed("auth_failures", check)
        self.assertEqual(other.log_in(self.email).status, 303)


class AddressThrottle(BlogCase):
    """Failed log-ins are counted per client address as well as per account: one address
    guessing at many accounts is stopped after 50 failures in the window, for every
    account, while other addresses log in. Behind a trusted proxy the address is the
    one it forwards (X-Forwarded-For), so each test here has addresses of its own."""

    extra_args = ("--trusted-proxies", "127.0.0.1")

    def test_one_address_guessing_at_many_accounts_is_stopped_there_only(self):
        guesser = Client(self.port, [("X-Forwarded-For", "203.0.113.7")])
        for i in range(50):  # one wrong try each at 50 accounts: under every per-account limit
            r = guesser.log_in("guess%d-%s" % (i, self.email), "wrong password")
            self.assertEqual(r.status, 422, "try %d: %r" % (i, r))
        r = guesser.log_in(self.email)  # the right password of a real account, from there
        self.assertEqual(r.status, 429, r)
        self.assertGreater(int(r.header("Retry-After")), 0)
        self.assertIn(b"Too many failed log-ins", r.body)
        # Refused at its address first, it adds no row for each account it names.
        for i in range(5):
            self.assertEqual(guesser.log_in("fresh%d-%s" % (i, self.email), "wrong password").status, 429, i)
        self.assertEqual(self.failure_rows("account:fresh%"), 0)
        # The account itself is not locked: from another address it logs in.
        other = Client(self.port, [("X-Forwarded-For", "198.51.100.20")])
        self.assertEqual(other.log_in(self.email).status, 303)
        self.assertEqual(other.get("/posts/new").status, 200)

    def failure_rows(self, like):
        """How many auth_failures rows have a key LIKE `like` (no quotes in it)."""
        sql = "SELECT count(*) FROM auth_failures WHERE key LIKE '%s'" % like
        if ON_POSTGRES:
            return int(harness.psql(self.pg_url, sql))
        import sqlite3
        with sqlite3.connect(self.db_path) as db:
            return db.execute(sql).fetchone()[0]


class SignUpThrottle(BlogCase):
    """Each sign-up costs a password hash, and one for a taken address tells that it has
    an account: 50 from one client address in the window, then 429 before any hash,
    while other addresses sign up."""

    extra_args = ("--trusted-proxies", "127.0.0.1")

    def sign_up_as(self, client, email):
        return client.post("/signup", [("_csrf", client.token("/signup")), ("email", email), ("name", "Eve"),
                                       ("password", "correct horse battery")])

    def test_one_address_probing_sign_up_is_stopped_there_only(self):
        prober = Client(self.port, [("X-Forwarded-For", "192.0.2.90")])
        for i in range(50):
            r = self.sign_up_as(prober, self.email)  # taken: it says so
            self.assertEqual(r.status, 422, "try %d: %r" % (i, r))
            self.assertIn(b"exists already", r.body)
        r = self.sign_up_as(prober, self.email)
        self.assertEqual(r.status, 429, r)
        self.assertGreater(int(r.header("Retry-After")), 0)
        self.assertIn(b"Too many sign-ups", r.body)
        self.assertNotIn(b"exists already", r.body)
        r = self.sign_up_as(prober, self.new_email())  # a new account from there: refused too
        self.assertEqual(r.status, 429, r)
        mapped = Client(self.port, [("X-Forwarded-For", "::ffff:192.0.2.90")])  # the same client
        self.assertEqual(self.sign_up_as(mapped, self.new_email()).status, 429)
        other = Client(self.port, [("X-Forwarded-For", "192.0.2.91")])
        self.assertEqual(self.sign_up_as(other, self.new_email()).status, 303)


class UnknownAddress(BlogCase):
    """Through a unix-socket listener kiln knows no client address. Such clients are
    counted for their accounts only: as one shared address, one of them could lock
    out all the others."""

    sock = os.path.join(tempfile.gettempdir(), "kiln-blog-%d.sock" % os.getpid())
    extra_args = ("--listen", "unix:" + sock)

    def test_failures_at_many_accounts_do_not_lock_out_the_others(self):
        guesser = Client(self.sock)
        for i in range(51):  # one wrong try at each of 51 accounts: past the per-address limit
            r = guesser.log_in("nobody%d-%s" % (i, self.email), "wrong password")
            self.assertEqual(r.status, 422, "try %d: %r" % (i, r))
        self.assertEqual(Client(self.sock).log_in(self.email).status, 303)


class AccountThrottle(BlogCase):
    """Failed log-ins at one account are counted per address too: a guesser that fails
    5 times is stopped there, while the account's owner, from another address, still
    logs in. Only failures spread over many addresses (50 at one account) lock it for
    everyone. Each test here has addresses of its own (X-Forwarded-For)."""

    extra_args = ("--trusted-proxies", "127.0.0.1")

    def at(self, address):
        """A client the trusted proxy says is at `address`."""
        return Client(self.port, [("X-Forwarded-For", address)])

    def test_one_guesser_cannot_lock_the_owner_out_and_many_can(self):
        guesser = self.at("203.0.113.60")
        for i in range(5):
            self.assertEqual(guesser.log_in(self.email, "wrong password %d" % i).status, 422)
        r = guesser.log_in(self.email)  # even the right password, from there
        self.assertEqual(r.status, 429, r)
        self.assertIn(b"Too many failed log-ins", r.body)
        owner = self.at("198.51.100.60")
        self.assertEqual(owner.log_in(self.email).status, 303, "the guesser locked the owner out")
        # Ten more addresses, five failures each: 50 at the account, which is now locked
        # from everywhere (the owner's log-in above cleared the first guesser's count).
        for n in range(10):
            c = self.at("203.0.113.%d" % (70 + n))
            for i in range(5):
                self.assertEqual(c.log_in(self.email, "wrong password %d" % i).status, 422, (n, i))
        r = self.at("198.51.100.61").log_in(self.email)
        self.assertEqual(r.status, 429, r)
        self.assertGreater(int(r.header("Retry-After")), 0)

    def test_text_that_is_not_an_email_counts_for_no_account(self):
        # It would otherwise be counted under a key that names the owner's own
        # address ("account:<email> from:<address>") and lock the owner out there.
        owner_address = "198.51.100.62"
        attacker = self.at("203.0.113.90")
        for i in range(6):
            r = attacker.log_in(self.email + " from:" + owner_address, "wrong password")
            self.assertEqual(r.status, 422, (i, r))
        owner = self.at(owner_address)
        self.assertEqual(owner.log_in(self.email).status, 303)

    def test_an_ipv6_client_counts_by_its_64(self):
        # One host with a /64 cannot take a fresh address for each guess.
        for i in range(5):
            c = self.at("2001:db8:1:2::%x" % (i + 1))
            self.assertEqual(c.log_in(self.email, "wrong password").status, 422, i)
        r = self.at("2001:db8:1:2:ffff::9").log_in(self.email)
        self.assertEqual(r.status, 429, r)
        other = self.at("2001:db8:1:3::1")  # the next /64
        self.assertEqual(other.log_in(self.email).status, 303)

    def test_a_guesser_refused_again_and_again_adds_nothing(self):
        # 5 tries, then 55 refused ones: were refusals counted at the account, they
        # would pass its limit of 50 and lock the owner out everywhere.
        guesser = self.at("192.0.2.110")
        statuses = [guesser.log_in(self.email, "wrong password %d" % i).status for i in range(60)]
        self.assertEqual(statuses, [422] * 5 + [429] * 55)
        owner = self.at("192.0.2.111")
        self.assertEqual(owner.log_in(self.email).status, 303, "refused guesses locked the owner out")

    def test_a_burst_sent_together_gets_no_more_than_the_limit(self):
        # Twenty wrong passwords at once from one address: were each checked before
        # any was counted, all twenty would be tried. Some may find the process's
        # password hashing full (503, auth::kMaxHashing): those tried no password and
        # count nothing, so at most five passwords are tried (422) in all.
        def attempt(i):
            c = self.at("192.0.2.100")
            return c.log_in(self.email, "wrong password %d" % i).status

        with concurrent.futures.ThreadPoolExecutor(20) as pool:
            statuses = list(pool.map(attempt, range(20)))
        self.assertLessEqual(statuses.count(422), 5, statuses)
        self.assertEqual(statuses.count(422) + statuses.count(429) + statuses.count(503), 20, statuses)
        owner = self.at("192.0.2.101")
        self.assertEqual(owner.log_in(self.email).status, 303)

    def test_a_dual_stack_listeners_ipv4_clients_count_one_by_one(self):
        # Behind a listener on [::], IPv4 clients arrive as ::ffff:a.b.c.d. Each counts
        # as its IPv4 address, not all of them as the one /64 those addresses share.
        guesser = self.at("::ffff:192.0.2.80")
        for i in range(5):
            self.assertEqual(guesser.log_in(self.email, "wrong password %d" % i).status, 422, i)
        self.assertEqual(self.at("192.0.2.80").log_in(self.email).status, 429, "the same client, written as IPv4")
        self.assertEqual(self.at("::ffff:192.0.2.81").log_in(self.email).status, 303,
                         "one IPv4 guesser locked out every IPv4 client of a dual-stack listener")


class Pagination(BlogCase):
    def test_twelve_posts_make_two_pages_newest_first(self):
        c = self.client
        for i in range(1, 13):
            r, _ = c.create("Post %02d" % i)
            self.assertEqual(r.status, 303, r)

        def titles(r):
            return [t.decode() for t in re.findall(rb'<a href="/posts/\d+">(Post \d\d)</a>', r.body)]

        first = c.get("/posts")
        self.assert_page(first)
        self.assertEqual(titles(first), ["Post %02d" % i for i in range(12, 2, -1)])
        self.assertIn(b"Page 1 of 2", first.body)
        self.assertIn(b'rel="next" href="/posts?page=2"', first.body)
        self.assertNotIn(b'rel="prev"', first.body)

        second = c.get("/posts?page=2")
        self.assertEqual(titles(second), ["Post 02", "Post 01"])
        self.assertIn(b"Page 2 of 2", second.body)
        self.assertIn(b'rel="prev" href="/posts?page=1"', second.body)
        self.assertNotIn(b'rel="next"', second.body)

        # error paths: past the end is an empty page; nonsense means page 1
        past = c.get("/posts?page=3")
        self.assert_page(past)
        self.assertEqual(titles(past), [])
        self.assertIn(b"No posts yet", past.body)
        for bad in ("abc", "0", "-2", "1e3", "99999999999999999999999"):
            with self.subTest(page=bad):
                r = c.get("/posts?page=" + bad)
                self.assertEqual(r.status, 200)
                self.assertEqual(titles(r)[0], "Post 12")


class Workers(BlogCase):
    workers = 2

    def test_posts_and_flash_work_across_worker_processes(self):
        c = self.client
        r, path = c.create("Across workers")
        self.assertEqual(r.status, 303, r)
        # Fresh connections land on either worker: each must see the post and the
        # session (the first one also consumes the flash, wherever it runs).
        seen_flash = 0
        for _ in range(10):
            r = c.get(path)
            self.assert_page(r)
            self.assertIn(b"<h1>Across workers</h1>", r.body)
            seen_flash += r.body.count(b"Post created")
        self.assertEqual(seen_flash, 1)
        self.assertEqual(len(self.server.children()), 2)


class OnPostgres(BlogCase):
    """With KILN_BLOG_POSTGRES=1 (inside tests/pg/pg_server.py; the class exists only
    then): the blog keeps its posts in PostgreSQL, through the PostgreSQL migrations,
    and no SQLite file appears."""

    def test_posts_are_rows_of_postgresql(self):
        c = self.client
        r, _ = c.create("Stored in PostgreSQL", "Its body")
        self.assertEqual(r.status, 303, r)
        self.assertEqual(harness.psql(self.pg_url, "SELECT title FROM posts"), "Stored in PostgreSQL")
        self.assertEqual(harness.psql(self.pg_url, "SELECT string_agg(name, ',' ORDER BY version) FROM kiln_migrations"),
                         "create_posts,create_users,add_post_authors")
        self.assertEqual(harness.psql(self.pg_url, "SELECT count(*) FROM users WHERE password_hash LIKE '$argon2id$%'"), "1")
        self.assertFalse(os.path.exists(self.db_path), "a SQLite file was made although PostgreSQL was configured")


if not ON_POSTGRES:
    del OnPostgres  # the SQLite run has nothing of PostgreSQL's to check


class Startup(unittest.TestCase):
    """Where the data goes by default, and starts that must fail loudly."""

    def run_blog(self, cwd, env_extra, args=("--workers", "0", "--port", "0")):
        env = dict(os.environ)
        env.pop("BLOG_DB", None)
        env.update(env_extra)
        return subprocess.run([blog_binary(), *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=START_TIMEOUT)

    def test_default_database_is_data_blog_sqlite_in_the_current_directory(self):
        tmp = tempfile.mkdtemp(prefix="kiln-blog-cwd-")
        self.addCleanup(shutil.rmtree, tmp, True)
        server = harness.ServerProcess(blog_binary(), ["--workers", "0"])
        old = os.getcwd()
        os.chdir(tmp)  # the server inherits the working directory
        try:
            server.start()
        finally:
            os.chdir(old)
        try:
            c = Client(server.port)
            c.sign_up("default@example.org")
            r, _ = c.create("Saved by default")
            self.assertEqual(r.status, 303, r)
            import sqlite3
            with sqlite3.connect(os.path.join(tmp, "data", "blog.sqlite")) as db:
                self.assertEqual(db.execute("SELECT title FROM posts").fetchall(), [("Saved by default",)])
                self.assertEqual(db.execute("SELECT version FROM kiln_migrations").fetchall(), [(1,), (2,), (3,)])
        finally:
            harness.check_clean_stop(server)

    # -- error paths ---------------------------------------------------------------

    def test_failing_migration_stops_the_start_naming_the_file(self):
        tmp = tempfile.mkdtemp(prefix="kiln-blog-bad-")
        self.addCleanup(shutil.rmtree, tmp, True)
        os.makedirs(os.path.join(tmp, "root", "db", "migrations"))
        os.makedirs(os.path.join(tmp, "root", "public"))  # routes (static files) come first, then the set-up
        with open(os.path.join(tmp, "root", "db", "migrations", "001_broken.sql"), "w") as f:
            f.write("CREATE TABLE posts (;\n")
        p = self.run_blog(tmp, {"BLOG_ROOT": os.path.join(tmp, "root"), "BLOG_DB": os.path.join(tmp, "b.sqlite")})
        self.assertEqual(p.returncode, 2, p)  # the node's set-up (App::on_node_start) refused the start
        self.assertIn("node set-up failed", p.stderr.decode())
        self.assertIn("001_broken.sql", p.stderr.decode())

    def test_unopenable_database_stops_the_start(self):
        tmp = tempfile.mkdtemp(prefix="kiln-blog-bad-")
        self.addCleanup(shutil.rmtree, tmp, True)
        blocker = os.path.join(tmp, "file")
        open(blocker, "w").close()  # a file where the database's folder should be
        p = self.run_blog(tmp, {"BLOG_DB": os.path.join(blocker, "blog.sqlite")})
        self.assertEqual(p.returncode, 2, p)
        self.assertIn("blog.sqlite", p.stderr.decode())


if __name__ == "__main__":
    # --blog PATH is this file's own argument; the rest goes to harness.main.
    if "--blog" in sys.argv:
        i = sys.argv.index("--blog")
        harness.BINARIES["blog"] = sys.argv[i + 1]
        del sys.argv[i:i + 2]
    if not harness.BINARIES.get("blog"):
        sys.exit("usage: test_blog.py --blog PATH [--server ...]")
    harness.main()
