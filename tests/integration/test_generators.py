"""kiln new / generate / routes / run --watch, end to end.

One project is made and built once for the whole file (setUpModule): `kiln new blog`
in a temp dir, `kiln generate scaffold post title:string body:text`, `kiln generate
auth` (accounts on kiln::auth), then `kiln routes`, which builds it. By default the project finds kiln through find_package
from an install of this build tree into the temp dir (seconds, no recompiling kiln);
with KILN_GENERATORS_FROM_SOURCE=1 it uses the add_subdirectory path instead (the
kiln library compiles once more: minutes). Builds take /tmp/kiln-build.lock
(KILNTOOL_BUILD_LOCK) and ccache. Then: the app serves / and /posts, creates a post
with the CSRF token, signs up, logs out and in again (a wrong password is 422), and
`kiln run --watch` reloads a changed template into new
workers under the same supervisor. Error paths: bad names, existing directory,
unknown field type, outside a project, files in the way (auth's too: a second run
over edited files refuses unless --force).
"""
import http.client
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

import harness

BUILD_TIMEOUT = 600      # seconds, the one project build (from source: the kiln library too)
RELOAD_TIMEOUT = 240     # seconds, a rebuild plus a graceful reload
STATE = {}


def kiln():
    path = harness.BINARIES.get("kiln")
    if not path:
        raise unittest.SkipTest("no --kiln binary given")
    return os.path.abspath(path)


def run_kiln(args, cwd, timeout=60, env=None):
    return subprocess.run([kiln()] + args, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=env or STATE.get("env"))


def build_env(tmp):
    env = dict(os.environ)
    env["KILNTOOL_BUILD_LOCK"] = "/tmp/kiln-build.lock"
    env["KILNTOOL_BUILD_JOBS"] = "2"
    env["CCACHE_NOHASHDIR"] = "1"  # the same objects hit whatever the build folder's path
    if os.environ.get("KILN_GENERATORS_FROM_SOURCE") != "1":
        build_dir = os.path.dirname(os.path.dirname(os.path.abspath(kiln())))  # <build>/bin/kiln
        prefix = os.path.join(tmp, "prefix")
        subprocess.run(["cmake", "--install", build_dir, "--prefix", prefix], check=True,
                       capture_output=True, timeout=120)
        env["CMAKE_PREFIX_PATH"] = prefix
    return env


def setUpModule():
    tmp = tempfile.mkdtemp(prefix="kiln_generators_")
    STATE["tmp"] = tmp
    STATE["env"] = build_env(tmp)
    r = run_kiln(["new", "blog", "--dir", tmp], cwd=tmp)
    STATE["new"] = r
    root = os.path.join(tmp, "blog")
    STATE["root"] = root
    STATE["scaffold"] = run_kiln(["generate", "scaffold", "post", "title:string", "body:text"], cwd=root)
    with open(os.path.join(root, "views", "layouts", "app.html")) as f:
        STATE["layout"] = f.read()
    STATE["auth"] = run_kiln(["generate", "auth"], cwd=root)
    # A resource named like a kiln type (kiln::Task) with fields named like SQL keywords:
    # its model once named kiln::Task inside kiln::db, and its migration failed to parse.
    STATE["scaffold_task"] = run_kiln(["generate", "scaffold", "task", "title:string", "order:integer",
                                       "from:string"], cwd=root)
    STATE["routes"] = run_kiln(["routes"], cwd=root, timeout=BUILD_TIMEOUT)


def tearDownModule():
    shutil.rmtree(STATE.get("tmp", ""), ignore_errors=True)


def request(port, method, path, body=None, headers=None):
    c = http.client.HTTPConnection(harness.HOST, port, timeout=10)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), r.read().decode()
    finally:
        c.close()


def csrf_of(page):
    return re.search(r'name="_csrf" value="([^"]+)"', page).group(1)


def cookie_of(headers, old=None):
    """The session cookie the response set (name=value), else the one we had."""
    value = headers.get("set-cookie")
    return value.split(";")[0] if value else old


def form_post(port, path, cookie, fields):
    body = urllib.parse.urlencode(fields)
    return request(port, "POST", path, body, {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"})


def wait_until_serving(port, proc, timeout=20, output=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise AssertionError("the app exited with status %s" % proc.returncode)
        try:
            return request(port, "GET", "/")
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the app did not answer within %d s\n%s" % (timeout, "".join(output or [])))


def children_of(pid):
    """PIDs whose parent is pid (the supervisor's workers), from /proc."""
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.add(int(entry))
    return out


def start_watch(root, workers, db_name):
    """`kiln run --watch` serving the project on a free port: (port, process, output
    lines as they come)."""
    port = harness.free_port()
    env = dict(STATE["env"], DATABASE_PATH=os.path.join(STATE["tmp"], db_name))
    proc = subprocess.Popen([kiln(), "run", "--watch", "--", "--port", str(port), "--workers", str(workers),
                             "--threads", "1"], cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    output = []
    threading.Thread(target=lambda: [output.append(l) for l in proc.stdout], daemon=True).start()
    return port, proc, output


def stop_watch(proc):
    proc.send_signal(signal.SIGINT)  # kiln run stops the server by PID, then exits
    try:
        proc.wait(timeout=40)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def page_with(port, marker):
    """GET / until it shows `marker` (a rebuild and a reload or restart away)."""
    deadline = time.time() + RELOAD_TIMEOUT
    page = ""
    while marker not in page and time.time() < deadline:
        time.sleep(0.3)
        try:
            page = request(port, "GET", "/")[2]
        except OSError:
            page = ""  # zero downtime is the supervisor's promise; not asserted here
    return page


class Generated(unittest.TestCase):
    def setUp(self):
        self.assertEqual(STATE["new"].returncode, 0, STATE["new"].stderr)
        self.assertEqual(STATE["scaffold"].returncode, 0, STATE["scaffold"].stderr)
        self.root = STATE["root"]

    def test_the_projects_own_tests_pass(self):
        # kiln new writes a GoogleTest that runs the app in-process (kiln::testing::Client);
        # `kiln routes` built it with the app.
        self.assertEqual(STATE["routes"].returncode, 0, STATE["routes"].stderr)
        binary = os.path.join(self.root, "build", "blog_test")
        self.assertTrue(os.path.isfile(binary), "the project's test was not built")
        r = subprocess.run([binary], cwd=self.root, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("[  PASSED  ] 4 tests", r.stdout)

    def test_new_writes_a_project(self):
        for f in ("CMakeLists.txt", "Makefile", "main.cpp", "app.cpp", "app.hpp", "kiln.toml", ".gitignore",
                  "views/layouts/app.html", "views/home/index.html", "public/app.css", "tests/test_app.py",
                  "tests/app_test.cpp", "lib/database.cpp"):
            self.assertTrue(os.path.isfile(os.path.join(self.root, f)), f)
        self.assertTrue(os.path.isdir(os.path.join(self.root, "db", "migrations")))
        # git keeps no empty directory: a clone of a new project must still start.
        self.assertIn("create    db/migrations/.gitkeep", STATE["new"].stdout)
        with open(os.path.join(self.root, "CMakeLists.txt")) as f:
            cmake = f.read()
        self.assertTrue(cmake.startswith("# kiln-app: blog\n"))
        self.assertIn("find_package(kiln QUIET)", cmake)
        self.assertRegex(cmake, r'set\(KILN_SOURCE_DIR "/[^"]+"')
        self.assertIn("create    main.cpp", STATE["new"].stdout)
        with open(os.path.join(self.root, "kiln.toml")) as f:  # committed: it says where secrets go instead
            self.assertIn("keep secrets out of it", f.read())

    def test_scaffold_prints_each_file_and_numbers_the_migration(self):
        out = STATE["scaffold"].stdout
        for f in ("db/migrations/001_create_posts.sql", "models/post.hpp", "controllers/posts_controller.hpp",
                  "controllers/posts_controller.cpp", "routes/posts.cpp", "views/posts/index.html",
                  "views/posts/show.html", "views/posts/new.html", "views/posts/edit.html", "views/posts/_form.html"):
            self.assertIn("create    " + f, out)
            self.assertTrue(os.path.isfile(os.path.join(self.root, f)), f)
        self.assertIn("update    app.cpp", out)
        with open(os.path.join(self.root, "app.cpp")) as f:
            app_cpp = f.read()
        # above the marker, at its indentation (`kiln generate auth` added its call after it)
        self.assertEqual(app_cpp.count("register_routes_posts(app);"), 1)
        self.assertLess(app_cpp.index("    register_routes_posts(app);\n"), app_cpp.index("    // kiln:routes"))
        with open(os.path.join(self.root, "models", "post.hpp")) as f:
            self.assertIn("struct kiln::db::Model<::Post>", f.read())

    def test_routes_lists_the_scaffold(self):
        r = STATE["routes"]
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])
        lines = [" ".join(l.split()) for l in r.stdout.splitlines()]
        for route in ("GET /", "GET /posts", "GET /posts/new", "POST /posts", "GET /posts/:id",
                      "GET /posts/:id/edit", "PUT /posts/:id", "PATCH /posts/:id", "DELETE /posts/:id"):
            self.assertIn(route, lines)
        # the static mount names the directory it serves
        self.assertTrue(any(l.startswith("GET /*path (files: ") and l.endswith("public)") for l in lines), lines)
        # the app itself prints the same table
        app = subprocess.run([os.path.join(self.root, "build", "app", "blog"), "--routes"], cwd=self.root,
                             capture_output=True, text=True, timeout=20)
        self.assertEqual(app.returncode, 0)
        self.assertIn("DELETE  /posts/:id", app.stdout)

    def test_app_serves_and_creates_a_post_with_the_csrf_token(self):
        self.assertEqual(STATE["routes"].returncode, 0, "the build failed")
        port = harness.free_port()
        env = dict(os.environ, DATABASE_PATH=os.path.join(STATE["tmp"], "crud.sqlite"))
        proc = subprocess.Popen([os.path.join(self.root, "build", "app", "blog"), "--port", str(port),
                                 "--workers", "0", "--threads", "1"], cwd=self.root, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            status, _, home = wait_until_serving(port, proc)
            self.assertEqual(status, 200)
            self.assertIn("Welcome to blog", home)
            self.assertEqual(request(port, "GET", "/app.css")[0], 200)
            status, _, index = request(port, "GET", "/posts")
            self.assertEqual(status, 200)
            self.assertIn("No Posts yet", index)

            # `kiln generate auth` ran: writes and the forms that lead to them need a
            # log-in (before, the scaffold stayed open to everyone).
            status, headers, _ = request(port, "GET", "/posts/new")
            self.assertEqual((status, headers["location"]), (303, "/login?next=%2Fposts%2Fnew"))
            status, headers, _ = request(port, "GET", "/posts/new/")  # routed as /posts/new: gated too
            self.assertEqual(status, 303)
            status, headers, form = request(port, "GET", "/signup")
            token, cookie = csrf_of(form), cookie_of(headers)
            body = urllib.parse.urlencode({"_csrf": token, "title": "Anonymous", "body": "no"})
            status, headers, _ = request(port, "POST", "/posts", body,
                                         {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"})
            self.assertEqual((status, headers["location"]), (303, "/login?next=%2Fposts"))
            # Where no route is for the request, its 404 or 405 comes to anyone (before: a
            # write or a /new there went to the log-in page). /nowhere is in the public
            # folder's mount, which answers GET only: 405.
            status, _, _ = request(port, "POST", "/nowhere", body,
                                   {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"})
            self.assertEqual(status, 405)
            status, headers, _ = form_post(port, "/signup", cookie, {"_csrf": token, "email": "crud@example.com",
                                                                     "name": "Crud", "password": "correct horse"})
            self.assertEqual(status, 303, "sign-up failed")
            cookie = cookie_of(headers, cookie)

            status, headers, form = request(port, "GET", "/posts/new", headers={"Cookie": cookie})
            self.assertEqual(status, 200)
            token = csrf_of(form)
            hdrs = {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"}

            body = urllib.parse.urlencode({"_csrf": token, "title": "Hello <b>", "body": "First post"})
            status, headers, _ = request(port, "POST", "/posts", body, hdrs)
            self.assertEqual(status, 303)
            self.assertEqual(headers["location"], "/posts/1")
            status, _, page = request(port, "GET", "/posts/1", headers={"Cookie": cookie})
            self.assertEqual(status, 200)
            self.assertIn("Hello &lt;b&gt;", page)
            self.assertIn("Post created.", page)
            self.assertIn("Hello &lt;b&gt;", request(port, "GET", "/posts")[2])

            # update through the form's _method=PATCH, then delete
            body = urllib.parse.urlencode({"_csrf": token, "_method": "PATCH", "title": "Edited", "body": "b"})
            self.assertEqual(request(port, "POST", "/posts/1", body, hdrs)[0], 303)
            self.assertIn("Edited", request(port, "GET", "/posts/1")[2])

            # error paths: validation keeps the input, no token is 403, a missing post is 404
            body = urllib.parse.urlencode({"_csrf": token, "title": " ", "body": "kept text"})
            status, _, page = request(port, "POST", "/posts", body, hdrs)
            self.assertEqual(status, 422)
            self.assertIn("Title can&#39;t be blank", page)
            self.assertIn("kept text", page)
            # text has a length limit: a string 255 characters (é is one), a text 20,000
            body = urllib.parse.urlencode({"_csrf": token, "title": "é" * 255, "body": "b" * 20000})
            self.assertEqual(request(port, "POST", "/posts", body, hdrs)[0], 303)
            body = urllib.parse.urlencode({"_csrf": token, "title": "t" * 256, "body": "b"})
            status, _, page = request(port, "POST", "/posts", body, hdrs)
            self.assertEqual(status, 422)
            self.assertIn("Title is too long (at most 255 characters)", page)
            self.assertIn('maxlength="255"', page)
            body = urllib.parse.urlencode({"_csrf": token, "title": "t", "body": "b" * 20001})
            self.assertEqual(request(port, "POST", "/posts", body, hdrs)[0], 422)
            body = urllib.parse.urlencode({"title": "x", "body": "y"})
            self.assertEqual(request(port, "POST", "/posts", body, hdrs)[0], 403)
            self.assertEqual(request(port, "GET", "/posts/999")[0], 404)
            self.assertEqual(request(port, "GET", "/posts/abc")[0], 404)

            body = urllib.parse.urlencode({"_csrf": token, "_method": "DELETE"})
            self.assertEqual(request(port, "POST", "/posts/1", body, hdrs)[0], 303)
            self.assertEqual(request(port, "GET", "/posts/1")[0], 404)

            # The task scaffold: a model named like kiln::Task, columns named order and from.
            self.assertEqual(STATE["scaffold_task"].returncode, 0, STATE["scaffold_task"].stderr)
            body = urllib.parse.urlencode({"_csrf": token, "title": "Water plants", "order": "3", "from": "Ada"})
            status, headers, _ = request(port, "POST", "/tasks", body, hdrs)
            self.assertEqual(status, 303)
            status, _, page = request(port, "GET", headers["location"])
            self.assertEqual(status, 200)
            self.assertIn("Water plants", page)
            self.assertIn("Ada", page)

            # Generated after auth, the tasks have owners: another account may read a
            # task but not open its edit form, change it or delete it (403), and a
            # user_id in the form is not read. Its owner still may.
            task = headers["location"]
            status, headers, form = request(port, "GET", "/signup")
            other_token, other = csrf_of(form), cookie_of(headers)
            status, headers, _ = form_post(port, "/signup", other, {"_csrf": other_token, "email": "other@example.com",
                                                                    "name": "Other", "password": "correct horse"})
            self.assertEqual(status, 303, "sign-up failed")
            other = cookie_of(headers, other)
            other_token = csrf_of(request(port, "GET", "/tasks/new", headers={"Cookie": other})[2])
            other_hdrs = {"Cookie": other, "Content-Type": "application/x-www-form-urlencoded"}
            self.assertEqual(request(port, "GET", task, headers={"Cookie": other})[0], 200)
            self.assertEqual(request(port, "GET", task + "/edit", headers={"Cookie": other})[0], 403)
            for method in ("PATCH", "DELETE"):
                body = urllib.parse.urlencode({"_csrf": other_token, "_method": method, "title": "Taken",
                                               "order": "1", "from": "Eve"})
                self.assertEqual(request(port, "POST", task, body, other_hdrs)[0], 403, method)
            self.assertIn("Water plants", request(port, "GET", task)[2])
            # Other's own task, whatever user_id its form says, is Other's: Crud may not change it.
            body = urllib.parse.urlencode({"_csrf": other_token, "title": "Mine", "order": "2", "from": "O",
                                           "user_id": "1"})
            status, headers, _ = request(port, "POST", "/tasks", body, other_hdrs)
            self.assertEqual(status, 303)
            body = urllib.parse.urlencode({"_csrf": token, "_method": "DELETE"})
            self.assertEqual(request(port, "POST", headers["location"], body, hdrs)[0], 403)
            body = urllib.parse.urlencode({"_csrf": token, "_method": "PATCH", "title": "Watered", "order": "3",
                                           "from": "Ada"})
            self.assertEqual(request(port, "POST", task, body, hdrs)[0], 303)
            self.assertIn("Watered", request(port, "GET", task)[2])
            self.assertEqual(request(port, "POST", task, urllib.parse.urlencode({"_csrf": token, "_method": "DELETE"}),
                                     hdrs)[0], 303)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.assertNotIn("AddressSanitizer", proc.stderr.read().decode(errors="replace"))

    def test_a_scaffold_with_accounts_refuses_a_user_id_field(self):
        # With accounts, user_id is the owner, set from the log-in: a field of that
        # name would be read from the form (anyone could claim another's row).
        r = run_kiln(["generate", "scaffold", "note", "user_id:integer", "text:text"], cwd=self.root)
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("field 'user_id'", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.root, "models", "note.hpp")))

    def test_auth_prints_each_file_and_hooks_the_routes(self):
        r = STATE["auth"]
        self.assertEqual(r.returncode, 0, r.stderr)
        # after the scaffold's 001: the next number, in both folders
        for f in ("db/migrations/002_create_users.sql", "db/migrations/postgresql/002_create_users.sql",
                  "lib/auth.hpp", "lib/auth.cpp", "controllers/accounts_controller.hpp",
                  "controllers/accounts_controller.cpp", "routes/accounts.cpp", "views/accounts/signup.html",
                  "views/accounts/login.html", "views/accounts/password.html", "views/accounts/_nav.html"):
            self.assertIn("create    " + f, r.stdout)
            self.assertTrue(os.path.isfile(os.path.join(self.root, f)), f)
        self.assertFalse(os.path.exists(os.path.join(self.root, "models", "user.hpp")))  # kiln::auth::User is it
        self.assertIn("gives each record an owner", r.stdout)  # and what it does not do for older ones
        self.assertIn("update    app.cpp", r.stdout)
        self.assertIn("update    routes.hpp", r.stdout)
        with open(os.path.join(self.root, "app.cpp")) as f:
            # (the task scaffold, generated after auth, comes next)
            self.assertIn("register_routes_posts(app);\n    register_routes_accounts(app);\n    register_routes_tasks(app);\n"
                          "    // kiln:routes", f.read())
        with open(os.path.join(self.root, "routes.hpp")) as f:
            self.assertIn("void register_routes_accounts(kiln::App& app);", f.read())
        with open(os.path.join(self.root, "db", "migrations", "002_create_users.sql")) as f:
            sql = f.read()
        self.assertIn("CREATE TABLE users", sql)
        self.assertIn("CREATE TABLE auth_failures", sql)
        with open(os.path.join(self.root, "db", "migrations", "postgresql", "002_create_users.sql")) as f:
            self.assertIn("GENERATED BY DEFAULT AS IDENTITY", f.read())
        # the layout is the project's: left alone, the lines to add are printed instead
        with open(os.path.join(self.root, "views", "layouts", "app.html")) as f:
            self.assertEqual(f.read(), STATE["layout"])
        self.assertIn('<%@ render "accounts/_nav" .user = user, .token = token %>', r.stdout)
        self.assertIn("<%@ param std::string_view user = {} %>", r.stdout)
        # and the accounts' routes are the app's
        lines = [" ".join(l.split()) for l in STATE["routes"].stdout.splitlines()]
        for route in ("GET /signup", "POST /signup", "GET /login", "POST /login", "POST /logout",
                      "GET /password", "POST /password"):
            self.assertIn(route, lines)

    def test_accounts_sign_up_log_out_and_log_in(self):
        self.assertEqual(STATE["auth"].returncode, 0, STATE["auth"].stderr)
        self.assertEqual(STATE["routes"].returncode, 0, "the build failed")
        port = harness.free_port()
        env = dict(os.environ, DATABASE_PATH=os.path.join(STATE["tmp"], "accounts.sqlite"))
        proc = subprocess.Popen([os.path.join(self.root, "build", "app", "blog"), "--port", str(port),
                                 "--workers", "1", "--threads", "1"], cwd=self.root, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_until_serving(port, proc)
            # logged out: the password page sends to the log-in page, with where it came from
            status, headers, _ = request(port, "GET", "/password")
            self.assertEqual(status, 303)
            self.assertEqual(headers["location"], "/login?next=%2Fpassword")

            status, headers, form = request(port, "GET", "/signup")
            self.assertEqual(status, 200)
            self.assertIn("<h1>Sign up</h1>", form)
            self.assertIn("<title>Sign up · blog</title>", form)  # in the project's layout
            token, cookie = csrf_of(form), cookie_of(headers)
            fields = {"_csrf": token, "email": "Ann@Example.com", "name": "Ann <b>", "password": "correct horse"}
            self.assertEqual(form_post(port, "/signup", cookie, dict(fields, _csrf=""))[0], 403)
            status, headers, _ = form_post(port, "/signup", cookie, fields)
            self.assertEqual(status, 303, "sign-up failed")
            self.assertEqual(headers["location"], "/")
            cookie = cookie_of(headers, cookie)  # a new session id at log-in

            # logged in: the welcome flash, then a page that needs the log-in
            self.assertIn("Welcome, Ann &lt;b&gt;!", request(port, "GET", "/", headers={"Cookie": cookie})[2])
            status, _, page = request(port, "GET", "/password", headers={"Cookie": cookie})
            self.assertEqual(status, 200)
            self.assertIn("Logged in as <strong>Ann &lt;b&gt;</strong>", page)
            self.assertEqual(request(port, "GET", "/login", headers={"Cookie": cookie})[0], 303)

            # log out: the session ends, the password page is out of reach again
            status, headers, _ = form_post(port, "/logout", cookie, {"_csrf": csrf_of(page)})
            self.assertEqual(status, 303)
            self.assertEqual(request(port, "GET", "/password", headers={"Cookie": cookie})[0], 303)

            # the address is taken now; a short password is refused by field
            status, headers, form = request(port, "GET", "/signup")
            token, cookie = csrf_of(form), cookie_of(headers)
            status, _, page = form_post(port, "/signup", cookie, dict(fields, _csrf=token, email="ann@example.com"))
            self.assertEqual(status, 422)
            self.assertIn("ann@example.com", page)  # what was typed comes back
            self.assertNotIn("correct horse", page)  # never the password
            status, _, page = form_post(port, "/signup", cookie,
                                        dict(fields, _csrf=token, email="bob@example.com", password="short"))
            self.assertEqual(status, 422)
            self.assertIn('class="error"', page)

            # log in: a wrong password is 422 with the form again, the right one goes to next
            status, headers, form = request(port, "GET", "/login?next=/password")
            self.assertEqual(status, 200)
            token, cookie = csrf_of(form), cookie_of(headers, cookie)
            status, _, page = form_post(port, "/login", cookie, {"_csrf": token, "email": "ann@example.com",
                                                                  "password": "wrong horse", "next": "/password"})
            self.assertEqual(status, 422)
            self.assertIn('class="errors"', page)
            self.assertIn('value="ann@example.com"', page)
            status, headers, _ = form_post(port, "/login", cookie, {"_csrf": token, "email": "ANN@example.com",
                                                                     "password": "correct horse", "next": "/password"})
            self.assertEqual(status, 303)
            self.assertEqual(headers["location"], "/password")
            cookie = cookie_of(headers, cookie)
            status, _, page = request(port, "GET", "/password", headers={"Cookie": cookie})
            self.assertEqual(status, 200)
            self.assertEqual(request(port, "GET", "/login", headers={"Cookie": cookie})[0], 303)  # logged in already
            # next never leads off the site (a browser drops the tab: //evil.example/)
            for outside in ("//evil.example/", "/\t/evil.example/"):
                status, headers, _ = form_post(port, "/login", cookie, {"_csrf": csrf_of(page), "email": "ann@example.com",
                                                                         "password": "correct horse", "next": outside})
                self.assertEqual(status, 303, outside)
                self.assertEqual(headers["location"], "/", outside)
                cookie = cookie_of(headers, cookie)
                page = request(port, "GET", "/password", headers={"Cookie": cookie})[2]

            # password change: the current one must be right; then the new one logs in
            status, _, page = request(port, "GET", "/password", headers={"Cookie": cookie})
            self.assertEqual(status, 200)
            change = {"_csrf": csrf_of(page), "current_password": "wrong horse", "password": "battery staple"}
            status, _, page = form_post(port, "/password", cookie, change)
            self.assertEqual(status, 422)
            self.assertIn('class="error"', page)
            status, headers, _ = form_post(port, "/password", cookie, dict(change, current_password="correct horse"))
            self.assertEqual(status, 303)
            cookie = cookie_of(headers, cookie)
            status, _, page = request(port, "GET", "/password", headers={"Cookie": cookie})
            self.assertEqual(status, 200)
            form_post(port, "/logout", cookie, {"_csrf": csrf_of(page)})
            status, headers, form = request(port, "GET", "/login")
            token, cookie = csrf_of(form), cookie_of(headers)
            old = {"_csrf": token, "email": "ann@example.com", "password": "correct horse"}
            self.assertEqual(form_post(port, "/login", cookie, old)[0], 422)
            self.assertEqual(form_post(port, "/login", cookie, dict(old, password="battery staple"))[0], 303)
            # the scaffold next to it still works for everyone
            self.assertEqual(request(port, "GET", "/posts")[0], 200)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        with proc.stderr:
            self.assertNotIn("AddressSanitizer", proc.stderr.read().decode(errors="replace"))

    def test_run_watch_reloads_a_changed_template_under_the_same_supervisor(self):
        self.assertEqual(STATE["routes"].returncode, 0, "the build failed")
        port, proc, output = start_watch(self.root, 1, "watch.sqlite")
        template = os.path.join(self.root, "views", "home", "index.html")
        with open(template) as f:
            original = f.read()
        try:
            deadline = time.time() + BUILD_TIMEOUT
            while not any("serving blog (pid" in l for l in output) and time.time() < deadline:
                self.assertIsNone(proc.poll(), "".join(output))
                time.sleep(0.1)
            supervisor = int(re.search(r"serving blog \(pid (\d+)\)", "".join(output)).group(1))
            self.assertEqual(wait_until_serving(port, proc, output=output)[0], 200)
            workers_before = children_of(supervisor)
            self.assertTrue(workers_before)

            # a template error: the build fails, the old server keeps serving
            with open(template, "w") as f:
                f.write(original + "<% unclosed\n")
            deadline = time.time() + RELOAD_TIMEOUT
            while not any("the build failed" in l for l in output) and time.time() < deadline:
                time.sleep(0.2)
            self.assertTrue(any("keeps running the previous build" in l for l in output), "".join(output))
            self.assertIn("Welcome to blog", request(port, "GET", "/")[2])

            # fixed and changed: new workers serve the new page, same supervisor
            with open(template, "w") as f:
                f.write(original + "<p>watch-marker-7f3a</p>\n")
            self.assertIn("watch-marker-7f3a", page_with(port, "watch-marker-7f3a"), "".join(output))
            self.assertTrue(os.path.exists("/proc/%d" % supervisor))
            self.assertEqual(sum("serving blog (pid" in l for l in output), 1)
            self.assertTrue(any("SIGHUP to pid %d" % supervisor in l for l in output))
            deadline = time.time() + 30
            while children_of(supervisor) & workers_before and time.time() < deadline:
                time.sleep(0.2)
            self.assertFalse(children_of(supervisor) & workers_before, "the old workers are still there")
        finally:
            with open(template, "w") as f:
                f.write(original)
            stop_watch(proc)
        self.assertEqual(proc.returncode, 0, "".join(output))
        self.assertFalse(os.path.exists("/proc/%d" % supervisor), "the server outlived kiln run")

    def test_run_watch_restarts_a_server_without_a_supervisor(self):
        # --workers 0: one process, no supervisor, so SIGHUP ends it (no reload). kiln
        # run then starts the new build; before, nothing served until the next edit.
        self.assertEqual(STATE["routes"].returncode, 0, "the build failed")
        port, proc, output = start_watch(self.root, 0, "watch0.sqlite")
        template = os.path.join(self.root, "views", "home", "index.html")
        with open(template) as f:
            original = f.read()
        try:
            self.assertEqual(wait_until_serving(port, proc, timeout=BUILD_TIMEOUT, output=output)[0], 200)
            with open(template, "w") as f:
                f.write(original + "<p>watch-marker-w0</p>\n")
            self.assertIn("watch-marker-w0", page_with(port, "watch-marker-w0"), "".join(output))
            self.assertTrue(any("has no supervisor (workers = 0): starting the new build" in l for l in output),
                            "".join(output))
        finally:
            with open(template, "w") as f:
                f.write(original)
            stop_watch(proc)
        self.assertEqual(proc.returncode, 0, "".join(output))


class ErrorPaths(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="kiln_generators_err_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_bad_project_names_are_refused(self):
        for bad in ("9lives", "my-app", "class", "a b", "", "kilnc", "kiln"):
            r = run_kiln(["new", bad], cwd=self.tmp)
            self.assertEqual(r.returncode, 2, bad)
            self.assertIn("kiln new:", r.stderr)
        self.assertIn("is not a valid project name", run_kiln(["new", "my-app"], cwd=self.tmp).stderr)
        self.assertEqual(os.listdir(self.tmp), [])

    def test_existing_non_empty_directory_is_refused(self):
        os.makedirs(os.path.join(self.tmp, "shop"))
        with open(os.path.join(self.tmp, "shop", "notes.txt"), "w") as f:
            f.write("mine")
        r = run_kiln(["new", "shop", "--dir", self.tmp], cwd=self.tmp)
        self.assertEqual(r.returncode, 2)
        self.assertIn("exists and is not empty", r.stderr)
        self.assertEqual(os.listdir(os.path.join(self.tmp, "shop")), ["notes.txt"])

    def test_unknown_field_type_and_outside_a_project(self):
        self.assertEqual(run_kiln(["new", "shop", "--dir", self.tmp], cwd=self.tmp).returncode, 0)
        root = os.path.join(self.tmp, "shop")
        r = run_kiln(["generate", "scaffold", "post", "title:strng"], cwd=root)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown type 'strng'", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(root, "models")))
        r = run_kiln(["generate", "scaffold", "post", "title:string"], cwd=self.tmp)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not inside a kiln project", r.stderr)
        r = run_kiln(["generate", "widget", "post"], cwd=root)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown generator 'widget'", r.stderr)
        # Names the generated templates use themselves (the form's action and method,
        # kilnc's kiln_ prefix): refused before anything is written.
        for name in ("method", "action", "kiln_user"):
            r = run_kiln(["generate", "scaffold", name, "title:string"], cwd=root)
            self.assertEqual(r.returncode, 2, name)
            self.assertIn("a name the generated code uses itself", r.stderr, name)
        # A missing option value says so.
        r = run_kiln(["new", "x", "--dir"], cwd=self.tmp)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--dir: missing value", r.stderr)
        r = run_kiln(["run", "--poll-ms"], cwd=root)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--poll-ms: missing value", r.stderr)
        r = run_kiln(["run", "--poll-ms", "100ms"], cwd=root)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--poll-ms must be a number", r.stderr)

    def test_existing_files_need_force_and_migrations_are_numbered(self):
        self.assertEqual(run_kiln(["new", "shop", "--dir", self.tmp], cwd=self.tmp).returncode, 0)
        root = os.path.join(self.tmp, "shop")
        self.assertEqual(run_kiln(["generate", "model", "tag", "name:string"], cwd=root).returncode, 0)
        r = run_kiln(["generate", "scaffold", "product", "name:string", "price:float"], cwd=root)
        self.assertIn("create    db/migrations/002_create_products.sql", r.stdout)
        model = os.path.join(root, "models", "product.hpp")
        with open(model, "a") as f:
            f.write("// my edit\n")
        r = run_kiln(["generate", "scaffold", "product", "name:string", "price:float"], cwd=root)
        self.assertEqual(r.returncode, 2)
        self.assertIn("exists: models/product.hpp", r.stderr)
        with open(model) as f:
            self.assertIn("// my edit", f.read())
        r = run_kiln(["generate", "scaffold", "product", "name:string", "price:float", "--force"], cwd=root)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("force     models/product.hpp", r.stdout)
        self.assertIn("identical db/migrations/002_create_products.sql", r.stdout)
        self.assertNotIn("warning:", r.stdout)
        with open(os.path.join(root, "app.cpp")) as f:
            self.assertEqual(f.read().count("register_routes_products(app);"), 1)
        # Another field with --force rewrites the applied migration: a database that ran
        # it will not run it again, and the run says so.
        r = run_kiln(["generate", "scaffold", "product", "name:string", "price:float", "stock:integer", "--force"],
                     cwd=root)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("warning: db/migrations/002_create_products.sql was rewritten; a database that applied it "
                      "already will not apply it again", r.stdout)
        r = run_kiln(["generate", "controller", "pages", "home", "new"], cwd=root)
        self.assertEqual(r.returncode, 2)
        self.assertIn("action 'new'", r.stderr)

    def test_auth_twice_needs_force_over_edited_files(self):
        self.assertEqual(run_kiln(["new", "shop", "--dir", self.tmp], cwd=self.tmp).returncode, 0)
        root = os.path.join(self.tmp, "shop")
        r = run_kiln(["generate", "auth"], cwd=self.tmp)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not inside a kiln project", r.stderr)
        r = run_kiln(["generate", "auth", "users"], cwd=root)
        self.assertEqual(r.returncode, 2)
        self.assertIn("takes no name", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(root, "lib", "auth.hpp")))

        self.assertEqual(run_kiln(["generate", "model", "tag", "name:string"], cwd=root).returncode, 0)
        r = run_kiln(["generate", "auth"], cwd=root)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("create    db/migrations/002_create_users.sql", r.stdout)
        self.assertIn("create    db/migrations/postgresql/002_create_users.sql", r.stdout)
        self.assertIn("update    app.cpp", r.stdout)

        # files in the way: the user's edit is kept, nothing is written, the run says which
        login = os.path.join(root, "views", "accounts", "login.html")
        with open(login, "a") as f:
            f.write("<p>my edit</p>\n")
        lib = os.path.join(root, "lib", "auth.cpp")
        os.remove(lib)
        r = run_kiln(["generate", "auth"], cwd=root)
        self.assertEqual(r.returncode, 2)
        self.assertIn("exists: views/accounts/login.html", r.stderr)
        self.assertIn("--force", r.stderr)
        self.assertFalse(os.path.exists(lib), "a refused run wrote a file")
        with open(login) as f:
            self.assertIn("my edit", f.read())

        # --force: written again, the same migration (not a new number), one registration
        r = run_kiln(["generate", "auth", "--force"], cwd=root)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("force     views/accounts/login.html", r.stdout)
        self.assertIn("create    lib/auth.cpp", r.stdout)
        self.assertIn("identical db/migrations/002_create_users.sql", r.stdout)
        self.assertIn("identical app.cpp", r.stdout)
        with open(login) as f:
            self.assertNotIn("my edit", f.read())
        with open(os.path.join(root, "app.cpp")) as f:
            self.assertEqual(f.read().count("register_routes_accounts(app);"), 1)
        self.assertEqual(sorted(os.listdir(os.path.join(root, "db", "migrations"))),
                         [".gitkeep", "001_create_tags.sql", "002_create_users.sql", "postgresql"])

        # a later scaffold numbers after the accounts
        r = run_kiln(["generate", "scaffold", "product", "name:string"], cwd=root)
        self.assertIn("create    db/migrations/003_create_products.sql", r.stdout)

    def test_auth_refuses_without_the_route_markers(self):
        self.assertEqual(run_kiln(["new", "shop", "--dir", self.tmp], cwd=self.tmp).returncode, 0)
        root = os.path.join(self.tmp, "shop")
        app_cpp = os.path.join(root, "app.cpp")
        with open(app_cpp) as f:
            text = f.read()
        with open(app_cpp, "w") as f:
            f.write(text.replace("// kiln:routes", "// routes"))
        r = run_kiln(["generate", "auth"], cwd=root)
        self.assertEqual(r.returncode, 2)
        self.assertIn("app.cpp has no '// kiln:routes' line", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(root, "views", "accounts")))


if __name__ == "__main__":
    harness.main()
